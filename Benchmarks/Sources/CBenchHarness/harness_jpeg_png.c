// The C baseline of the codec-jpeg-png benchmark: libjpeg-turbo and libpng called directly, producing the
// same output as ImageCodec (RGBA8, premultiplied for PNG with alpha; JPEG is opaque).
#include "bench_harness.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jpeglib.h>
#include <png.h>

uint64_t bench_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct bench_jpeg_error {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
};

static void bench_jpeg_error_exit(j_common_ptr cinfo) { longjmp(((struct bench_jpeg_error *)cinfo->err)->jump, 1); }
static void bench_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

int bench_jpeg_decode_rgba(const uint8_t *data, size_t size, uint8_t **pixels, uint32_t *width, uint32_t *height) {
    return bench_jpeg_decode_rgba_scaled(data, size, 1, pixels, width, height);
}

int bench_jpeg_decode_rgba_scaled(const uint8_t *data, size_t size, unsigned scale_denom, uint8_t **pixels,
                                  uint32_t *width, uint32_t *height) {
    struct jpeg_decompress_struct cinfo;
    struct bench_jpeg_error err;
    uint8_t *volatile out = NULL;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = bench_jpeg_error_exit;
    err.pub.output_message = bench_jpeg_output_message;
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        free(out);
        return 1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = JCS_EXT_RGBA;
    cinfo.scale_num = 1;
    cinfo.scale_denom = scale_denom;
    jpeg_start_decompress(&cinfo);
    size_t stride = (size_t)cinfo.output_width * 4;
    out = malloc(stride * cinfo.output_height);
    if (out == NULL) longjmp(err.jump, 1);
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW rows[8];
        JDIMENSION n = cinfo.output_height - cinfo.output_scanline;
        if (n > 8) n = 8;
        for (JDIMENSION i = 0; i < n; i++) rows[i] = out + (size_t)(cinfo.output_scanline + i) * stride;
        jpeg_read_scanlines(&cinfo, rows, n);
    }
    jpeg_finish_decompress(&cinfo);
    *width = cinfo.output_width;
    *height = cinfo.output_height;
    jpeg_destroy_decompress(&cinfo);
    *pixels = out;
    return 0;
}

struct bench_png_source {
    const uint8_t *data;
    size_t size;
    size_t offset;
};

static void bench_png_read(png_structp png, png_bytep out, size_t length) {
    struct bench_png_source *src = png_get_io_ptr(png);
    if (length > src->size - src->offset) png_error(png, "read past end");
    memcpy(out, src->data + src->offset, length);
    src->offset += length;
}

int bench_png_decode_rgba(const uint8_t *data, size_t size, int premultiply, uint8_t **pixels, uint32_t *width,
                          uint32_t *height) {
    struct bench_png_source src = {data, size, 0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    if (png == NULL) return 1;
    png_infop info = png_create_info_struct(png);
    uint8_t *volatile out = NULL;
    if (info == NULL || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(out);
        return 1;
    }
    png_set_read_fn(png, &src, bench_png_read);
    png_read_info(png, info);
    uint32_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    int color_type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    int trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (trns) png_set_tRNS_to_alpha(png);
    if (depth == 16) png_set_scale_16(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    int alpha = (color_type & PNG_COLOR_MASK_ALPHA) || trns;
    if (!alpha) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t stride = (size_t)w * 4;
    out = malloc(stride * h);
    if (out == NULL) png_error(png, "out of memory");
    for (int pass = 0; pass < passes; pass++)
        for (uint32_t y = 0; y < h; y++) png_read_row(png, out + (size_t)y * stride, NULL);
    if (premultiply && alpha) {
        for (uint32_t y = 0; y < h; y++) {
            uint8_t *row = out + (size_t)y * stride;
            for (uint32_t x = 0; x < w; x++) {
                uint8_t *p = row + (size_t)x * 4;
                unsigned a = p[3];
                if (a == 255) continue;
                for (int c = 0; c < 3; c++) {
                    unsigned v = p[c] * a + 128;
                    p[c] = (uint8_t)((v + (v >> 8)) >> 8);
                }
            }
        }
    }
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    *pixels = out;
    *width = w;
    *height = h;
    return 0;
}
