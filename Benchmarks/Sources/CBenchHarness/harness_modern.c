// Direct libavif, libjxl and libheif decodes, the baseline of the "codec-modern" benchmark suite: the same
// work the optional codec modules do for one still (decoder setup, parse, decode to 8-bit RGBA in a fresh
// buffer, premultiplied), with no Swift in between.
#include "bench_harness.h"
#include <avif/avif.h>
#include <jxl/decode.h>
#include <libheif/heif.h>
#include <stdlib.h>
#include <string.h>

static void premultiply(uint8_t *p, size_t pixels) {
    for (size_t i = 0; i < pixels; i++, p += 4) {
        const unsigned a = p[3];
        if (a == 255) continue;
        for (int c = 0; c < 3; c++) p[c] = (uint8_t)((p[c] * a + 127) / 255);
    }
}

int bench_avif_decode(const uint8_t *data, size_t size) {
    avifDecoder *decoder = avifDecoderCreate();
    if (!decoder) return 1;
    decoder->maxThreads = 1;
    decoder->ignoreExif = AVIF_TRUE;
    decoder->ignoreXMP = AVIF_TRUE;
    int result = 2;
    if (avifDecoderSetIOMemory(decoder, data, size) != AVIF_RESULT_OK || avifDecoderParse(decoder) != AVIF_RESULT_OK ||
        avifDecoderNextImage(decoder) != AVIF_RESULT_OK) goto done;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, decoder->image);
    rgb.depth = 8;
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.alphaPremultiplied = AVIF_TRUE;
    rgb.rowBytes = rgb.width * 4;
    rgb.pixels = calloc((size_t)rgb.rowBytes * rgb.height, 1);
    if (!rgb.pixels) { result = 3; goto done; }
    result = avifImageYUVToRGB(decoder->image, &rgb) == AVIF_RESULT_OK ? 0 : 4;
    free(rgb.pixels);
done:
    avifDecoderDestroy(decoder);
    return result;
}

int bench_jxl_decode(const uint8_t *data, size_t size) {
    JxlDecoder *decoder = JxlDecoderCreate(NULL);
    if (!decoder) return 1;
    JxlPixelFormat format = { 4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0 };
    JxlBasicInfo info;
    uint8_t *pixels = NULL;
    size_t bytes = 0;
    int result = 2;
    if (JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetUnpremultiplyAlpha(decoder, JXL_TRUE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetInput(decoder, data, size) != JXL_DEC_SUCCESS) goto done;
    JxlDecoderCloseInput(decoder);
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
        if (status == JXL_DEC_BASIC_INFO) {
            if (JxlDecoderGetBasicInfo(decoder, &info) != JXL_DEC_SUCCESS) goto done;
        } else if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            if (JxlDecoderImageOutBufferSize(decoder, &format, &bytes) != JXL_DEC_SUCCESS) goto done;
            pixels = calloc(bytes, 1);
            if (!pixels || JxlDecoderSetImageOutBuffer(decoder, &format, pixels, bytes) != JXL_DEC_SUCCESS) goto done;
        } else if (status == JXL_DEC_FULL_IMAGE) {
            if (info.alpha_bits > 0) premultiply(pixels, bytes / 4);
            result = 0;
            break;  // the first frame: a still
        } else if (status == JXL_DEC_SUCCESS) {
            break;
        } else {
            goto done;
        }
    }
done:
    free(pixels);
    JxlDecoderDestroy(decoder);
    return result;
}

int bench_heif_decode(const uint8_t *data, size_t size) {
    struct heif_context *context = heif_context_alloc();
    if (!context) return 1;
    heif_context_set_max_decoding_threads(context, 0);
    struct heif_image_handle *handle = NULL;
    struct heif_image *image = NULL;
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    int result = 2;
    if (!options || heif_context_read_from_memory_without_copy(context, data, size, NULL).code != heif_error_Ok ||
        heif_context_get_primary_image_handle(context, &handle).code != heif_error_Ok) goto done;
    options->convert_hdr_to_8bit = 1;
    if (heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, options).code != heif_error_Ok) goto done;
    const int width = heif_image_get_width(image, heif_channel_interleaved);
    const int height = heif_image_get_height(image, heif_channel_interleaved);
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    uint8_t *pixels = plane ? calloc((size_t)width * (size_t)height, 4) : NULL;
    if (!pixels) { result = 3; goto done; }
    for (int y = 0; y < height; y++) memcpy(pixels + (size_t)y * (size_t)width * 4, plane + (size_t)y * (size_t)stride, (size_t)width * 4);
    if (heif_image_handle_has_alpha_channel(handle)) premultiply(pixels, (size_t)width * (size_t)height);
    free(pixels);
    result = 0;
done:
    if (image) heif_image_release(image);
    if (handle) heif_image_handle_release(handle);
    if (options) heif_decoding_options_free(options);
    heif_context_free(context);
    return result;
}
