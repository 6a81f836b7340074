#!/usr/bin/env python3
"""Fits automatic quality's predictor (Sources/ImageCodec/Quality/QualityModel+Coefficients.swift) on the corpus.

Input: the two CSVs of the benchmark suite `quality-fit` (`cd Benchmarks && swift run -c release WebImageBench
--only quality-fit`): per photo its QualityFeatures, and per photo, encoding (jpeg420, jpeg444, webp) and quality
10..100 (step 2) the bytes and SSIMULACRA2 score (our metric, against the 400 px thumbnail).

A third of the photos (every third by name) fits, the other two thirds validate. For each encoding, the lowest
quality reaching each target (55..85) is regressed (least squares) on a subset of the features
(QualityFeatures.inputs; the subsets were chosen by validation error over every subset, see docs/quality.md);
two margins are added to the prediction: the fit residuals' median (the scored search's start) and their 80th
percentile (the unscored mode). The script then replays the unscored mode on the validation photos against the
measured curves and prints its miss rate, worst shortfall and bytes against the lowest passing quality (what an
exhaustive search would pick).

Usage: fit_quality_model.py [DIR]   (DIR holds quality-fit-*.csv; default .build). Prints the Swift table.
"""
import csv
import math
import sys
from collections import defaultdict

import numpy as np

DIR = sys.argv[1] if len(sys.argv) > 1 else ".build"
TARGETS = [55, 60, 65, 70, 75, 80, 85]
ENCODINGS = ["jpeg420", "jpeg444", "webp"]
MARGIN_QUANTILE = 80
START_QUANTILE = 50
# The inputs each encoding's model uses (indices into QualityFeatures.inputs): the subsets with the lowest
# validation error (more inputs over-fitted: 9 inputs gave 13.8 RMS on validation against 10.8 with these).
SUBSETS = {"jpeg420": [0, 1, 4, 7], "jpeg444": [0, 1, 4, 7], "webp": [0, 1, 2, 4, 5, 6, 7]}
# The fallback's bytes are not in the curves: count them as the q100 bytes (an underestimate, noted).


def load():
    features = {}
    with open(f"{DIR}/quality-fit-features.csv") as f:
        for row in csv.DictReader(f):
            features[row["name"]] = {k: float(v) for k, v in row.items() if k != "name"}
    curves = defaultdict(dict)  # (name, encoding) -> {q: (bytes, score)}
    with open(f"{DIR}/quality-fit-curves.csv") as f:
        for row in csv.DictReader(f):
            curves[(row["name"], row["format"])][int(row["quality"])] = (int(row["bytes"]), float(row["score"]))
    return features, curves


def inputs(f, target):
    """QualityFeatures.inputs(target:) — keep in the same order."""
    t = (target - 70) / 10
    lg = math.log(1 + f["luma_gradient"])
    return [1, t, t * t, lg, f["flat_fraction"], f["edge_fraction"], math.log(1 + f["chroma_gradient"]),
            math.log(1 + f["chroma_loss"]), t * lg]


def lowest_passing(curve, target):
    for q in sorted(curve):
        if curve[q][1] >= target:
            return q
    return None


def at(curve, q):
    """The measured point at q (the grid is even: q rounds up to the next measured quality)."""
    q = min(100, max(10, q))
    for g in sorted(curve):
        if g >= q:
            return g, curve[g]
    return 100, curve[100]


def fit(names, features, curves, encoding):
    X, y = [], []
    for n in names:
        for t in TARGETS:
            q = lowest_passing(curves[(n, encoding)], t)
            if q is None:
                continue
            X.append(inputs(features[n], t))
            y.append(q)
    X, y = np.array(X)[:, SUBSETS[encoding]], np.array(y, dtype=float)
    sub, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ sub
    coef = np.zeros(9)
    coef[SUBSETS[encoding]] = sub
    margins = (float(np.percentile(residual, START_QUANTILE)), float(np.percentile(residual, MARGIN_QUANTILE)))
    return coef, margins, float(np.sqrt(np.mean(residual ** 2)))


def fit_ceiling(names, features, curves):
    """WebP's best score (q100 lossy) from the features: lossy WebP is skipped when the target is above it."""
    X = np.array([inputs(features[n], 70) for n in names])
    y = np.array([curves[(n, "webp")][100][1] for n in names])
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ coef
    return coef, float(np.sqrt(np.mean(residual ** 2)))


def fit_chroma(names, features, curves):
    """log(bytes 4:4:4 / bytes 4:2:0) at each encoding's lowest passing quality; 4:4:4 when predicted < 0."""
    X, y = [], []
    for n in names:
        for t in TARGETS:
            q4, q2 = lowest_passing(curves[(n, "jpeg444")], t), lowest_passing(curves[(n, "jpeg420")], t)
            if q4 is None:
                continue
            b4 = curves[(n, "jpeg444")][q4][0]
            b2 = curves[(n, "jpeg420")][q2][0] if q2 is not None else b4 * 1.5
            X.append(inputs(features[n], t))
            y.append(math.log(b4 / b2))
    coef, *_ = np.linalg.lstsq(np.array(X), np.array(y), rcond=None)
    return coef


SLOPES = {  # qualities per point of score near the target (AutomaticQuality.Model's slope), per encoding
    "jpeg420": 1.85, "jpeg444": 1.7, "webp": 1.95,
}


def replay(names, features, curves, models, ceiling, chroma, scored_tries):
    stats = defaultdict(lambda: defaultdict(float))
    for n in names:
        f = features[n]
        for t in TARGETS:
            x = np.array(inputs(f, t))
            for fmt in ["jpeg", "webp"]:
                s = stats[(fmt, t)]
                s["images"] += 1
                if fmt == "jpeg":
                    enc = "jpeg444" if (t >= 85 or x @ chroma < 0) else "jpeg420"
                    ideal = min((curves[(n, e)][q][0] for e in ["jpeg420", "jpeg444"]
                                 for q in [lowest_passing(curves[(n, e)], t)] if q is not None), default=None)
                else:
                    enc = "webp"
                    q = lowest_passing(curves[(n, "webp")], t)
                    ideal = curves[(n, "webp")][q][0] if q is not None else None
                    if x @ ceiling < t + 1:
                        s["lossless"] += 1
                        s["unreachable_ideal" if ideal is None else "lossless_but_reachable"] += 1
                        continue
                coef, (_, margin) = models[enc]
                curve = curves[(n, enc)]
                q0 = int(math.ceil(x @ coef + margin))
                tries, chosen = 0, None
                q = q0
                g, (b, sc) = at(curve, q)
                # The unscored mode: the prediction, as is.
                s["unscored_miss"] += sc < t
                s["unscored_worst"] = max(s["unscored_worst"], t - sc)
                s["unscored_bytes"] += b
                for k in range(scored_tries):
                    g, (b, sc) = at(curve, q)
                    tries += 1
                    if sc >= t:
                        chosen = (g, b)
                        break
                    q = g + int(math.ceil(SLOPES[enc] * (t - sc) + SLOPES[enc] + 1))
                s["tries"] += tries
                s["first_pass"] += tries == 1 and chosen is not None
                if chosen is None:
                    s["fallback"] += 1
                    b = curve[100][0]
                else:
                    b = chosen[1]
                if ideal is not None:
                    s["bytes"] += b
                    s["ideal"] += ideal
    return stats


def main():
    features, curves = load()
    names = sorted(features)
    fit_names = [n for i, n in enumerate(names) if i % 3 == 0]
    check_names = [n for i, n in enumerate(names) if i % 3 != 0]
    models = {}
    for e in ENCODINGS:
        coef, margin, rms = fit(fit_names, features, curves, e)
        _, _, rms_check = fit(check_names, features, curves, e)
        # Validation error of the fit-set model on the other photos.
        res = []
        for n in check_names:
            for t in TARGETS:
                q = lowest_passing(curves[(n, e)], t)
                if q is not None:
                    res.append(q - np.array(inputs(features[n], t)) @ coef)
        res = np.array(res)
        print(f"# {e}: fit RMS {rms:.2f}, validation RMS {np.sqrt(np.mean(res ** 2)):.2f}, margins {margin[0]:.2f} "
              f"{margin[1]:.2f}, validation under prediction+margin {np.mean(res <= margin[1]) * 100:.0f} %",
              file=sys.stderr)
        models[e] = (coef, margin)
    ceiling, ceiling_rms = fit_ceiling(fit_names, features, curves)
    print(f"# webp ceiling fit RMS {ceiling_rms:.2f}", file=sys.stderr)
    chroma = fit_chroma(fit_names, features, curves)
    for label, group in [("validation", check_names), ("fit", fit_names)]:
        stats = replay(group, features, curves, models, ceiling, chroma, 1)
        print(f"# the unscored mode replayed on the {label} set ({len(group)} photos):", file=sys.stderr)
        for (fmt, t), s in sorted(stats.items()):
            n = s["images"]
            print(f"#   {fmt} {t}: miss {s['unscored_miss']:.0f}/{n:.0f}, worst shortfall {s['unscored_worst']:.1f}, "
                  f"lossless {s['lossless']:.0f} (reachable {s['lossless_but_reachable']:.0f}), "
                  f"bytes/ideal {s['unscored_bytes'] / max(s['ideal'], 1):.3f}", file=sys.stderr)

    def table(values):
        return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"

    print("    // Generated by scripts/quality/fit_quality_model.py; see its output in docs/quality.md.")
    for e in ENCODINGS:
        coef, (start, margin) = models[e]
        print(f"    static let {e} = Coefficients(weights: {table(coef)},\n"
              f"                                  margin: {start:.3f}, predictedMargin: {margin:.3f})")
    print(f"    static let webpCeiling: [Double] = {table(ceiling)}")
    print(f"    static let fullChromaSaving: [Double] = {table(chroma)}")


if __name__ == "__main__":
    main()
