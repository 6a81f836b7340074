// libpng behind plain functions: libpng's error callback copies the message and longjmps (png_longjmp) back
// into the function that called libpng; input comes from memory through a custom read function.
#include "wi_codec.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "wi_png_shared.h"

static void wi_png_set_message(char *message, const char *text) {
    if (message == NULL) return;
    snprintf(message, WI_MESSAGE_MAX, "%s", text);
}

void wi_png_error_fn(png_structp png, png_const_charp text) {
    wi_png_errors *errors = (wi_png_errors *)png_get_error_ptr(png);
    if (errors != NULL) snprintf(errors->text, sizeof errors->text, "%s", text ? text : "libpng error");
    png_longjmp(png, 1);
}

void wi_png_warning_fn(png_structp png, png_const_charp text) {
    (void)text;
    wi_png_errors *errors = (wi_png_errors *)png_get_error_ptr(png);
    if (errors != NULL && errors->warnings < UINT32_MAX) errors->warnings += 1;
}

// MARK: - Decoder

struct wi_png_decoder {
    png_structp png;
    png_infop info;
    wi_png_errors errors;
    const uint8_t *data;
    size_t size;
    size_t offset;
    int info_read;
    int decoded;
};

static void wi_png_read_fn(png_structp png, png_bytep out, size_t length) {
    wi_png_decoder *decoder = (wi_png_decoder *)png_get_io_ptr(png);
    if (length > decoder->size - decoder->offset) png_error(png, "Read Error: the data ends early");
    memcpy(out, decoder->data + decoder->offset, length);
    decoder->offset += length;
}

wi_png_decoder *wi_png_decoder_create(const uint8_t *data, size_t size) {
    wi_png_decoder *decoder = calloc(1, sizeof(wi_png_decoder));
    if (decoder == NULL) return NULL;
    decoder->data = data;
    decoder->size = size;
    decoder->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &decoder->errors, wi_png_error_fn, wi_png_warning_fn);
    if (decoder->png == NULL) {
        free(decoder);
        return NULL;
    }
    decoder->info = png_create_info_struct(decoder->png);
    if (decoder->info == NULL) {
        png_destroy_read_struct(&decoder->png, NULL, NULL);
        free(decoder);
        return NULL;
    }
    /* Metadata chunks the decoder never uses are skipped unread. libpng 1.6.39 allocates and zeroes a text
       chunk's declared length (up to 2^31) before reading it, so a 57-byte PNG declaring a 1 GB iTXt cost a
       1 GB allocation and seconds (found by FuzzDecode); skipped chunks are read through in small pieces and
       truncated input fails at once. */
    wi_png_skip_unused_chunks(decoder->png);
    png_set_read_fn(decoder->png, decoder, wi_png_read_fn);
    return decoder;
}

void wi_png_skip_unused_chunks(png_structp png) {
    static const png_byte unused_chunks[] = "iTXt\0tEXt\0zTXt\0sPLT\0iCCP\0eXIf\0";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, unused_chunks, 6);
    /* Library-level limits, below what a hostile file could otherwise make libpng accept or allocate. */
    png_set_user_limits(png, WI_PNG_MAX_SIDE, WI_PNG_MAX_SIDE);
    png_set_chunk_cache_max(png, WI_PNG_MAX_CACHED_CHUNKS);
    png_set_chunk_malloc_max(png, WI_PNG_MAX_CHUNK_BYTES);
}

void wi_png_decoder_destroy(wi_png_decoder *decoder) {
    if (decoder == NULL) return;
    png_destroy_read_struct(&decoder->png, &decoder->info, NULL);
    free(decoder);
}

wi_status wi_png_decoder_read_info(wi_png_decoder *decoder, wi_png_header *header, char *message) {
    if (decoder->info_read) {
        wi_png_set_message(message, "info already read");
        return WI_ERROR;
    }
    if (setjmp(png_jmpbuf(decoder->png))) {
        wi_png_set_message(message, decoder->errors.text);
        return WI_ERROR;
    }
    png_read_info(decoder->png, decoder->info);
    decoder->info_read = 1;
    memset(header, 0, sizeof(*header));
    header->width = png_get_image_width(decoder->png, decoder->info);
    header->height = png_get_image_height(decoder->png, decoder->info);
    header->bit_depth = png_get_bit_depth(decoder->png, decoder->info);
    header->color_type = png_get_color_type(decoder->png, decoder->info);
    header->is_interlaced = png_get_interlace_type(decoder->png, decoder->info) == PNG_INTERLACE_ADAM7;
    header->has_trns = png_get_valid(decoder->png, decoder->info, PNG_INFO_tRNS) ? 1 : 0;
    return WI_OK;
}

/// Premultiplies one row of RGBA8 in place: c * a / 255, rounded to nearest.
static void wi_png_premultiply_row(uint8_t *row, uint32_t width) {
    for (uint32_t x = 0; x < width; x++) {
        uint8_t *p = row + (size_t)x * 4;
        unsigned a = p[3];
        if (a == 255) continue;
        for (int c = 0; c < 3; c++) {
            unsigned v = p[c] * a + 128;
            p[c] = (uint8_t)((v + (v >> 8)) >> 8);
        }
    }
}

int wi_png_apply_rgba_transforms(png_structp png, png_infop info, int *has_alpha) {
    int color_type = png_get_color_type(png, info);
    int bit_depth = png_get_bit_depth(png, info);
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) ? 1 : 0;
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (has_trns) png_set_tRNS_to_alpha(png);
    if (bit_depth == 16) png_set_scale_16(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    *has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) || has_trns;
    if (!*has_alpha) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)png_get_image_width(png, info) * 4) {
        png_error(png, "unexpected row size after transforms");
    }
    return passes;
}

wi_status wi_png_decoder_decode_rgba(wi_png_decoder *decoder, uint8_t *pixels, size_t stride, int premultiply,
                                     char *message) {
    png_structp png = decoder->png;
    png_infop info = decoder->info;
    if (!decoder->info_read || decoder->decoded) {
        wi_png_set_message(message, "decode needs the info read and runs once");
        return WI_ERROR;
    }
    if (setjmp(png_jmpbuf(png))) {
        wi_png_set_message(message, decoder->errors.text);
        return WI_ERROR;
    }
    decoder->decoded = 1;
    uint32_t width = png_get_image_width(png, info);
    uint32_t height = png_get_image_height(png, info);
    if (stride < (size_t)width * 4) {
        wi_png_set_message(message, "row stride too small");
        return WI_ERROR;
    }
    int has_alpha = 0;
    int passes = wi_png_apply_rgba_transforms(decoder->png, decoder->info, &has_alpha);
    for (int pass = 0; pass < passes; pass++) {
        for (uint32_t y = 0; y < height; y++) png_read_row(png, pixels + (size_t)y * stride, NULL);
    }
    if (premultiply && has_alpha) {
        for (uint32_t y = 0; y < height; y++) wi_png_premultiply_row(pixels + (size_t)y * stride, width);
    }
    png_read_end(png, NULL);
    return WI_OK;
}

wi_status wi_png_decoder_decode_rgba16(wi_png_decoder *decoder, uint16_t *pixels, size_t stride, char *message) {
    png_structp png = decoder->png;
    png_infop info = decoder->info;
    if (!decoder->info_read || decoder->decoded || png_get_bit_depth(png, info) != 16) {
        wi_png_set_message(message, "a 16-bit decode needs a 16-bit PNG, its info read, and runs once");
        return WI_ERROR;
    }
    if (setjmp(png_jmpbuf(png))) {
        wi_png_set_message(message, decoder->errors.text);
        return WI_ERROR;
    }
    decoder->decoded = 1;
    uint32_t width = png_get_image_width(png, info);
    uint32_t height = png_get_image_height(png, info);
    if (stride < (size_t)width * 8) {
        wi_png_set_message(message, "row stride too small");
        return WI_ERROR;
    }
    int color_type = png_get_color_type(png, info);
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) ? 1 : 0;
    if (has_trns) png_set_tRNS_to_alpha(png);
    if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (!((color_type & PNG_COLOR_MASK_ALPHA) || has_trns)) png_set_filler(png, 0xFFFF, PNG_FILLER_AFTER);
    {
        const uint16_t probe = 1;
        if (*(const uint8_t *)&probe == 1) png_set_swap(png);  // PNG is big-endian; rows come out native
    }
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 8) png_error(png, "unexpected row size after transforms");
    for (int pass = 0; pass < passes; pass++) {
        for (uint32_t y = 0; y < height; y++) png_read_row(png, (png_bytep)pixels + (size_t)y * stride, NULL);
    }
    png_read_end(png, NULL);
    return WI_OK;
}

wi_status wi_png_decoder_start_rows(wi_png_decoder *decoder, int *passes, char *message) {
    if (!decoder->info_read || decoder->decoded) {
        wi_png_set_message(message, "rows need the info read and start once");
        return WI_ERROR;
    }
    if (setjmp(png_jmpbuf(decoder->png))) {
        wi_png_set_message(message, decoder->errors.text);
        return WI_ERROR;
    }
    decoder->decoded = 1;
    int has_alpha = 0;
    *passes = wi_png_apply_rgba_transforms(decoder->png, decoder->info, &has_alpha);
    return WI_OK;
}

wi_status wi_png_decoder_read_row(wi_png_decoder *decoder, uint8_t *row, char *message) {
    if (!decoder->decoded) {
        wi_png_set_message(message, "call start_rows first");
        return WI_ERROR;
    }
    if (setjmp(png_jmpbuf(decoder->png))) {
        wi_png_set_message(message, decoder->errors.text);
        return WI_ERROR;
    }
    png_read_row(decoder->png, row, NULL);
    return WI_OK;
}

wi_status wi_png_decoder_finish(wi_png_decoder *decoder, char *message) {
    if (setjmp(png_jmpbuf(decoder->png))) {
        wi_png_set_message(message, decoder->errors.text);
        return WI_ERROR;
    }
    png_read_end(decoder->png, NULL);
    return WI_OK;
}

// MARK: - Encoder

typedef struct wi_png_output {
    uint8_t *bytes;
    size_t size;
    size_t capacity;
} wi_png_output;

static void wi_png_write_fn(png_structp png, png_bytep data, size_t length) {
    wi_png_output *out = (wi_png_output *)png_get_io_ptr(png);
    if (length > SIZE_MAX - out->size) png_error(png, "output too large");
    size_t needed = out->size + length;
    if (needed > out->capacity) {
        size_t capacity = out->capacity < 65536 ? 65536 : out->capacity;
        while (capacity < needed) {
            if (capacity > SIZE_MAX / 2) { capacity = needed; break; }
            capacity *= 2;
        }
        uint8_t *grown = realloc(out->bytes, capacity);
        if (grown == NULL) png_error(png, "out of memory");
        out->bytes = grown;
        out->capacity = capacity;
    }
    memcpy(out->bytes + out->size, data, length);
    out->size = needed;
}

static void wi_png_flush_fn(png_structp png) { (void)png; }

typedef struct wi_png_encode_state {
    png_structp png;
    png_infop info;
    wi_png_errors errors;
    wi_png_output output;
} wi_png_encode_state;

wi_status wi_png_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                             int has_alpha, int interlace, uint8_t **out, size_t *out_size, char *message) {
    *out = NULL;
    *out_size = 0;
    if (width == 0 || height == 0 || width > 0x7FFFFFFF || height > 0x7FFFFFFF || stride < (size_t)width * 4) {
        wi_png_set_message(message, "image size not encodable as PNG");
        return WI_ERROR;
    }
    wi_png_encode_state *state = calloc(1, sizeof(wi_png_encode_state));
    if (state == NULL) {
        wi_png_set_message(message, "out of memory");
        return WI_NO_MEMORY;
    }
    wi_status status = WI_OK;
    state->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &state->errors, wi_png_error_fn, wi_png_warning_fn);
    if (state->png == NULL || (state->info = png_create_info_struct(state->png)) == NULL) {
        wi_png_set_message(message, "out of memory");
        status = WI_NO_MEMORY;
        goto cleanup;
    }
    if (setjmp(png_jmpbuf(state->png))) {
        wi_png_set_message(message, state->errors.text);
        status = WI_ERROR;
        goto cleanup;
    }
    png_set_user_limits(state->png, 0x7FFFFFFF, 0x7FFFFFFF);
    png_set_write_fn(state->png, &state->output, wi_png_write_fn, wi_png_flush_fn);
    png_set_IHDR(state->png, state->info, width, height, 8,
                 has_alpha ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(state->png, state->info);
    if (!has_alpha) png_set_filler(state->png, 0, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(state->png);
    for (int pass = 0; pass < passes; pass++) {
        for (uint32_t y = 0; y < height; y++) png_write_row(state->png, pixels + (size_t)y * stride);
    }
    png_write_end(state->png, NULL);
    *out = state->output.bytes;
    *out_size = state->output.size;
    state->output.bytes = NULL;
cleanup:
    if (state->png != NULL) png_destroy_write_struct(&state->png, state->info ? &state->info : NULL);
    free(state->output.bytes);
    free(state);
    return status;
}
