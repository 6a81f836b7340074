#!/usr/bin/env python3
"""libaom's codec-specific options for AVIF, by bytes at equal SSIMULACRA2 (docs/quality.md, "AVIF at speed 8 with
libaom's options"). The 14 files of that section, each the float Lanczos3 reference at 400×300 written as PNG,
encoded by `avifenc -j 1 --min Q --max Q <args>` at the four quantizers around S of each file, decoded by
`avifdec`, scored by the PyPI `ssimulacra2`; bytes at S interpolated in log bytes between the bracketing pair and
summed. CPU: `getrusage(RUSAGE_CHILDREN)` around each avifenc call only (process start-up included; noisy on a
shared machine: the instruction counts of scripts/quality/avif_encode_cost.c are the stable measure).

    python scripts/quality/avif_codec_options.py OUT '{"s8": ["-s","8"], "s8_dct": ["-s","8","-a","use-intra-dct-only=1"]}'
    python scripts/quality/avif_codec_options.py OUT --table
Runs one encode at a time; resumes from OUT/results.jsonl.
"""
import collections
import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

S = 76.14  # thumbor's median score (docs/quality.md)
CORPUS = Path(os.environ.get("WEBIMAGE_CORPUS", common.ROOT.parent / "shared" / "corpus")) / "photos"
# The quantizers around S at speed 8, 4:4:4 (the interpolation only uses the bracketing pair).
QUANTIZERS = {
    "kodak_05.png": [22, 26, 30, 36], "kodak_23.png": [18, 22, 26, 30], "kodak_14.png": [18, 22, 26, 30],
    "elementary_Ashim_DSilva.jpg": [18, 22, 26, 30], "elementary_Morskie_Oko.jpg": [10, 14, 18, 22],
    "kdewallpapers_PastelHills_3200x2000.jpg": [14, 18, 22, 26],
    "kdewallpapers_OneStandsOut_2560x1600.jpg": [22, 26, 30, 36],
    "skimage_astronaut.png": [22, 26, 30, 36], "jxltestdata_tmshre_riaphotographs_srgb8.png": [22, 26, 30, 36],
    "thumbor_800px-Katherine_Maher.jpg": [18, 22, 26, 30], "chartjs_overlapping.png": [26, 30, 36, 44],
    "libvips_Memtrace.png": [26, 30, 36, 44], "libavif_weld_16bit.png": [14, 18, 22, 26],
    "imagepng_lorem_ipsum_screenshot.png": [26, 30, 36, 44],
}


def bytes_at_s(points):
    """Bytes at S between the bracketing points; (bytes of the best point, True) when no pair brackets S."""
    pts = sorted(points, key=lambda p: p[2])
    for (_, b1, s1), (_, b2, s2) in zip(pts, pts[1:]):
        if s1 <= S <= s2:
            t = (S - s1) / (s2 - s1) if s2 > s1 else 0
            return math.exp(math.log(b1) + t * (math.log(b2) - math.log(b1))), False
    best = max(pts, key=lambda p: p[2])
    return best[1], True


def table(out: Path):
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    cpu = collections.defaultdict(list)
    for line in open(out / "results.jsonl"):
        r = json.loads(line)
        by[r["setting"]][r["file"]].append((r["q"], r["bytes"], r["score"]))
        cpu[r["setting"]].append(r["cpu"])
    totals = {}
    for setting, files in by.items():
        values = [bytes_at_s(p) for p in files.values()]
        totals[setting] = (sum(v[0] for v in values), sum(v[1] for v in values), len(files))
    base = totals.get("s8", next(iter(totals.values())))[0]
    print("| setting | files | bytes at S | × s8 | avifenc CPU per encode |\n|---|---:|---:|---:|---:|")
    for setting, (total, misses, n) in sorted(totals.items(), key=lambda kv: kv[1][0]):
        mark = f" ({misses} never bracket S)" if misses else ""
        ms = sum(cpu[setting]) / len(cpu[setting]) * 1000
        print(f"| {setting} | {n} | {total / 1000:.1f} KB{mark} | {total / base:.3f} | {ms:.0f} ms |")


def run(out: Path, settings: dict):
    results = out / "results.jsonl"
    done = set()
    if results.exists():
        done = {(r["setting"], r["file"], r["q"]) for r in map(json.loads, open(results))}
    for name in QUANTIZERS:
        reference = out / f"{name}.ref.png"
        if not reference.exists():
            source = common.to_srgb_rgba(Image.open(CORPUS / name))
            Image.fromarray(common.reference(source, (400, 300)).astype(np.uint8)).save(reference)
    for setting, args in settings.items():
        for name, quantizers in QUANTIZERS.items():
            reference = out / f"{name}.ref.png"
            for q in quantizers:
                if (setting, name, q) in done:
                    continue
                avif, png = out / f"{name}.{setting}.{q}.avif", out / f"{name}.{setting}.{q}.png"
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run(["avifenc", "-j", "1", "--min", str(q), "--max", str(q), *args, str(reference), str(avif)],
                               capture_output=True, check=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                subprocess.run(["avifdec", str(avif), str(png)], capture_output=True, check=True)
                score = _score(reference, png)
                size = avif.stat().st_size
                avif.unlink()
                png.unlink()
                with open(results, "a") as f:
                    f.write(json.dumps({"setting": setting, "file": name, "q": q, "bytes": size, "score": score,
                                        "cpu": cpu}) + "\n")
        print("done", setting, flush=True)


def _score(reference: Path, distorted: Path) -> float:
    from ssimulacra2 import compute_ssimulacra2
    return float(compute_ssimulacra2(str(reference), str(distorted)))


if __name__ == "__main__":
    if not CORPUS.is_dir():
        sys.exit(f"no corpus at {CORPUS} (set WEBIMAGE_CORPUS)")
    directory = Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    if sys.argv[2:] == ["--table"]:
        table(directory)
    else:
        run(directory, json.loads(sys.argv[2]))
