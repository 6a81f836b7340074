#!/usr/bin/env python3
"""Bytes at equal quality (issue #32's benchmark): every output of ../shared/corpus/photos at 400×300 cover and
1200 px wide is scored with SSIMULACRA2 (PyPI `ssimulacra2`) against the source resized the same way by a float
Lanczos3 (Pillow on float planes, see common.reference).

S = the median score of thumbor's default JPEG (PIL engine, q80). Ours = webimage-server with q=auto:S per format
(--formats: JPEG, WebP, AVIF and JPEG XL by default). Reported per format: total bytes against
thumbor's JPEG total, the median score, the worst score against S − 3; the same against vipsthumbnail's q80
JPEG; and, with --curves, bytes-versus-score points of fixed qualities (50, 65, 80, 90) for each of our formats,
thumbor's JPEG and vipsthumbnail's.

    .build/bench-service/venv/bin/python scripts/quality/bytes_at_quality.py --server .build/debug/webimage-server
`make bench-service` runs it after the throughput runs (release build, the bench venv).
"""

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from PIL import Image  # noqa: E402

SIZES = {"400x300": (400, 300), "1200w": (1200, 0)}
GOALS = {"jpeg": 0.90, "webp": 0.75, "avif": 0.60, "jxl": 0.65}


def vips_thumbnail(path: Path, size, quality, out: Path) -> bytes:
    w, h = size
    target = out / f"vips-{path.stem}-{w}x{h}.jpg"
    if h:
        args = ["vipsthumbnail", str(path), "-s", f"{w}x{h}", "-m", "centre", "-o", f"{target}[Q={quality}]"]
    else:
        args = ["vipsthumbnail", str(path), "-s", f"{w}x100000", "-o", f"{target}[Q={quality}]"]
    # --crop (8.x spells it -m/--smartcrop centre); vipsthumbnail also applies EXIF orientation and keeps ICC.
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return target.read_bytes()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--server", default=str(common.ROOT / ".build/debug/webimage-server"))
    p.add_argument("--corpus", default=str(common.ROOT.parent / "shared/corpus/photos"))
    p.add_argument("--venv", default=".build/bench-service/venv")
    p.add_argument("--work", default=str(common.ROOT / ".build/quality"))
    p.add_argument("--formats", nargs="*", default=["jpeg", "webp", "avif", "jxl"])
    p.add_argument("--sizes", nargs="*", default=list(SIZES))
    p.add_argument("--files", nargs="*")
    p.add_argument("--curves", action="store_true", help="also fixed-quality bytes-vs-score points (slow)")
    p.add_argument("--peers", nargs="*", default=["thumbor", "vips"], help="thumbor and/or vips")
    p.add_argument("--ours-args", default="", help='extra webimage-server arguments, e.g. "--encode-effort smallest"')
    p.add_argument("--target", type=float, help="S for thumbor (default: the median of its scores over --files; set it "
                                                "when re-running a few files of a whole-corpus run)")
    p.add_argument("--output", help="write the Markdown report here too")
    p.add_argument("--json", help="write the raw numbers here")
    args = p.parse_args()

    corpus = Path(args.corpus)
    if not corpus.is_dir():
        print(f"no corpus at {corpus}: skipped", file=sys.stderr)
        return 0
    work = Path(args.work) / "bytes"
    work.mkdir(parents=True, exist_ok=True)
    files = sorted(f.name for f in corpus.iterdir() if f.suffix.lower() in (".png", ".jpg", ".jpeg"))
    if args.files:
        files = [f for f in files if f in args.files]

    origin = common.serve_directory(corpus)
    thumbor, tport = common.start_thumbor(work, Path(args.venv))
    ours, oport = common.start_ours(work, Path(args.server), extra=shlex.split(args.ours_args))
    scratch = Path(tempfile.mkdtemp(dir=work))
    report = {}
    try:
        for label in args.sizes:
            size = SIZES[label]
            cases = []
            refs_thumbor = {}
            for name in files:
                source = common.to_srgb_rgba(Image.open(corpus / name))
                if size[1] == 0 and source.size[0] <= size[0]:
                    continue
                # As in resize_quality.py: each peer against the float resize of its own decode, in its own crop
                # geometry (ours: our full-size decode; thumbor: Pillow's, cropped first).
                try:
                    decoded = common.decode(common.fetch(f"http://127.0.0.1:{oport}/image?url=http://127.0.0.1:{origin}/{name}&format=png"))
                except Exception:
                    decoded = source
                # JPEG output of a transparent source is scored against what JPEG holds (common.jpeg_reference);
                # formats with alpha against the grey composite.
                cases.append((name, {"alpha": common.reference(decoded, size), "jpeg": common.jpeg_reference(decoded, size)}))
                refs_thumbor[name] = common.jpeg_reference(source, size, geometry="thumbor")
            rows = {}

            def scored(data):
                img = common.flatten(common.decode(data))
                return img

            # Thumbor's default JPEG and vipsthumbnail's q80, per file (kept in --work and reused: the peers'
            # outputs do not change between runs of ours).
            peer_cache = work / f"peer-rows-{label}.json"
            cached = json.loads(peer_cache.read_text()) if peer_cache.exists() else {}
            for name, ref in cases:
                if name in cached and ("vips" not in args.peers or cached[name]["vips"][1] is not None):
                    rows[name] = {k: tuple(v) for k, v in cached[name].items()}
                    continue
                # format(jpeg): without it thumbor keeps a PNG source's format.
                t = common.fetch(f"http://127.0.0.1:{tport}" + common.thumbor_path(size, name, origin, fmt="jpeg"))
                ti = scored(t)
                tref = refs_thumbor[name]
                rows[name] = {"thumbor": (len(t), common.score(tref, ti, scratch) if ti.shape == tref.shape else None),
                              "vips": (0, None)}
                if "vips" in args.peers:
                    v = vips_thumbnail(corpus / name, size, 80, scratch)
                    vi = scored(v)
                    rows[name]["vips"] = (len(v), common.score(ref["jpeg"], vi, scratch) if vi.shape == ref["jpeg"].shape else None)
                print(f"{label} {name}: thumbor {rows[name]['thumbor']}, vips {rows[name]['vips']}", file=sys.stderr, flush=True)
                peer_cache.write_text(json.dumps(rows))
            s = args.target or statistics.median(r["thumbor"][1] for r in rows.values() if r["thumbor"][1] is not None)
            vips_scores = [r["vips"][1] for r in rows.values() if r["vips"][1] is not None]
            s_vips = statistics.median(vips_scores) if vips_scores else s
            for fmt in args.formats:
                for peer, target in (("thumbor", s), ("vips", s_vips)):
                    if peer not in args.peers:
                        continue
                    if peer == "vips" and abs(s_vips - s) < 0.05 and "thumbor" in args.peers:
                        for name in rows:
                            rows[name][f"ours-{fmt}-vips"] = rows[name][f"ours-{fmt}-thumbor"]
                        continue
                    for name, ref in cases:
                        data = common.fetch(f"http://127.0.0.1:{oport}" + common.ours_path(size, name, origin, fmt, f"auto:{target:.2f}"))
                        rows[name][f"ours-{fmt}-{peer}"] = (len(data), common.score(ref["jpeg" if fmt == "jpeg" else "alpha"],
                                                                                    scored(data), scratch))
                        print(f"{label} {name}: ours {fmt} for {peer} {rows[name][f'ours-{fmt}-{peer}']}", file=sys.stderr, flush=True)
            curves = {}
            if args.curves:
                # Every format of ours asked for, thumbor's JPEG and (with the vips peer) vipsthumbnail's.
                encoders = [(fmt, "ours") for fmt in args.formats] + [("jpeg", "thumbor")]
                encoders += [("jpeg", "vips")] if "vips" in args.peers else []
                for fmt, peer in encoders:
                    for q in (50, 65, 80, 90):
                        total, scores = 0, []
                        for name, ref in cases:
                            if peer == "ours":
                                data = common.fetch(f"http://127.0.0.1:{oport}" + common.ours_path(size, name, origin, fmt, q))
                            elif peer == "vips":
                                data = vips_thumbnail(corpus / name, size, q, scratch)
                            else:
                                data = common.fetch(f"http://127.0.0.1:{tport}" + common.thumbor_path(size, name, origin, fmt="jpeg", quality=q))
                            total += len(data)
                            scores.append(common.score(refs_thumbor[name] if peer == "thumbor"
                                                       else ref["jpeg" if fmt == "jpeg" else "alpha"], scored(data), scratch))
                        curves.setdefault(f"{peer} {fmt}", []).append((q, total, statistics.median(scores)))
            report[label] = {"S": s, "S_vips": s_vips, "rows": rows, "curves": curves}
    finally:
        for proc in (thumbor, ours):
            proc.terminate()
            proc.wait()

    lines = []
    for label, r in report.items():
        rows = r["rows"]
        for peer, s in (("thumbor", r["S"]), ("vips", r["S_vips"])):
            if peer not in args.peers:
                continue
            base = sum(v[peer][0] for v in rows.values())
            lines += [f"### {label}: against {'thumbor 7.8 (PIL) q80' if peer == 'thumbor' else 'vipsthumbnail q80'} "
                      f"JPEG — S = median score {s:.2f}, {len(rows)} files", "",
                      "| output | total bytes | × peer's JPEG total | goal | median score | worst score | files under S − 3 |",
                      "|---|---:|---:|---:|---:|---:|---:|"]
            scores = [v[peer][1] for v in rows.values() if v[peer][1] is not None]
            lines.append(f"| {peer} JPEG q80 | {base} | 1.00 | | {statistics.median(scores):.2f} | {min(scores):.2f} | "
                         f"{sum(x < s - 3 for x in scores)} |")
            for fmt in args.formats:
                key = f"ours-{fmt}-{peer}"
                total = sum(v[key][0] for v in rows.values())
                sc = [v[key][1] for v in rows.values()]
                goal = f"≤ {GOALS.get(fmt, 1):.2f}" if peer == "thumbor" else ""
                lines.append(f"| ours {fmt} q=auto:{s:.1f} | {total} | {total / base:.3f} | {goal} | {statistics.median(sc):.2f} | "
                             f"{min(sc):.2f} | {sum(x < s - 3 for x in sc)} |")
            lines.append("")
        if r["curves"]:
            lines += [f"### {label}: bytes against score at fixed qualities", "", "| encoder | q | total bytes | median score |",
                      "|---|---:|---:|---:|"]
            for name, points in r["curves"].items():
                for q, total, med in points:
                    lines.append(f"| {name} | {q} | {total} | {med:.2f} |")
            lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
