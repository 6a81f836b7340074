// Direct libwebp and giflib decodes, the baseline of the "codec-gif-webp" benchmark suite.
#include "bench_harness.h"
#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>

int bench_webp_decode(const uint8_t *data, size_t size, int premultiplied) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return 1;
    if (WebPGetFeatures(data, size, &config.input) != VP8_STATUS_OK) return 2;
    const int width = config.input.width, height = config.input.height;
    const size_t stride = (size_t)width * 4, total = stride * (size_t)height;
    uint8_t *pixels = calloc(total, 1);
    if (!pixels) return 3;
    config.output.colorspace = premultiplied ? MODE_rgbA : MODE_RGBA;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = pixels;
    config.output.u.RGBA.stride = (int)stride;
    config.output.u.RGBA.size = total;
    const VP8StatusCode status = WebPDecode(data, size, &config);
    WebPFreeDecBuffer(&config.output);
    free(pixels);
    return status == VP8_STATUS_OK ? 0 : 4;
}

struct gif_input { const uint8_t *data; size_t size, offset; };

static int gif_read(GifFileType *gif, GifByteType *buffer, int length) {
    struct gif_input *in = gif->UserData;
    size_t n = in->size - in->offset;
    if ((size_t)length < n) n = (size_t)length;
    memcpy(buffer, in->data + in->offset, n);
    in->offset += n;
    return (int)n;
}

int bench_gif_decode_all(const uint8_t *data, size_t size) {
    struct gif_input input = { data, size, 0 };
    int error = 0;
    GifFileType *gif = DGifOpen(&input, gif_read, &error);
    if (!gif) return -1;
    if (DGifSlurp(gif) != GIF_OK || gif->ImageCount < 1) { DGifCloseFile(gif, &error); return -1; }
    const int width = gif->SWidth, height = gif->SHeight, count = gif->ImageCount;
    const size_t pixels = (size_t)width * (size_t)height;
    uint32_t *canvas = calloc(pixels, 4), *saved = calloc(pixels, 4);
    uint32_t **frames = calloc((size_t)count, sizeof(uint32_t *));
    int result = count;
    if (!canvas || !saved || !frames) { result = -1; goto done; }
    for (int i = 0; i < count; i++) {
        const SavedImage *image = &gif->SavedImages[i];
        GraphicsControlBlock gcb = { DISPOSAL_UNSPECIFIED, false, 0, NO_TRANSPARENT_COLOR };
        DGifSavedExtensionToGCB(gif, i, &gcb);
        const ColorMapObject *map = image->ImageDesc.ColorMap ? image->ImageDesc.ColorMap : gif->SColorMap;
        uint32_t palette[256] = { 0 };
        for (int c = 0; map && c < map->ColorCount && c < 256; c++) {
            const GifColorType k = map->Colors[c];
            palette[c] = (uint32_t)k.Red | (uint32_t)k.Green << 8 | (uint32_t)k.Blue << 16 | 0xFF000000u;
        }
        if (gcb.TransparentColor >= 0 && gcb.TransparentColor < 256) palette[gcb.TransparentColor] = 0;
        const int left = image->ImageDesc.Left, top = image->ImageDesc.Top, w = image->ImageDesc.Width, h = image->ImageDesc.Height;
        const int x1 = left + w < width ? left + w : width, y1 = top + h < height ? top + h : height;
        if (gcb.DisposalMode == DISPOSE_PREVIOUS) memcpy(saved, canvas, pixels * 4);
        for (int y = top; y < y1; y++) {
            const GifByteType *row = image->RasterBits + (size_t)(y - top) * (size_t)w;
            uint32_t *out = canvas + (size_t)y * (size_t)width;
            for (int x = left; x < x1; x++) {
                const uint32_t color = palette[row[x - left]];
                if (color) out[x] = color;
            }
        }
        frames[i] = malloc(pixels * 4);
        if (!frames[i]) { result = -1; goto done; }
        memcpy(frames[i], canvas, pixels * 4);
        if (gcb.DisposalMode == DISPOSE_BACKGROUND) {
            for (int y = top; y < y1; y++) memset(canvas + (size_t)y * (size_t)width + left, 0, (size_t)(x1 - left) * 4);
        } else if (gcb.DisposalMode == DISPOSE_PREVIOUS) {
            memcpy(canvas, saved, pixels * 4);
        }
    }
done:
    if (frames) for (int i = 0; i < count; i++) free(frames[i]);
    free(frames); free(canvas); free(saved);
    DGifCloseFile(gif, &error);
    return result;
}
