#!/usr/bin/env python3
"""Fits automatic quality's predictor (Sources/ImageCodec/Quality/QualityModel+Coefficients.swift) on the corpus.

Input: the two CSVs of the benchmark suite `quality-fit` (`cd Benchmarks && swift run -c release WebImageBench
--only quality-fit`): per photo its QualityFeatures, and per photo, encoding (jpeg420, jpeg444, webp) and quality
10..100 (step 2) the bytes and SSIMULACRA2 score (our metric, against the 400 px thumbnail).

Every photo fits the coefficients; how well they predict photos they were not fitted on is measured by
3-fold cross-validation (photo i in fold i mod 3: each fold predicted by the model fitted on the other two). For
each encoding, the lowest quality reaching each target (55..85) is regressed (least squares) on the subset of the
features (QualityFeatures.inputs) with the lowest cross-validated error (every subset holding the target's two
terms is tried; the choice is printed). Two margins are added to the prediction: the cross-validated residuals'
median (the scored search's start) and their 80th percentile (the unscored mode), so that the unscored mode's miss
rate on unseen photos is about 20 %. The script then replays the unscored mode fold by fold against the measured
curves and prints its miss rate, worst shortfall and bytes against the lowest passing quality (what an exhaustive
search would pick).

Usage: fit_quality_model.py [DIR]   (DIR holds quality-fit-*.csv; default .build). Prints the Swift table.
"""
import csv
import math
import sys
from collections import defaultdict

import numpy as np

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
DIR = ARGS[0] if ARGS else ".build"
TARGETS = [55, 60, 65, 70, 75, 80, 85]
ENCODINGS = ["jpeg420", "jpeg444", "webp"]
MARGIN_QUANTILE = 80
START_QUANTILE = 50
FOLDS = 3
# Every model keeps the intercept and the target (inputs 0 and 1); the others are chosen by cross-validation.
CHOOSABLE = [2, 3, 4, 5, 6, 7, 8]
# The unscored mode's two decisions (JPEG's subsampling, lossy WebP or lossless) as the Swift code keeps them, from
# the previous fit (Pillow's thumbnails, 23 photos): refitted here they misjudged a diagram and 1-pixel red/blue
# stripes (QualityModel+Coefficients.swift). The replay uses these; `--refit-decisions` replays refitted ones.
KEPT_CEILING = [132.236, 0, 0, -11.0659, -20.4771, 35.7832, -1.57601, -6.94167, 0]
KEPT_CHROMA = [0.668644, -0.146764, -0.0151246, -0.246879, 0.0212122, 0.788485, 0.158391, -0.248079, 0.0348959]
REFIT_DECISIONS = "--refit-decisions" in sys.argv
FEATURES = ["luma_gradient", "chroma_gradient", "flat_fraction", "edge_fraction", "chroma_loss"]
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


def fit(names, features, curves, encoding, subset):
    X, y = [], []
    for n in names:
        for t in TARGETS:
            q = lowest_passing(curves[(n, encoding)], t)
            if q is None:
                continue
            X.append(inputs(features[n], t))
            y.append(q)
    X, y = np.array(X)[:, subset], np.array(y, dtype=float)
    sub, *_ = np.linalg.lstsq(X, y, rcond=None)
    coef = np.zeros(9)
    coef[subset] = sub
    return coef


def folds(names):
    """(fitted on, predicted) photo lists of each cross-validation fold."""
    return [([n for i, n in enumerate(names) if i % FOLDS != k], [n for i, n in enumerate(names) if i % FOLDS == k])
            for k in range(FOLDS)]


def residuals(names, features, curves, encoding, coef):
    out = []
    for n in names:
        for t in TARGETS:
            q = lowest_passing(curves[(n, encoding)], t)
            if q is not None:
                out.append(q - np.array(inputs(features[n], t)) @ coef)
    return out


def cross_validated(names, features, curves, encoding, subset):
    """Every photo's residuals under the model fitted without its fold."""
    out = []
    for train, test in folds(names):
        out += residuals(test, features, curves, encoding, fit(train, features, curves, encoding, subset))
    return np.array(out)


def choose_subset(names, features, curves, encoding):
    """The inputs with the lowest cross-validated RMS error (intercept and target always in)."""
    best = None
    for mask in range(1 << len(CHOOSABLE)):
        subset = [0, 1] + [c for i, c in enumerate(CHOOSABLE) if mask >> i & 1]
        r = cross_validated(names, features, curves, encoding, subset)
        rms = float(np.sqrt(np.mean(r ** 2)))
        if best is None or rms < best[0]:
            best = (rms, subset, r)
    return best


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
                if q0 > 100:
                    # As AutomaticQuality does: lossy WebP at 100 (its ceiling model said it reaches); JPEG's
                    # fallback, quality 100 at 4:4:4.
                    s["above_100"] += 1
                    if fmt == "jpeg":
                        enc, curve, q0 = "jpeg444", curves[(n, "jpeg444")], 100
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
    models, subsets = {}, {}
    for e in ENCODINGS:
        rms, subset, cv = choose_subset(names, features, curves, e)
        coef = fit(names, features, curves, e, subset)
        fitted = np.array(residuals(names, features, curves, e, coef))
        margin = (float(np.percentile(cv, START_QUANTILE)), float(np.percentile(cv, MARGIN_QUANTILE)))
        target_only = cross_validated(names, features, curves, e, [0, 1, 2])
        print(f"# {e}: inputs {subset}, fit RMS {np.sqrt(np.mean(fitted ** 2)):.2f}, cross-validated RMS {rms:.2f} "
              f"(the target alone: {np.sqrt(np.mean(target_only ** 2)):.2f}), margins {margin[0]:.2f} {margin[1]:.2f}",
              file=sys.stderr)
        models[e], subsets[e] = (coef, margin), subset
    ceiling, ceiling_rms = fit_ceiling(names, features, curves)
    print(f"# webp ceiling fit RMS {ceiling_rms:.2f}", file=sys.stderr)
    chroma = fit_chroma(names, features, curves)
    # The unscored mode replayed fold by fold: each photo predicted by the models fitted without it.
    totals = defaultdict(lambda: defaultdict(float))
    for train, test in folds(names):
        fold_models = {e: (fit(train, features, curves, e, subsets[e]), models[e][1]) for e in ENCODINGS}
        fold_ceiling = fit_ceiling(train, features, curves)[0] if REFIT_DECISIONS else np.array(KEPT_CEILING)
        fold_chroma = fit_chroma(train, features, curves) if REFIT_DECISIONS else np.array(KEPT_CHROMA)
        stats = replay(test, features, curves, fold_models, fold_ceiling, fold_chroma, 1)
        for key, s in stats.items():
            for k, v in s.items():
                totals[key][k] = max(totals[key][k], v) if k == "unscored_worst" else totals[key][k] + v
    print(f"# the unscored mode, cross-validated ({len(names)} photos):", file=sys.stderr)
    for (fmt, t), s in sorted(totals.items()):
        print(f"#   {fmt} {t}: miss {s['unscored_miss']:.0f}/{s['images']:.0f}, worst shortfall {s['unscored_worst']:.1f}, "
              f"lossless {s['lossless']:.0f} (reachable {s['lossless_but_reachable']:.0f}, bytes not counted), "
              f"above 100 {s['above_100']:.0f}, bytes/ideal {s['unscored_bytes'] / max(s['ideal'], 1):.3f}",
              file=sys.stderr)

    def table(values):
        return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"

    print("    // Generated by scripts/quality/fit_quality_model.py; see its output in docs/quality.md.")
    for e in ENCODINGS:
        coef, (start, margin) = models[e]
        print(f"    static let {e} = Coefficients(weights: {table(coef)},\n"
              f"                                  margin: {start:.3f}, predictedMargin: {margin:.3f})")
    print(f"    // Refitted decisions (the Swift code keeps the previous fit's, KEPT_* above):")
    print(f"    // static let webpCeiling: [Double] = {table(ceiling)}")
    print(f"    // static let fullChromaSaving: [Double] = {table(chroma)}")
    def camel(name):
        head, *rest = name.split("_")
        return head + "".join(w.title() for w in rest)
    ranges = ", ".join(f"{camel(k)}: {min(features[n][k] for n in names):.4g}...{max(features[n][k] for n in names):.4g}"
                       for k in FEATURES)
    print(f"    static let fittedRanges = ({ranges})")


if __name__ == "__main__":
    main()
