"""Compatibility table: webimage-server's thumbor URLs against the real thumbor 7.8, on the same loopback origin.

Starts a static origin (Python's http.server over a temporary folder of links to ../shared/corpus images: photos,
PNGs with alpha, an animated GIF), thumbor (PIL engine, HTTP loader, ALLOW_UNSAFE_URL, a SECURITY_KEY) and our
webimage-server (debug build by default: --server PATH for another), runs every URL of `urls()` (>= 150: every part
of the grammar and every filter) against both, and compares for each: the status; for every 2xx of both, the output
format and size (width x height), and the pixels (mean CIEDE2000 <= 2, else SSIMULACRA2 >= 80 where resampling
differs). Writes a markdown table (--out, default .build/thumbor-compat/compat.md) and the raw results as JSON, and
with --record, the expectations of `ThumborCompatTests` (a fixed subset, recorded from thumbor's answers).

Run: .build/bench-service/venv/bin/python scripts/thumbor-compat/run.py [--server .build/debug/webimage-server] [--record]
(`make bench-service` runs it against the release build where thumbor is installed.)
"""
import argparse
import base64
import hashlib
import hmac
import http.server
import io
import json
import re
import os
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("WEBIMAGE_CORPUS", ROOT.parent / "shared" / "corpus"))
def free_port():
    """A port nothing listens on now (others share this machine: fixed ports collide)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ORIGIN_PORT, THUMBOR_PORT, OURS_PORT = free_port(), free_port(), free_port()
KEY = "webimage-compat-security-key-0123456789"

IMAGES = {
    "katherine.jpg": "photos/thumbor_800px-Katherine_Maher.jpg",        # 800x533, thumbor's own test photo
    "henner.jpg": "photos/thumbor_800px-Christophe_Henner_-_June_2016.jpg",
    "kite.jpg": "photos/kdewallpapers_Kite_2560x1600.jpg",               # a large JPEG (downsampled decode)
    "kodak.png": "photos/kodak_05.png",                                  # 768x512 opaque PNG
    "tulips.png": "photos/jxltestdata_tmshre_riaphotographs_srgb8.png",  # 500x500
    "icon.png": "photos/imagor_icon.png",                                # 512x512 with alpha
    "logo.png": "photos/kingfisher_logo@2x.png",                         # 1025x933 with alpha
    "banana.gif": "gif/kingfisher_dancing-banana.gif",                   # animated GIF
    "library.png": "photos/kingfisher_add-library.png",                  # 818x719 with alpha, a soft border (trim)
    "memtrace.png": "photos/libvips_Memtrace.png",                       # 713x444 opaque, a white border (trim)
}
# Made by this script (and by ThumborCompatTests) rather than taken from the corpus: a uniform image, which `trim`
# would leave empty (thumbor then ignores the trim).
UNIFORM = ("uniform.png", (64, 48), (40, 120, 200))

# The fixed subset recorded for the Swift test (indices into urls(), stable: urls() only ever grows at its end).
RECORDED = 25


def urls():
    """(name, path after /unsafe/) pairs; the image part is {o}/NAME, {o} the origin's host:port."""
    out = []
    add = lambda name, part: out.append((name, part))
    # Sizes and the crop, on a JPEG and a PNG.
    for img in ["katherine.jpg", "kodak.png"]:
        for dims in ["300x200", "200x300", "300x0", "0x200", "100x100", "800x100", "1200x900", "x", "0x0", "origx100", "300xorig"]:
            add(f"crop {dims} {img}", f"{dims}/{{o}}/{img}")
        for fit in ["fit-in", "full-fit-in", "adaptive-fit-in", "adaptive-full-fit-in"]:
            for dims in ["300x300", "200x400", "2000x2000", "300x0"]:
                add(f"{fit} {dims} {img}", f"{fit}/{dims}/{{o}}/{img}")
        for flip in ["-300x200", "300x-200", "-300x-200", "-0x0", "-x-"]:
            add(f"flip {flip} {img}", f"{flip}/{{o}}/{img}")
        for align in ["left", "right", "center", "top", "bottom", "middle", "left/top", "right/bottom", "center/middle"]:
            add(f"align {align} {img}", f"100x300/{align}/{{o}}/{img}" if "top" not in align and "bottom" not in align
                else f"300x50/{align}/{{o}}/{img}")
        for box in ["100x50:600x400", "0x0:400x400", "100x100:100x100", "500x300:9000x9000"]:
            add(f"manual crop {box} {img}", f"{box}/200x150/{{o}}/{img}")
        add(f"manual crop + fit-in {img}", f"50x50:450x350/fit-in/300x300/{{o}}/{img}")
        add(f"smart {img}", f"200x200/smart/{{o}}/{img}")
    # The image part: scheme, percent-encoding.
    add("image with http://", "200x100/http://{o}/katherine.jpg")
    add("image percent-encoded", "200x100/http%3A%2F%2F{o}%2Fkatherine.jpg")
    add("image %2F path", "200x100/{o}%2Fkatherine.jpg")
    add("missing image", "200x100/{o}/missing.jpg")
    add("not an image", "200x100/{o}/README.txt")
    # Filters, one at a time, on a photo and on alpha.
    filters = [
        "format(webp)", "format(png)", "format(jpeg)", "format(gif)", "quality(20)", "quality(95)", "blur(3)", "blur(10,4)",
        "fill(red)", "fill(00ff00)", "fill(auto)", "fill(blur)", "fill(transparent)", "fill(white,true)",
        "background_color(blue)", "background_color(ff8800)", "no_upscale()", "upscale()", "proportion(0.5)",
        "proportion(0.25)", "grayscale()", "rotate(90)", "rotate(180)", "rotate(270)", "rotate(-90)", "strip_icc()",
        "strip_exif()", "max_bytes(5000)", "max_bytes(20000)", "focal(0x0:100x100)", "focal(600x100:800x300)",
        "round_corner(20,255,255,255)", "round_corner(30|10,0,0,0,1)", "sharpen(2,1,true)", "sharpen(1.5,0.5,false)",
        "brightness(30)", "brightness(-40)", "contrast(40)", "contrast(-50)", "rgb(20,-20,0)", "rgb(0,0,40)",
    ]
    for f in filters:
        add(f"filter {f} photo", f"fit-in/300x300/filters:{f}/{{o}}/katherine.jpg")
    for f in ["format(webp)", "format(jpeg)", "fill(red)", "fill(transparent)", "background_color(white)", "grayscale()",
              "round_corner(40,255,0,0,1)", "brightness(20)", "blur(4)", "upscale()"]:
        add(f"filter {f} alpha", f"fit-in/600x600/filters:{f}/{{o}}/icon.png")
    add("filters chained", "300x200/filters:grayscale():quality(60):format(webp):brightness(10)/{o}/kodak.png")
    add("fit-in fill upscale", "fit-in/900x900/filters:upscale():fill(black)/{o}/tulips.png")
    add("no_upscale crop", "2000x1000/filters:no_upscale()/{o}/tulips.png")
    add("large source crop", "640x400/{o}/kite.jpg")
    add("large source fit-in", "fit-in/500x500/{o}/kite.jpg")
    add("large source manual crop", "1000x500:1800x1100/400x300/{o}/kite.jpg")
    add("henner smart", "150x300/smart/{o}/henner.jpg")
    add("logo alpha fit-in", "fit-in/300x300/{o}/logo.png")
    add("gif animated", "60x60/{o}/banana.gif")
    add("gif to png", "60x60/filters:format(png)/{o}/banana.gif")
    # Malformed: thumbor ignores what we refuse (400), listed in the README.
    for f in ["nope()", "quality(abc)", "rotate(45)", "fill(notacolour)", "format(tiff)"]:
        add(f"bad filter {f}", f"200x200/filters:{f}/{{o}}/katherine.jpg")
    # watermark(): the icon (alpha) on a photo, every kind of position.
    for args in ["{o}/icon.png,10,10,50", "{o}/icon.png,-10,-10,0,30", "{o}/icon.png,center,center,20,20,20",
                 "{o}/icon.png,repeat,repeat,50,10", "{o}/icon.png,10p,-20p,0,25", "http://{o}/icon.png,0,repeat,30,none,15"]:
        add(f"watermark({args})", f"fit-in/400x400/filters:watermark({args})/{{o}}/katherine.jpg")
    # trim: every form, tolerances, alpha, a uniform image, then the crop, the manual crop and fit-in after it.
    for part, img in [("trim", "logo.png"), ("trim:top-left", "library.png"), ("trim:bottom-right", "memtrace.png"),
                      ("trim:top-left:10", "memtrace.png"), ("trim:top-left:50", "library.png"),
                      ("trim:bottom-right:200", "library.png"), ("trim:bottom-right:200", "katherine.jpg"),
                      ("trim:15", "memtrace.png"), ("trim:top-left:442", "library.png"), ("trim", "uniform.png"),
                      ("trim", "icon.png"), ("trim", "banana.gif"), ("trim/300x200", "logo.png"),
                      ("trim/fit-in/300x300", "logo.png"), ("trim/100x100:600x500/200x150", "logo.png"),
                      ("trim:top-left:50/200x200/smart", "library.png"), ("trim/filters:format(webp)", "logo.png")]:
        add(f"trim {part} {img}", f"{part}/{{o}}/{img}")
    # An animated GIF keeps every frame through thumbor's PIL engine: flips, fit-in and the manual crop too.
    for part in ["-60x-60", "fit-in/100x100", "10x20:200x220/50x0"]:
        add(f"gif animated {part}", f"{part}/{{o}}/banana.gif")
    return out


def signed_urls():
    """(name, full path, expected to be signed) for the signature rows."""
    def sign(path):
        return base64.urlsafe_b64encode(hmac.new(KEY.encode(), path.encode(), hashlib.sha1).digest()).decode()
    rows = []
    for part in ["300x200/{o}/katherine.jpg", "fit-in/200x200/filters:quality(50)/{o}/kodak.png",
                 "200x100/http%3A%2F%2F{o}%2Fkatherine.jpg"]:
        rows.append((f"signed {part}", lambda o, part=part: f"/{sign(part.format(o=o))}/{part.format(o=o)}"))
    rows.append(("signed, wrong signature", lambda o: f"/AAAAAAAAAAAAAAAAAAAAAAAAAAA=/300x200/{o}/katherine.jpg"))
    rows.append(("no signature, no unsafe", lambda o: f"/300x200/{o}/katherine.jpg"))
    return rows


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def start_origin(folder):
    handler = lambda *a, **kw: QuietHandler(*a, directory=str(folder), **kw)
    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
    server = Server(("127.0.0.1", ORIGIN_PORT), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def wait_http(url, timeout=120):
    start = time.time()
    while time.time() - start < timeout:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except Exception:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer")


def start_thumbor(work, venv):
    conf = work / "thumbor.conf"
    conf.write_text("\n".join([
        "LOADER = 'thumbor.loaders.http_loader'", "ENGINE = 'thumbor.engines.pil'", "ALLOW_UNSAFE_URL = True",
        f"SECURITY_KEY = '{KEY}'", "STORAGE = 'thumbor.storages.no_storage'", "QUALITY = 80",
    ]) + "\n")
    proc = subprocess.Popen([str(venv / "bin" / "thumbor"), "--port", str(THUMBOR_PORT), "-i", "127.0.0.1", "--conf",
                             str(conf), "-l", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_http(f"http://127.0.0.1:{THUMBOR_PORT}/healthcheck")
    return proc


def start_ours(work, server):
    proc = subprocess.Popen([str(server), "--port", str(OURS_PORT), "--host", "127.0.0.1", "--cache", str(work / "ours-cache"),
                             "--allow-unsigned", "--allow-network", "127.0.0.0/8", "--thumbor-key", KEY, "--log-level", "error"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_http(f"http://127.0.0.1:{OURS_PORT}/healthz")
    return proc


def fetch(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=120) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()
    except Exception as e:  # connection reset, timeout
        return -1, "", str(e).encode()


def image_info(body):
    try:
        im = Image.open(io.BytesIO(body))
        im.load()
        return (im.format or "?").lower().replace("jpeg", "jpeg"), im.size, im, getattr(im, "n_frames", 1)
    except Exception:
        return None, None, None, 0


def flatten(im):
    """RGB over mid grey (alpha composited), as float32 0..1."""
    rgba = np.asarray(im.convert("RGBA"), dtype=np.float32) / 255
    a = rgba[..., 3:4]
    return rgba[..., :3] * a + 0.5 * (1 - a)


def srgb_to_lab(rgb):
    c = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]])
    xyz = c @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def ciede2000(lab1, lab2):
    L1, a1, b1 = lab1[..., 0], lab1[..., 1], lab1[..., 2]
    L2, a2, b2 = lab2[..., 0], lab2[..., 1], lab2[..., 2]
    C1, C2 = np.hypot(a1, b1), np.hypot(a2, b2)
    Cm = (C1 + C2) / 2
    G = 0.5 * (1 - np.sqrt(Cm ** 7 / (Cm ** 7 + 25 ** 7)))
    a1p, a2p = (1 + G) * a1, (1 + G) * a2
    C1p, C2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dLp, dCp = L2 - L1, C2p - C1p
    dh = h2p - h1p
    dh = np.where(C1p * C2p == 0, 0, np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh)))
    dHp = 2 * np.sqrt(C1p * C2p) * np.sin(np.radians(dh / 2))
    Lpm, Cpm = (L1 + L2) / 2, (C1p + C2p) / 2
    hs = h1p + h2p
    hpm = np.where(C1p * C2p == 0, hs, np.where(np.abs(h1p - h2p) <= 180, hs / 2, np.where(hs < 360, (hs + 360) / 2, (hs - 360) / 2)))
    T = (1 - 0.17 * np.cos(np.radians(hpm - 30)) + 0.24 * np.cos(np.radians(2 * hpm)) + 0.32 * np.cos(np.radians(3 * hpm + 6))
         - 0.20 * np.cos(np.radians(4 * hpm - 63)))
    dtheta = 30 * np.exp(-(((hpm - 275) / 25) ** 2))
    Rc = 2 * np.sqrt(Cpm ** 7 / (Cpm ** 7 + 25 ** 7))
    Sl = 1 + 0.015 * (Lpm - 50) ** 2 / np.sqrt(20 + (Lpm - 50) ** 2)
    Sc, Sh = 1 + 0.045 * Cpm, 1 + 0.015 * Cpm * T
    Rt = -np.sin(np.radians(2 * dtheta)) * Rc
    return np.sqrt((dLp / Sl) ** 2 + (dCp / Sc) ** 2 + (dHp / Sh) ** 2 + Rt * (dCp / Sc) * (dHp / Sh))


def ssimulacra2_score(a, b, work):
    from ssimulacra2 import compute_ssimulacra2
    pa, pb = work / "a.png", work / "b.png"
    Image.fromarray((flatten(a) * 255).round().astype(np.uint8)).save(pa)
    Image.fromarray((flatten(b) * 255).round().astype(np.uint8)).save(pb)
    return float(compute_ssimulacra2(str(pa), str(pb)))


def compare(name, path_thumbor, path_ours, work, save=None, index=0):
    t_status, t_type, t_body = fetch(THUMBOR_PORT, path_thumbor)
    o_status, o_type, o_body = fetch(OURS_PORT, path_ours)
    if save:
        (save / f"{index:03d}-thumbor").write_bytes(t_body)
        (save / f"{index:03d}-ours").write_bytes(o_body)
    row = {"name": name, "path": path_ours, "thumbor_status": t_status, "ours_status": o_status,
           "status_match": t_status == o_status, "thumbor_bytes": len(t_body), "ours_bytes": len(o_body)}
    if not (200 <= t_status < 300 and 200 <= o_status < 300):
        row["verdict"] = "same status" if t_status == o_status else "status differs"
        if o_status >= 400:
            row["ours_error"] = o_body[:120].decode("utf-8", "replace").strip()
        return row
    tf, ts, ti, tn = image_info(t_body)
    of, os_, oi, on = image_info(o_body)
    row.update({"thumbor_format": tf, "ours_format": of, "thumbor_size": ts, "ours_size": os_,
                "format_match": tf == of, "size_match": ts == os_, "thumbor_frames": tn, "ours_frames": on,
                "frames_match": tn == on})
    if ti is not None and oi is not None and ts == os_:
        de = float(ciede2000(srgb_to_lab(flatten(ti)), srgb_to_lab(flatten(oi))).mean())
        row["mean_de00"] = round(de, 2)
        if de > 2:
            try:
                row["ssimulacra2"] = round(ssimulacra2_score(ti, oi, work), 1)
            except Exception as e:  # noqa: BLE001 (a missing module or a tiny image: no score)
                row["ssimulacra2_error"] = str(e)[:80]
        row["pixels_match"] = de <= 2 or row.get("ssimulacra2", 0) >= 80
    else:
        row["pixels_match"] = False
    row["verdict"] = ("match" if row["format_match"] and row["size_match"] and row["pixels_match"] and row["frames_match"]
                      else "differs")
    return row


def write_table(rows, out: Path, server: Path):
    ok_status = sum(r["status_match"] for r in rows)
    both = [r for r in rows if "size_match" in r]
    lines = [
        "# webimage-server vs thumbor 7.8: thumbor URLs", "",
        f"Server: `{server}`. {len(rows)} URLs; same status: {ok_status}/{len(rows)}; of the {len(both)} answered 2xx by both: "
        f"same format {sum(r['format_match'] for r in both)}, same size {sum(r['size_match'] for r in both)}, "
        f"pixels close (mean ΔE00 ≤ 2 or SSIMULACRA2 ≥ 80) {sum(r['pixels_match'] for r in both)}; "
        f"all three {sum(r['verdict'] == 'match' for r in both)}.", "",
        "| # | URL (after the signature part) | thumbor | ours | format | size (thumbor / ours) | ΔE00 | SSIM2 | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(rows):
        size = f"{r.get('thumbor_size')} / {r.get('ours_size')}" if "size_match" in r else ""
        fmt = f"{r.get('thumbor_format')} / {r.get('ours_format')}" if "format_match" in r else ""
        if r.get("thumbor_frames", 1) > 1 or r.get("ours_frames", 1) > 1:
            fmt += f" ({r.get('thumbor_frames')} / {r.get('ours_frames')} frames)"
        path = r["path"].replace(f"127.0.0.1:{ORIGIN_PORT}", "O").replace("|", "\\|")
        lines.append(f"| {i} | `{path}` | {r['thumbor_status']} | {r['ours_status']} | {fmt} | {size} | "
                     f"{r.get('mean_de00', '')} | {r.get('ssimulacra2', '')} | {r['verdict']} |")
    out.write_text("\n".join(lines) + "\n")


def write_recorded(rows, target: Path):
    """RECORDED rows spread evenly over the table (every part of the grammar, the filters, errors), among those where
    we match thumbor on status (and on format and size for a 2xx), unsigned (a signature covers the origin's port)."""
    eligible = [r for r in rows if r["status_match"] and r["path"].startswith("/unsafe/")
                and ("size_match" not in r or (r["size_match"] and r["format_match"] and r.get("frames_match", True)))]
    errors = [r for r in eligible if "size_match" not in r][:3]  # thumbor's error statuses, a few of them
    # every trim row (the box comes from the pixels) and every animated one
    trims = [r for r in eligible if r["name"].startswith("trim ") or r["name"].startswith("gif animated")]
    rest = [r for r in eligible if r not in errors and r not in trims]
    count = min(RECORDED - len(errors), len(rest))
    step = max(1, len(rest) / max(count, 1))
    chosen = [rest[int(i * step)] for i in range(count)] + trims + errors
    entries = []
    for r in chosen:
        template = re.sub(r"127\.0\.0\.1:\d+", "{o}", r["path"])  # the origin's port of that run
        w, h = r.get("thumbor_size") or (0, 0)
        entries.append(f'        .init(path: "{template}", status: {r["thumbor_status"]}, format: "{r.get("thumbor_format") or ""}", '
                       f'width: {w}, height: {h}, thumborBytes: {r["thumbor_bytes"] if "size_match" in r else 0}'
                       + (f', frames: {r["thumbor_frames"]}' if r.get("thumbor_frames", 1) > 1 else "") + '),')
    images = ",\n".join(f'        "{k}": "{v}"' for k, v in IMAGES.items())
    target.write_text(f'''// Generated by scripts/thumbor-compat/run.py --record from thumbor 7.8's answers: do not edit; run it again.

/// One thumbor URL and what thumbor 7.8 answered for it (status; for a 2xx, format and size), which
/// `ThumborCompatTests` checks our server against.
struct ThumborCompatExpectation {{
    var path: String
    var status: Int
    var format: String
    var width: Int
    var height: Int
    var thumborBytes: Int
    /// The frames of thumbor's answer (an animated GIF keeps them).
    var frames: Int = 1
}}

enum ThumborCompatRecorded {{
    /// The origin's files: name → path under the corpus.
    static let images: [String: String] = [
{images},
    ]

    /// A uniform image the test makes: name, width, height, and its colour (R, G, B).
    static let uniform = (name: "{UNIFORM[0]}", width: {UNIFORM[1][0]}, height: {UNIFORM[1][1]}, rgb: ({UNIFORM[2][0]}, {UNIFORM[2][1]}, {UNIFORM[2][2]}))

    static let expectations: [ThumborCompatExpectation] = [
{chr(10).join(entries)}
    ]
}}
''')
    print(f"recorded {len(entries)} expectations in {target}")


def main():
    # SIGTERM ends the run through `finally`, so that thumbor, our server and the origin stop with it.
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=str(ROOT / ".build/debug/webimage-server"))
    parser.add_argument("--venv", default=os.environ.get("THUMBOR_VENV", ".build/bench-service/venv"))
    parser.add_argument("--out", default=str(ROOT / ".build/thumbor-compat/compat.md"))
    parser.add_argument("--record", action="store_true", help="write Tests/WebImageServerTests/ThumborCompatRecorded.swift")
    parser.add_argument("--limit", type=int, default=0, help="run only the first N URLs (a quick look)")
    parser.add_argument("--only", default="", help="run only these indices (comma-separated)")
    parser.add_argument("--record-from", default="", help="write the recorded subset from a JSON of an earlier run, and stop")
    parser.add_argument("--save", default="", help="keep both answers of every URL in this folder")
    args = parser.parse_args()
    if args.record_from:
        write_recorded(json.loads(Path(args.record_from).read_text()), ROOT / "Tests/WebImageServerTests/ThumborCompatRecorded.swift")
        return
    venv, server = Path(args.venv), Path(args.server)
    if not (venv / "bin" / "thumbor").exists():
        sys.exit(f"thumbor not found under {venv} (pip install thumbor==7.8.0 there)")
    if not server.exists():
        sys.exit(f"{server} not found: swift build --product webimage-server")
    if not CORPUS.exists():
        sys.exit(f"the corpus is not at {CORPUS} (WEBIMAGE_CORPUS)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="thumbor-compat-"))
    folder = work / "origin"
    folder.mkdir()
    for name, rel in IMAGES.items():
        os.symlink(CORPUS / rel, folder / name)
    (folder / "README.txt").write_text("not an image\n")
    Image.new("RGB", UNIFORM[1], UNIFORM[2]).save(folder / UNIFORM[0])
    procs = []
    origin = start_origin(folder)
    try:
        procs.append(start_thumbor(work, venv))
        procs.append(start_ours(work, server))
        o = f"127.0.0.1:{ORIGIN_PORT}"
        rows = []
        todo = [(n, "/unsafe/" + p.format(o=o)) for n, p in urls()]
        todo += [(n, f(o)) for n, f in signed_urls()]
        if args.limit:
            todo = todo[:args.limit]
        save = Path(args.save) if args.save else None
        if save:
            save.mkdir(parents=True, exist_ok=True)
        only = {int(x) for x in args.only.split(",") if x}
        for i, (name, path) in enumerate(todo):
            if only and i not in only:
                continue
            start = time.time()
            row = compare(name, path, path, work, save, i)
            row["seconds"] = round(time.time() - start, 2)
            rows.append(row)
            print(f"{i:3d} {row['verdict']:15s} {row['thumbor_status']} {row['ours_status']} {row.get('mean_de00', '')} "
                  f"{row.get('ssimulacra2', '')} {name}", flush=True)
        write_table(rows, out, server)
        out.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=str))
        print(f"table: {out}")
        if args.record:
            write_recorded(rows, ROOT / "Tests/WebImageServerTests/ThumborCompatRecorded.swift")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        origin.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
