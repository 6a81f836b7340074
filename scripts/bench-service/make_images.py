"""Writes N distinct 2000x2000 JPEGs (quality 90, seeded): smooth gradients plus noise and shapes, photo-like
enough that the codecs do real work. Usage: make_images.py DIR N"""
import random
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

out, count = Path(sys.argv[1]), int(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
for index in range(count):
    path = out / f"img{index:02d}.jpg"
    if path.exists():
        continue
    rng = random.Random(index)
    base = Image.linear_gradient("L").resize((2000, 2000))
    r = base.rotate(rng.randrange(360))
    g = base.rotate(rng.randrange(360))
    b = Image.effect_noise((2000, 2000), 40 + index)
    image = Image.merge("RGB", (r, g, b))
    draw = ImageDraw.Draw(image)
    for _ in range(40):
        x, y = rng.randrange(2000), rng.randrange(2000)
        s = rng.randrange(20, 300)
        draw.ellipse((x, y, x + s, y + s), fill=(rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    image = image.filter(ImageFilter.GaussianBlur(1))
    image.save(path, quality=90)
