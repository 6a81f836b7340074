"""Shared pieces of the quality scripts: the float Lanczos3 reference, thumbor and webimage-server on loopback,
SSIMULACRA2 scoring (the PyPI `ssimulacra2` 0.3.0 package, a Python port of the published metric)."""

import functools
import math
import http.server
import io
import os
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image, ImageCms, ImageOps

ROOT = Path(__file__).resolve().parents[2]
SRGB = ImageCms.createProfile("sRGB")
# Alpha is composited on this grey before scoring (SSIMULACRA2 scores RGB); the same for every image.
BACKGROUND = 128.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except Exception:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer")


def serve_directory(directory: Path) -> int:
    """A static HTTP server for `directory` on a loopback port, in a daemon thread."""
    port = free_port()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return port


def start_thumbor(work: Path, venv: Path, quality=80):
    port = free_port()
    conf = work / "thumbor.conf"
    conf.write_text("\n".join([
        "LOADER = 'thumbor.loaders.http_loader'", "ENGINE = 'thumbor.engines.pil'", "ALLOW_UNSAFE_URL = True",
        f"QUALITY = {quality}", "AUTO_WEBP = False", "MAX_WIDTH = 0", "MAX_HEIGHT = 0", "RESPECT_ORIENTATION = True",
        "HTTP_LOADER_MAX_BODY_SIZE = 209715200"]) + "\n")
    proc = subprocess.Popen([str(venv / "bin" / "thumbor"), "--port", str(port), "-i", "127.0.0.1", "--conf", str(conf),
                             "-l", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_http(f"http://127.0.0.1:{port}/healthcheck")
    return proc, port


def start_ours(work: Path, binary: Path, extra=()):
    port = free_port()
    args = [str(binary), "--port", str(port), "--host", "127.0.0.1", "--cache", str(work / "ours-cache"),
            "--allow-unsigned", "--allow-network", "127.0.0.0/8", "--log-level", "error", "--no-result-cache",
            # No render deadline: a debug server on a busy machine takes more than the default 10 s for a 20 Mpx
            # full-size reference decode or a q=auto search, and a 503 would end the run.
            "--render-timeout", "0", *extra]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_http(f"http://127.0.0.1:{port}/healthz")
    return proc, port


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=600) as r:
        return r.read()


def thumbor_path(size, name, origin_port, fmt=None, quality=None):
    w, h = size
    filters = []
    if fmt:
        filters.append(f"format({fmt})")
    if quality:
        filters.append(f"quality({quality})")
    f = ("filters:" + ":".join(filters) + "/") if filters else ""
    return f"/unsafe/{w}x{h or 0}/{f}http://127.0.0.1:{origin_port}/{name}"


def ours_path(size, name, origin_port, fmt, quality=None):
    w, h = size
    q = f"&q={quality}" if quality is not None else ""
    hh = f"&h={h}&fit=cover" if h else ""
    return f"/image?url=http://127.0.0.1:{origin_port}/{name}&w={w}{hh}&format={fmt}{q}"


def to_srgb_rgba(image: Image.Image) -> Image.Image:
    """Upright RGBA in sRGB: EXIF orientation applied, an embedded ICC profile converted (relative colorimetric)."""
    image = ImageOps.exif_transpose(image)
    icc = image.info.get("icc_profile")
    if image.mode in ("I;16", "I;16B", "I", "F"):
        image = image.point(lambda v: v / 256).convert("L")
    rgba = image.convert("RGBA")
    if icc:
        try:
            src = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            rgb = ImageCms.profileToProfile(rgba.convert("RGB"), src, SRGB, outputMode="RGB")
            rgb.putalpha(rgba.getchannel("A"))
            rgba = rgb
        except Exception:
            pass
    return rgba


def decode(data: bytes) -> Image.Image:
    if data[:2] == b"\xff\x0a" or data[:12] == b"\0\0\0\x0cJXL \r\n\x87\n":
        # Pillow reads no JPEG XL: libjxl's djxl (Debian's libjxl-tools) decodes it to PNG.
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            src, out = Path(tmp) / "in.jxl", Path(tmp) / "out.png"
            src.write_bytes(data)
            subprocess.run(["djxl", str(src), str(out)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return to_srgb_rgba(Image.open(io.BytesIO(out.read_bytes())))
    return to_srgb_rgba(Image.open(io.BytesIO(data)))


def flatten(rgba: Image.Image) -> np.ndarray:
    """RGB float array (0…255) composited on BACKGROUND."""
    a = np.asarray(rgba, dtype=np.float64)
    alpha = a[:, :, 3:4] / 255.0
    return a[:, :, :3] * alpha + BACKGROUND * (1 - alpha)


def _round(x):
    """Swift's `rounded()`: half away from zero (Python's `round` is half to even)."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def ours_window(w, h, size):
    """(x, y, width, height) of the source window webimage-server resamples for a cover `size`: `RenderPlan.autoCrop`
    with the centre as focus (thumbor's `auto_crop`: the whole of one side, the other side's window a width
    rounded up or a height rounded half to even, its origin at the focus pixel floored minus half the window,
    rounded half to even). The server maps it onto its decode (full size, DCT-scaled or box-shrunk) and resamples
    the fractional window to the output in one resize, so the reference is the same window of the source resized
    once. `None` for a width-only size (the whole source is scaled)."""
    tw, th = size
    if not th:
        return None
    cw, ch = w, h
    if tw / w > th / h:
        ch = min(max(round(w * th / tw), 1), h)          # Python's round: half to even
    else:
        cw = min(max(math.ceil(tw * h / th), 1), w)

    def origin(side, window):
        focal = math.floor(0.5 * side + 1e-9)
        return int(round(min(max(focal - window / 2, 0), side - window)))

    return origin(w, cw), origin(h, ch), cw, ch


def thumbor_geometry(w, h, size):
    """thumbor's: crop the source's centre to the box's aspect ratio (integer source pixels), then resize it."""
    tw, th = size
    if not th:
        return 0, 0, w, h, tw, max(1, round(h * tw / w))
    if w / h > tw / th:
        cw = int(round(h * tw / th))
        return (w - cw) // 2, 0, cw, h, tw, th
    ch = int(round(w * th / tw))
    return 0, (h - ch) // 2, w, ch, tw, th


def float_resize(source: Image.Image, width, height) -> list:
    """Pillow's Lanczos3 (support 3, widened by the shrink) on float planes of premultiplied RGBA."""
    a = np.asarray(source, dtype=np.float32)
    alpha = a[:, :, 3] / 255.0
    planes = [a[:, :, c] * alpha for c in range(3)] + [alpha]
    return [np.asarray(Image.fromarray(p, mode="F").resize((width, height), Image.LANCZOS), dtype=np.float64) for p in planes]


def composite(planes, background=BACKGROUND) -> np.ndarray:
    """Premultiplied float planes (colour 0…255·α, α 0…1) over `background`. Lanczos' lobes leave values outside
    what a colour can be: α is clamped to 0…1 and each premultiplied colour to 0…255·α first, as any resizer that
    writes an image must (a transparent pixel beside an opaque edge held a colour of -26 with α clamped to 0, which
    drew a dark ring on the grey that no 8-bit output can have: chartjs_overlapping's spokes)."""
    al = np.clip(planes[3], 0, 1)
    rgb = np.stack([np.clip(planes[c], 0, 255 * al) + background * (1 - al) for c in range(3)], axis=2)
    return np.clip(np.rint(rgb), 0, 255)


def has_alpha(source: Image.Image) -> bool:
    return source.mode == "RGBA" and source.getchannel("A").getextrema()[0] < 255


def reference(source: Image.Image, size, geometry="ours", background=BACKGROUND) -> np.ndarray:
    """The float reference of `source` (upright sRGB RGBA) for the output `size`, composited on `background` and
    rounded to 8 bits. geometry "ours": webimage-server's (`ours_window` of the source resized once);
    "thumbor": thumbor's (crop the source's centre to the aspect ratio, resize the crop).

    For JPEG output of a transparent source, the reference is what the JPEG holds: webimage-server writes the
    premultiplied colour (on black: `background=0`); thumbor (PIL) drops alpha and keeps the straight colour
    (`jpeg_reference`)."""
    w, h = source.size
    if geometry == "thumbor":
        x, y, cw, ch, ow, oh = thumbor_geometry(w, h, size)
        return composite(float_resize(source.crop((x, y, x + cw, y + ch)), ow, oh), background)
    window = ours_window(w, h, size)
    if window is None:
        return composite(float_resize(source, size[0], max(1, _round(h * size[0] / w))), background)
    x, y, cw, ch = window
    return composite(float_resize(source.crop((x, y, x + cw, y + ch)), size[0], size[1]), background)


def jpeg_reference(source: Image.Image, size, geometry="ours") -> np.ndarray:
    """`reference` for a JPEG made of `source`: ours premultiplied on black; thumbor's the straight colour with
    alpha dropped (PIL's convert("RGB") before saving JPEG). The same as `reference` for opaque sources."""
    if not has_alpha(source):
        return reference(source, size, geometry)
    if geometry == "thumbor":
        return reference(source.convert("RGB").convert("RGBA"), size, geometry)
    return reference(source, size, geometry, background=0)


def score(ref: np.ndarray, dist: np.ndarray, scratch: Path) -> float:
    """SSIMULACRA2 (PyPI ssimulacra2) of `dist` against `ref`, both RGB float arrays of 0…255 values."""
    from ssimulacra2 import compute_ssimulacra2
    if ref.shape != dist.shape:
        raise ValueError(f"size mismatch {ref.shape} vs {dist.shape}")
    pid = os.getpid()
    a, b = scratch / f"ref-{pid}.png", scratch / f"dist-{pid}.png"
    Image.fromarray(np.clip(np.rint(ref), 0, 255).astype(np.uint8)).save(a)
    Image.fromarray(np.clip(np.rint(dist), 0, 255).astype(np.uint8)).save(b)
    return float(compute_ssimulacra2(str(a), str(b)))
