"""thumbor 7.8's own `_bounding_box` (its C, from thumbor.ext.filters) over small generated RGBA images.

Usage: /work/venv-tools/bin/python scripts/thumbor-compat/trim_boxes.py SEED COUNT
Prints thumbor's raw (left, top, right, bottom) per image, comma-separated, for ThumborTrimBoundingBoxTests: the test
makes the same images from the same 64-bit LCG (Knuth's MMIX constants, the high 31 bits used) and compares.
"""
import sys

from thumbor.ext.filters import _bounding_box

MASK = (1 << 64) - 1
PALETTE = [(0, 0, 0, 255), (0, 0, 1, 255), (3, 4, 0, 255), (255, 255, 255, 255), (10, 10, 10, 0), (250, 250, 250, 255)]
TOLERANCES = [0, 1, 5, 300]


def boxes(seed, count):
    state = seed

    def draw():
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) & MASK
        return state >> 33

    out = []
    for _ in range(count):
        width, height = 1 + draw() % 7, 1 + draw() % 7
        reference = "top-left" if draw() % 2 == 0 else "bottom-right"
        tolerance = TOLERANCES[draw() % 4]
        pixels = []
        for _ in range(width * height):
            i = draw() % 10  # half the pixels are the first colour, so that borders form
            pixels.append(PALETTE[0] if i < 5 else PALETTE[i - 5])
        data = bytes(c for p in pixels for c in p)
        out.append(_bounding_box.apply("RGBA", width, height, reference, tolerance, data))
    return out


if __name__ == "__main__":
    print(",".join("%d %d %d %d" % b for b in boxes(int(sys.argv[1]), int(sys.argv[2]))))
