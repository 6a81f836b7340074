// Incremental PNG decoding through libpng's progressive reader (png_process_data with info/row/end
// callbacks): bytes are pushed as they arrive and rows land in the caller's RGBA8 buffer, so a partial image
// never needs the data decoded again from the start. Every libpng error longjmps back into this file.
#include "wi_codec.h"
#include "wi_png_shared.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

struct wi_png_stream {
    png_structp png;
    png_infop info;
    wi_png_errors errors;
    wi_png_header header;
    int header_ready;       ///< the info callback ran; rows need a pixel buffer from now on
    int paused;             ///< the info callback paused png_process_data
    size_t paused_remaining;///< bytes of the current call libpng did not take (to be supplied again)
    int passes;             ///< 7 for Adam7, else 1
    int current_pass;       ///< pass of the newest row callback
    int complete;           ///< the end callback ran (IEND)
    int failed;             ///< libpng reported an error; the stream is dead
    uint64_t rows_delivered;///< row callbacks that carried pixels
    uint32_t rows_in_pass;  ///< highest row number + 1 written in the current pass
    uint8_t *pixels;        ///< the caller's buffer for this call (NULL before the header)
    size_t stride;
};

static void wi_png_stream_set_message(char *message, const char *text) {
    if (message != NULL) snprintf(message, WI_MESSAGE_MAX, "%s", text);
}

/// IHDR and every chunk before the first IDAT were read: set the one-shot decoder's transforms, record the
/// header, and pause so the caller can check its limits and attach a pixel buffer before any row arrives.
static void wi_png_stream_info_fn(png_structp png, png_infop info) {
    wi_png_stream *stream = (wi_png_stream *)png_get_progressive_ptr(png);
    int has_alpha = 0;
    stream->passes = wi_png_apply_rgba_transforms(png, info, &has_alpha);
    wi_png_header *header = &stream->header;
    header->width = png_get_image_width(png, info);
    header->height = png_get_image_height(png, info);
    header->bit_depth = png_get_bit_depth(png, info);
    header->color_type = png_get_color_type(png, info);
    header->is_interlaced = png_get_interlace_type(png, info) == PNG_INTERLACE_ADAM7;
    header->has_trns = png_get_valid(png, info, PNG_INFO_tRNS) ? 1 : 0;
    stream->header_ready = 1;
    stream->paused = 1;
    stream->paused_remaining = png_process_data_pause(png, 0);
}

/// One row (for Adam7: one row of one pass, `new_row` NULL for rows the pass does not touch). Adam7 rows are
/// combined in libpng's "blocky" display mode: each pass's pixels are replicated over the block they stand
/// for, so after every pass the buffer is a coarse full image, and after the last one exactly the image.
static void wi_png_stream_row_fn(png_structp png, png_bytep new_row, png_uint_32 row_num, int pass) {
    wi_png_stream *stream = (wi_png_stream *)png_get_progressive_ptr(png);
    if (stream->pixels == NULL) png_error(png, "no pixel buffer attached");
    if (row_num >= stream->header.height) png_error(png, "row number out of range");
    if (pass != stream->current_pass) {
        stream->current_pass = pass;
        stream->rows_in_pass = 0;
    }
    if (new_row == NULL) return;
    uint8_t *row = stream->pixels + (size_t)row_num * stream->stride;
    if (stream->header.is_interlaced) {
        png_progressive_combine_row(png, row, new_row);
    } else {
        memcpy(row, new_row, (size_t)stream->header.width * 4);
    }
    stream->rows_delivered += 1;
    if (row_num + 1 > stream->rows_in_pass) stream->rows_in_pass = row_num + 1;
}

static void wi_png_stream_end_fn(png_structp png, png_infop info) {
    (void)info;
    wi_png_stream *stream = (wi_png_stream *)png_get_progressive_ptr(png);
    stream->complete = 1;
}

wi_png_stream *wi_png_stream_create(void) {
    wi_png_stream *stream = calloc(1, sizeof(wi_png_stream));
    if (stream == NULL) return NULL;
    stream->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &stream->errors, wi_png_error_fn, wi_png_warning_fn);
    if (stream->png == NULL) {
        free(stream);
        return NULL;
    }
    stream->info = png_create_info_struct(stream->png);
    if (stream->info == NULL) {
        png_destroy_read_struct(&stream->png, NULL, NULL);
        free(stream);
        return NULL;
    }
    if (setjmp(png_jmpbuf(stream->png))) {
        png_destroy_read_struct(&stream->png, &stream->info, NULL);
        free(stream);
        return NULL;
    }
    wi_png_skip_unused_chunks(stream->png);
    png_set_progressive_read_fn(stream->png, stream, wi_png_stream_info_fn, wi_png_stream_row_fn,
                                wi_png_stream_end_fn);
    return stream;
}

void wi_png_stream_destroy(wi_png_stream *stream) {
    if (stream == NULL) return;
    png_destroy_read_struct(&stream->png, &stream->info, NULL);
    free(stream);
}

wi_status wi_png_stream_feed(wi_png_stream *stream, const uint8_t *bytes, size_t length, uint8_t *pixels,
                             size_t stride, size_t *consumed, char *message) {
    *consumed = 0;
    if (stream->failed) {
        wi_png_stream_set_message(message, stream->errors.text[0] ? stream->errors.text : "stream failed earlier");
        return WI_ERROR;
    }
    if (stream->complete) {
        *consumed = length;  // bytes after IEND are ignored, as the one-shot reader ignores them
        return WI_OK;
    }
    if (stream->header_ready) {
        if (pixels == NULL || stride / 4 < stream->header.width) {
            wi_png_stream_set_message(message, "a pixel buffer of width * 4 bytes per row is needed");
            return WI_ERROR;
        }
    }
    stream->pixels = pixels;
    stream->stride = stride;
    stream->paused = 0;
    stream->paused_remaining = 0;
    if (setjmp(png_jmpbuf(stream->png))) {
        stream->failed = 1;
        stream->pixels = NULL;
        wi_png_stream_set_message(message, stream->errors.text[0] ? stream->errors.text : "libpng error");
        return WI_ERROR;
    }
    // png_process_data takes a non-const pointer but only reads the input.
    png_process_data(stream->png, stream->info, (png_bytep)(uintptr_t)bytes, length);
    stream->pixels = NULL;
    *consumed = stream->paused && stream->paused_remaining <= length ? length - stream->paused_remaining : length;
    return WI_OK;
}

int wi_png_stream_header(const wi_png_stream *stream, wi_png_header *header) {
    if (!stream->header_ready) return 0;
    *header = stream->header;
    return 1;
}

void wi_png_stream_get_progress(const wi_png_stream *stream, wi_png_stream_progress *progress) {
    memset(progress, 0, sizeof(*progress));
    progress->rows_delivered = stream->rows_delivered;
    progress->passes = stream->passes;
    progress->is_complete = stream->complete;
    progress->warnings = stream->errors.warnings;
    if (stream->complete) {
        progress->passes_completed = stream->passes;
        progress->rows_in_pass = stream->header.height;
    } else {
        progress->passes_completed = stream->current_pass;
        progress->rows_in_pass = stream->rows_in_pass;
    }
}
