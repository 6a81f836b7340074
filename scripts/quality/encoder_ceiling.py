#!/usr/bin/env python3
"""The most an encoder setting can save at equal SSIMULACRA2: each corpus file's float Lanczos3 reference at
400×300 (`common.reference`, our crop geometry, alpha on grey) written as PNG and given to the encoder directly (an
ideal resize), its quantizer (avifenc) or distance (cjxl) bisected to the pair bracketing S, the bytes at S
interpolated in log bytes between them (an ideal quality search: no real encode lands exactly on S), summed over the
files and divided by thumbor's q80 JPEG total over the same files (`--peer-rows`, bytes_at_quality.py's cache).
Decoded by avifdec / djxl, scored by the PyPI `ssimulacra2` against the reference. A file that never reaches S
counts its best point (reported).

    python scripts/quality/encoder_ceiling.py OUT --peer-rows W/bytes/peer-rows-400x300.json \
        --settings '{"avif-s8": ["avif", "-s", "8"], "avif-s4": ["avif", "-s", "4"], "jxl-e7": ["jxl", "-e", "7"]}'
    python scripts/quality/encoder_ceiling.py OUT --peer-rows … --settings '{}'   # the table of what OUT holds
    python scripts/quality/encoder_ceiling.py OUT --peer-rows … --opaque-only --ours bytes.json   # make bench-service

AVIF is always 4:4:4 (`-y 444`, as `AVIFEncoder`), one thread (`-j 1`). Resumes from OUT/results.jsonl.
"""
import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

CORPUS = Path(os.environ.get("WEBIMAGE_CORPUS", common.ROOT.parent / "shared" / "corpus")) / "photos"
# What webimage-server's efforts write (`AVIFEncoder.speed(for:)`, `AVIFEncoder.libaomOptions(for:)`,
# `JXLEncoder.lossyEffort(for:)`): `balanced` and `smallest`.
LIBAOM_OPTIONS = ["use-intra-dct-only=1", "enable-cdef=1", "enable-smooth-intra=0", "enable-paeth-intra=0",
                  "enable-filter-intra=0", "enable-intra-edge-filter=0", "coeff-cost-upd-freq=3", "mode-cost-upd-freq=3"]
DEFAULT_SETTINGS = {
    "avif-s8-libaom-options (balanced)": ["avif", "-s", "8", *[a for o in LIBAOM_OPTIONS for a in ("-a", o)]],
    "avif-s6 (smallest)": ["avif", "-s", "6"],
    # Not offered by the server (0.71 s of CPU a 400×300 encode, 21× speed 8's): the speed the 0.60 goal needs.
    "avif-s4 (the goal's ceiling)": ["avif", "-s", "4"],
    "jxl-e5 (balanced)": ["jxl", "-e", "5"],
    "jxl-e6 (smallest)": ["jxl", "-e", "6"],
}


def encode_and_score(kind, args, reference: Path, param, scratch: Path):
    """(bytes, score) of `reference` encoded at `param` (AVIF quantizer, WebP quality or JPEG XL distance)."""
    if kind == "avif":
        out, png = scratch / "x.avif", scratch / "x.png"
        subprocess.run(["avifenc", "-j", "1", "-y", "444", "--min", str(param), "--max", str(param), *args,
                        str(reference), str(out)], capture_output=True, check=True)
        subprocess.run(["avifdec", str(out), str(png)], capture_output=True, check=True)
    elif kind == "webp":
        out, png = scratch / "x.webp", scratch / "x.png"
        subprocess.run(["cwebp", "-quiet", "-q", str(param), *args, str(reference), "-o", str(out)],
                       capture_output=True, check=True)
        subprocess.run(["dwebp", "-quiet", str(out), "-o", str(png)], capture_output=True, check=True)
    else:
        out, png = scratch / "x.jxl", scratch / "x.png"
        subprocess.run(["cjxl", "--num_threads", "0", "-d", f"{param:.4f}", *args, str(reference), str(out)],
                       capture_output=True, check=True)
        subprocess.run(["djxl", str(out), str(png), "--num_threads", "0"], capture_output=True, check=True)
    from ssimulacra2 import compute_ssimulacra2
    return out.stat().st_size, float(compute_ssimulacra2(str(reference), str(png)))


def bracket(kind, evaluate, target):
    """The points tried, bisecting until a pair brackets `target` tightly: AVIF adjacent quantizers, WebP adjacent
    qualities; JPEG XL distances within 2 % of each other."""
    points = {}

    def at(p):
        if p not in points:
            points[p] = evaluate(p)
        return points[p]

    if kind in ("avif", "webp"):
        # AVIF's quantizer: 0 is finest (highest score); WebP's quality: 100 is finest.
        good, bad = (0, 63) if kind == "avif" else (100, 0)
        if at(good)[1] < target or at(bad)[1] >= target:
            return points
        while abs(bad - good) > 1:
            mid = (good + bad) // 2
            if at(mid)[1] >= target:
                good = mid
            else:
                bad = mid
        return points
    lo, hi = math.log(0.1), math.log(15.0)  # log distance: lower is finer
    if at(round(math.exp(lo), 4))[1] < target or at(round(math.exp(hi), 4))[1] >= target:
        return points
    while hi - lo > 0.02:
        mid = (lo + hi) / 2
        if at(round(math.exp(mid), 4))[1] >= target:
            lo = mid
        else:
            hi = mid
    return points


def bytes_at(points, target):
    """Bytes at `target` between the bracketing pair (log bytes, linear in score); (best point's bytes, True) when
    nothing brackets it."""
    pts = sorted(points.values(), key=lambda p: p[1])
    for (b1, s1), (b2, s2) in zip(pts, pts[1:]):
        if s1 <= target <= s2:
            t = (target - s1) / (s2 - s1) if s2 > s1 else 0
            return math.exp(math.log(b1) + t * (math.log(b2) - math.log(b1))), False
    return max(pts, key=lambda p: p[1])[0], True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--settings", help='JSON: {"name": ["avif", "webp" or "jxl", encoder args…]}; default: the efforts '
                   'webimage-server offers (DEFAULT_SETTINGS); "{}" only prints what OUT holds')
    p.add_argument("--peer-rows", required=True, help="bytes_at_quality.py's peer-rows-400x300.json (thumbor's bytes, S)")
    p.add_argument("--target", type=float, help="S (default: the median of thumbor's scores in --peer-rows)")
    p.add_argument("--files", nargs="*")
    p.add_argument("--size", default="400x300", choices=["400x300", "1200w"],
                   help="the output size (400×300 crop or 1200 px wide, as bytes_at_quality.py); one size per OUT")
    p.add_argument("--ours", help="bytes_at_quality.py's --json: our q=auto rows on the same files, for comparison")
    p.add_argument("--opaque-only", action="store_true",
                   help="skip sources with alpha: the reference is opaque (on grey), where our AVIF and WebP carry alpha")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    peers = json.loads(Path(args.peer_rows).read_text())
    target = args.target or float(np.median([r["thumbor"][1] for r in peers.values()]))
    files = args.files or sorted(peers)
    if args.opaque_only:
        files = [n for n in files if not common.has_alpha(common.to_srgb_rgba(Image.open(CORPUS / n)))]
    results = out / "results.jsonl"
    cache = {}
    if results.exists():
        for r in map(json.loads, open(results)):
            cache[(r["setting"], r["file"], r["param"])] = (r["bytes"], r["score"])
    settings = DEFAULT_SETTINGS if args.settings is None else json.loads(args.settings)
    for name in files:
        reference = out / f"{name}.ref.png"
        if not reference.exists() and settings:
            source = common.to_srgb_rgba(Image.open(CORPUS / name))
            size = (400, 300) if args.size == "400x300" else (1200, 0)
            Image.fromarray(common.reference(source, size).astype(np.uint8)).save(reference)
        for setting, (kind, *extra) in settings.items():
            def evaluate(param, setting=setting, kind=kind, extra=extra, reference=reference, name=name):
                key = (setting, name, param)
                if key not in cache:
                    cache[key] = encode_and_score(kind, extra, reference, param, out)
                    with open(results, "a") as f:
                        f.write(json.dumps({"setting": setting, "file": name, "param": param, "bytes": cache[key][0],
                                            "score": cache[key][1]}) + "\n")
                return cache[key]
            bracket(kind, evaluate, target)
        print("done", name, file=sys.stderr, flush=True)
    by = {}
    for (setting, name, param), value in cache.items():
        if name in files:
            by.setdefault(setting, {}).setdefault(name, {})[param] = value
    thumbor_total = sum(peers[n]["thumbor"][0] for n in files)
    print(f"S = {target:.2f}, {len(files)} files, thumbor's JPEG total {thumbor_total} B\n")
    print("| setting | files | bytes at S | × thumbor's JPEG | files never reaching S |\n|---|---:|---:|---:|---:|")
    for setting, per_file in sorted(by.items()):
        values = [bytes_at(points, target) for points in per_file.values()]
        total = sum(v[0] for v in values)
        print(f"| {setting} | {len(per_file)} | {total:.0f} | {total / thumbor_total:.3f} | {sum(v[1] for v in values)} |")
    if args.ours:
        report = json.loads(Path(args.ours).read_text())
        rows = report.get(args.size, next(iter(report.values())))["rows"]
        for fmt in ("jpeg", "webp", "avif", "jxl"):
            key = f"ours-{fmt}-thumbor"
            if all(key in rows.get(n, {}) for n in files):
                total = sum(rows[n][key][0] for n in files)
                print(f"| ours {fmt} q=auto:{target:.1f} (webimage-server) | {len(files)} | {total} | "
                      f"{total / thumbor_total:.3f} | |")


if __name__ == "__main__":
    if not CORPUS.is_dir():
        sys.exit(f"no corpus at {CORPUS} (set WEBIMAGE_CORPUS)")
    main()
