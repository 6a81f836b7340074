#!/usr/bin/env python3
"""Resize quality: webimage-server's lossless PNG output and thumbor's (PIL engine) against a float Lanczos3
reference (Pillow, on float planes of premultiplied RGBA; each peer against the float resize of its own decode in
its own crop geometry), scored by SSIMULACRA2 (PyPI `ssimulacra2`), for every file of
../shared/corpus/photos at 400×300 cover and at 1200 px wide (files at most 1200 px wide are skipped there:
that would be an enlargement, not the shrink this measures).

Run with the tools venv (thumbor 7.8, ssimulacra2, Pillow):
    .build/bench-service/venv/bin/python scripts/quality/resize_quality.py --server .build/debug/webimage-server
Writes a Markdown table (stdout and --output). Thumbor's outputs and the references are kept in --work and
reused on the next run (`--fresh` to redo them).
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from PIL import Image  # noqa: E402

SIZES = {"400x300": (400, 300), "1200w": (1200, 0)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--server", default=str(common.ROOT / ".build/debug/webimage-server"))
    p.add_argument("--corpus", default=str(common.ROOT.parent / "shared/corpus/photos"))
    p.add_argument("--venv", default=".build/bench-service/venv")
    p.add_argument("--work", default=str(common.ROOT / ".build/quality"))
    p.add_argument("--files", nargs="*", help="only these file names")
    p.add_argument("--sizes", nargs="*", default=list(SIZES))
    p.add_argument("--no-thumbor", action="store_true")
    p.add_argument("--fresh", action="store_true")
    p.add_argument("--output", help="write the Markdown table here too")
    args = p.parse_args()

    corpus = Path(args.corpus)
    if not corpus.is_dir():
        print(f"no corpus at {corpus}: skipped (set --corpus)", file=sys.stderr)
        return 0
    work = Path(args.work)
    (work / "resize").mkdir(parents=True, exist_ok=True)
    cache_path = work / "resize" / "peer-scores.json"
    cache = {} if args.fresh or not cache_path.exists() else json.loads(cache_path.read_text())
    files = sorted(f.name for f in corpus.iterdir() if f.suffix.lower() in (".png", ".jpg", ".jpeg"))
    if args.files:
        files = [f for f in files if f in args.files]

    origin = common.serve_directory(corpus)
    procs = []
    ours_proc, ours_port = common.start_ours(work, Path(args.server))
    procs.append(ours_proc)
    thumbor_port = None
    try:
        rows = []
        for name in files:
            source = common.to_srgb_rgba(Image.open(corpus / name))
            for label in args.sizes:
                size = SIZES[label]
                if size[1] == 0 and source.size[0] <= size[0]:
                    continue
                key = f"{name}|{label}"
                # Each output against the float resize of the pixels its own decoder made (ours: our full-size
                # decode, colour-managed to sRGB; thumbor: Pillow's, ICC-converted), each in its own crop
                # geometry: the resize is what is compared, not colour handling or crop rounding.
                try:
                    decoded = common.decode(common.fetch(f"http://127.0.0.1:{ours_port}/image?url=http://127.0.0.1:{origin}/{name}&format=png"))
                except Exception:
                    decoded = source  # over the server's output limit at full size: Pillow's decode
                ref = common.reference(decoded, size)
                ours = common.flatten(common.decode(common.fetch(
                    f"http://127.0.0.1:{ours_port}" + common.ours_path(size, name, origin, "png"))))
                ours_score = common.score(ref, ours, work)
                theirs = cache.get(key)
                if theirs is None and not args.no_thumbor:
                    if thumbor_port is None:
                        proc, thumbor_port = common.start_thumbor(work, Path(args.venv))
                        procs.append(proc)
                    t = common.flatten(common.decode(common.fetch(
                        f"http://127.0.0.1:{thumbor_port}" + common.thumbor_path(size, name, origin, fmt="png"))))
                    tref = common.reference(source, size, geometry="thumbor")
                    theirs = common.score(tref, t, work) if t.shape == tref.shape else None
                    cache[key] = theirs
                    cache_path.write_text(json.dumps(cache, indent=1))
                rows.append((name, label, ours_score, theirs))
                print(f"{name:60s} {label:8s} ours {ours_score:6.2f}  thumbor {theirs if theirs is None else round(theirs, 2)}",
                      file=sys.stderr, flush=True)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()

    lines = ["| file | size | ours (PNG) | thumbor (PNG) | ours − thumbor |", "|---|---|---:|---:|---:|"]
    worse = 0
    for name, label, o, t in rows:
        d = "" if t is None else f"{o - t:+.2f}"
        worse += t is not None and o < t
        lines.append(f"| {name} | {label} | {o:.2f} | {'—' if t is None else f'{t:.2f}'} | {d} |")
    for label in args.sizes:
        sel = [r for r in rows if r[1] == label]
        if sel:
            mo = sorted(r[2] for r in sel)[len(sel) // 2]
            ts = sorted(r[3] for r in sel if r[3] is not None)
            lines.append(f"| **median** | {label} | {mo:.2f} | {ts[len(ts) // 2] if ts else float('nan'):.2f} | |")
    lines.append(f"\nFiles where ours scores below thumbor: {worse} of {sum(r[3] is not None for r in rows)}.")
    table = "\n".join(lines)
    print(table)
    if args.output:
        Path(args.output).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
