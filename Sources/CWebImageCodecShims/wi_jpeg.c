// libjpeg-turbo behind plain functions: the error manager's error_exit longjmps back into the function that
// called libjpeg (the default calls exit()), warnings are counted instead of printed.
#include "wi_codec.h"
#include "wi_jpeg_shared.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct wi_jpeg_error {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    uint32_t warnings;
    int premature_end;
    int scan_limit_hit;  ///< the progress monitor stopped the decode: over WI_JPEG_MAX_SCANS scans
} wi_jpeg_error;

static void wi_jpeg_error_exit(j_common_ptr cinfo) {
    wi_jpeg_error *err = (wi_jpeg_error *)cinfo->err;
    longjmp(err->jump, 1);
}

static void wi_jpeg_emit_message(j_common_ptr cinfo, int level) {
    wi_jpeg_error *err = (wi_jpeg_error *)cinfo->err;
    if (level < 0) {
        if (err->warnings < UINT32_MAX) err->warnings += 1;
        if (cinfo->err->msg_code == JWRN_JPEG_EOF) err->premature_end = 1;
    }
}

static void wi_jpeg_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void wi_jpeg_install_errors(wi_jpeg_error *err) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = wi_jpeg_error_exit;
    err->pub.emit_message = wi_jpeg_emit_message;
    err->pub.output_message = wi_jpeg_output_message;
    err->warnings = 0;
    err->premature_end = 0;
    err->scan_limit_hit = 0;
}

static void wi_set_message(char *message, const char *text) {
    if (message == NULL) return;
    snprintf(message, WI_MESSAGE_MAX, "%s", text);
}

static void wi_jpeg_format_error(j_common_ptr cinfo, char *message) {
    if (message == NULL) return;
    char buffer[JMSG_LENGTH_MAX];
    buffer[0] = 0;
    (*cinfo->err->format_message)(cinfo, buffer);
    wi_set_message(message, buffer);
}

// MARK: - Decoder

struct wi_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    wi_jpeg_error err;
    struct jpeg_progress_mgr progress;
    const uint8_t *data;
    size_t size;
    int created;
    int header_read;
    int started;
    int raw_cmyk;  ///< CMYK/YCCK rows are left as inks (for a colour transform), not converted to RGBA
    int failed;    ///< a decode step failed (libjpeg's state is no longer usable)
    int finished;  ///< decode_finish ran
};

/// libjpeg calls this between chunks of input (each iMCU row and each marker while absorbing a multi-scan
/// file), so a file of many scans is stopped at scan WI_JPEG_MAX_SCANS + 1, before that scan is decoded.
static void wi_jpeg_count_scans(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor) return;
    if (((j_decompress_ptr)cinfo)->input_scan_number <= WI_JPEG_MAX_SCANS) return;
    wi_jpeg_error *err = (wi_jpeg_error *)cinfo->err;
    err->scan_limit_hit = 1;
    longjmp(err->jump, 1);
}

/// The status and message of a decode that longjmp'd out: the scan limit, or libjpeg's error.
static wi_status wi_jpeg_decoder_failure(wi_jpeg_decoder *decoder, char *message) {
    if (decoder->err.scan_limit_hit) {
        wi_set_message(message, "too many scans");
        return WI_LIMIT_EXCEEDED;
    }
    wi_jpeg_format_error((j_common_ptr)&decoder->cinfo, message);
    return WI_ERROR;
}

wi_jpeg_decoder *wi_jpeg_decoder_create(const uint8_t *data, size_t size) {
    wi_jpeg_decoder *decoder = calloc(1, sizeof(wi_jpeg_decoder));
    if (decoder == NULL) return NULL;
    decoder->data = data;
    decoder->size = size;
    decoder->cinfo.err = &decoder->err.pub;
    wi_jpeg_install_errors(&decoder->err);
    if (setjmp(decoder->err.jump)) {
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->cinfo);
    decoder->created = 1;
    decoder->progress.progress_monitor = wi_jpeg_count_scans;
    decoder->cinfo.progress = &decoder->progress;
    return decoder;
}

void wi_jpeg_decoder_destroy(wi_jpeg_decoder *decoder) {
    if (decoder == NULL) return;
    if (decoder->created) jpeg_destroy_decompress(&decoder->cinfo);
    free(decoder);
}

wi_status wi_jpeg_decoder_read_header(wi_jpeg_decoder *decoder, wi_jpeg_header *header, char *message) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (decoder->header_read) {
        wi_set_message(message, "header already read");
        return WI_ERROR;
    }
    if (decoder->size == 0 || decoder->size > (size_t)(unsigned long)-1) {
        wi_set_message(message, "empty or oversized JPEG data");
        return WI_ERROR;
    }
    if (setjmp(decoder->err.jump)) {
        wi_jpeg_format_error((j_common_ptr)cinfo, message);
        return WI_ERROR;
    }
    jpeg_mem_src(cinfo, decoder->data, (unsigned long)decoder->size);
    jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(cinfo, JPEG_APP0 + 2, 0xFFFF);
    jpeg_read_header(cinfo, TRUE);
    decoder->header_read = 1;
    wi_jpeg_describe_header(cinfo, header);
    return WI_OK;
}

void wi_jpeg_describe_header(j_decompress_ptr cinfo, wi_jpeg_header *header) {
    memset(header, 0, sizeof(*header));
    header->width = cinfo->image_width;
    header->height = cinfo->image_height;
    header->components = cinfo->num_components;
    header->color_space = (int)cinfo->jpeg_color_space;
    header->is_progressive = cinfo->progressive_mode ? 1 : 0;
    header->saw_adobe_marker = cinfo->saw_Adobe_marker ? 1 : 0;
    int cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    cinfo->out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGBA;
}

void wi_jpeg_decoder_exif(wi_jpeg_decoder *decoder, const uint8_t **bytes, size_t *length) {
    *bytes = NULL;
    *length = 0;
    if (!decoder->header_read) return;
    for (jpeg_saved_marker_ptr m = decoder->cinfo.marker_list; m != NULL; m = m->next) {
        if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && memcmp(m->data, "Exif\0\0", 6) == 0) {
            *bytes = m->data + 6;
            *length = m->data_length - 6;
            return;
        }
    }
}

wi_status wi_jpeg_decoder_icc_profile(wi_jpeg_decoder *decoder, uint8_t **bytes, size_t *length, int *is_invalid,
                                      char *message) {
    *bytes = NULL;
    *length = 0;
    *is_invalid = 0;
    if (!decoder->header_read) {
        wi_set_message(message, "the ICC profile is read after the header");
        return WI_ERROR;
    }
    int has_chunks = 0;
    for (jpeg_saved_marker_ptr m = decoder->cinfo.marker_list; m != NULL; m = m->next) {
        if (m->marker == JPEG_APP0 + 2 && m->data_length >= 14 && memcmp(m->data, "ICC_PROFILE\0", 12) == 0) {
            has_chunks = 1;
            break;
        }
    }
    if (!has_chunks) return WI_OK;
    if (setjmp(decoder->err.jump)) {
        wi_jpeg_format_error((j_common_ptr)&decoder->cinfo, message);
        return WI_ERROR;
    }
    JOCTET *profile = NULL;
    unsigned int profile_length = 0;
    // libjpeg-turbo checks the chunk sequence: a missing, duplicate or zero sequence number, or a count that
    // differs between chunks, gives FALSE (with a warning, counted, never printed).
    if (!jpeg_read_icc_profile(&decoder->cinfo, &profile, &profile_length) || profile == NULL) {
        free(profile);
        *is_invalid = 1;
        return WI_OK;
    }
    *bytes = profile;
    *length = profile_length;
    return WI_OK;
}

void wi_jpeg_decoder_set_raw_cmyk(wi_jpeg_decoder *decoder, int raw) { decoder->raw_cmyk = raw ? 1 : 0; }

wi_status wi_jpeg_decoder_set_scale(wi_jpeg_decoder *decoder, unsigned scale_num, unsigned scale_denom,
                                    uint32_t *output_width, uint32_t *output_height, char *message) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (!decoder->header_read || decoder->started || scale_num == 0 || scale_denom == 0) {
        wi_set_message(message, "scale must be set once, after the header, with non-zero terms");
        return WI_ERROR;
    }
    if (setjmp(decoder->err.jump)) {
        wi_jpeg_format_error((j_common_ptr)cinfo, message);
        return WI_ERROR;
    }
    cinfo->scale_num = scale_num;
    cinfo->scale_denom = scale_denom;
    jpeg_calc_output_dimensions(cinfo);
    *output_width = cinfo->output_width;
    *output_height = cinfo->output_height;
    return WI_OK;
}

void wi_jpeg_cmyk_row_to_rgba(uint8_t *row, uint32_t width, int inverted) {
    for (uint32_t x = 0; x < width; x++) {
        uint8_t *p = row + (size_t)x * 4;
        unsigned c = p[0], m = p[1], y = p[2], k = p[3];
        if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
        // Now every value is "amount of light" (255 - ink): channel = (255 - ink) * (255 - black) / 255.
        unsigned r = c * k, g = m * k, b = y * k;
        p[0] = (uint8_t)((r + 128 + ((r + 128) >> 8)) >> 8);
        p[1] = (uint8_t)((g + 128 + ((g + 128) >> 8)) >> 8);
        p[2] = (uint8_t)((b + 128 + ((b + 128) >> 8)) >> 8);
        p[3] = 255;
    }
}

JDIMENSION wi_jpeg_read_rgba_rows(j_decompress_ptr cinfo, uint8_t *pixels, size_t stride) {
    return wi_jpeg_read_rgba_rows_until(cinfo, pixels, stride, cinfo->output_height);
}

JDIMENSION wi_jpeg_read_rgba_rows_until(j_decompress_ptr cinfo, uint8_t *pixels, size_t stride, JDIMENSION until) {
    JSAMPROW rows[8];
    JDIMENSION first = cinfo->output_scanline;
    if (until > cinfo->output_height) until = cinfo->output_height;
    if (first >= until) return 0;
    JDIMENSION count = until - first;
    if (count > 8) count = 8;
    for (JDIMENSION i = 0; i < count; i++) rows[i] = pixels + (size_t)(first + i) * stride;
    JDIMENSION read = jpeg_read_scanlines(cinfo, rows, count);
    if (cinfo->out_color_space == JCS_CMYK) {
        for (JDIMENSION i = 0; i < read; i++) wi_jpeg_cmyk_row_to_rgba(rows[i], cinfo->output_width, cinfo->saw_Adobe_marker);
    }
    return read;
}

wi_status wi_jpeg_decoder_decode_rgba(wi_jpeg_decoder *decoder, uint8_t *pixels, size_t stride,
                                      uint32_t *rows_decoded, uint32_t *warnings, int *premature_end,
                                      char *message) {
    *rows_decoded = 0;
    *warnings = 0;
    *premature_end = 0;
    wi_status status = wi_jpeg_decoder_decode_start(decoder, stride, message);
    if (status == WI_OK) {
        status = wi_jpeg_decoder_decode_rows(decoder, pixels, stride, decoder->cinfo.output_height, rows_decoded,
                                             message);
    }
    if (status == WI_OK) status = wi_jpeg_decoder_decode_finish(decoder, pixels, stride, warnings, premature_end, message);
    *warnings = decoder->err.warnings;
    *premature_end = decoder->err.premature_end;
    return status;
}

wi_status wi_jpeg_decoder_decode_start(wi_jpeg_decoder *decoder, size_t stride, char *message) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    if (!decoder->header_read || decoder->started) {
        wi_set_message(message, "decode needs a header read and runs once");
        return WI_ERROR;
    }
    if (setjmp(decoder->err.jump)) {
        decoder->failed = 1;
        return wi_jpeg_decoder_failure(decoder, message);
    }
    decoder->started = 1;
    jpeg_start_decompress(cinfo);
    if (cinfo->output_components != 4 || stride < (size_t)cinfo->output_width * 4) {
        wi_set_message(message, "unexpected output layout");
        jpeg_abort_decompress(cinfo);
        decoder->failed = 1;
        return WI_ERROR;
    }
    return WI_OK;
}

wi_status wi_jpeg_decoder_decode_rows(wi_jpeg_decoder *decoder, uint8_t *pixels, size_t stride, uint32_t until_row,
                                      uint32_t *rows_decoded, char *message) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    *rows_decoded = decoder->started && !decoder->failed ? cinfo->output_scanline : 0;
    if (!decoder->started || decoder->failed || decoder->finished) {
        wi_set_message(message, "rows are read between decode_start and decode_finish");
        return WI_ERROR;
    }
    if (setjmp(decoder->err.jump)) {
        decoder->failed = 1;
        return wi_jpeg_decoder_failure(decoder, message);
    }
    JDIMENSION until = until_row < cinfo->output_height ? until_row : cinfo->output_height;
    while (cinfo->output_scanline < until) {
        // A memory source never suspends, so 0 rows means libjpeg gave up.
        JDIMENSION read;
        if (decoder->raw_cmyk && cinfo->out_color_space == JCS_CMYK) {
            JSAMPROW row = pixels + (size_t)cinfo->output_scanline * stride;
            read = jpeg_read_scanlines(cinfo, &row, 1);
        } else {
            read = wi_jpeg_read_rgba_rows_until(cinfo, pixels, stride, until);
        }
        if (read == 0) break;
        *rows_decoded = cinfo->output_scanline;
    }
    return WI_OK;
}

wi_status wi_jpeg_decoder_decode_finish(wi_jpeg_decoder *decoder, uint8_t *pixels, size_t stride, uint32_t *warnings,
                                        int *premature_end, char *message) {
    struct jpeg_decompress_struct *cinfo = &decoder->cinfo;
    *warnings = decoder->err.warnings;
    *premature_end = decoder->err.premature_end;
    if (!decoder->started || decoder->failed || decoder->finished) {
        wi_set_message(message, "decode_finish follows a successful decode_start, once");
        return WI_ERROR;
    }
    if (setjmp(decoder->err.jump)) {
        decoder->failed = 1;
        *warnings = decoder->err.warnings;
        *premature_end = decoder->err.premature_end;
        return wi_jpeg_decoder_failure(decoder, message);
    }
    decoder->finished = 1;
    // The caller's buffer may be uninitialized: never leave rows unwritten.
    for (JDIMENSION y = cinfo->output_scanline; y < cinfo->output_height; y++) {
        memset(pixels + (size_t)y * stride, 0, (size_t)cinfo->output_width * 4);
    }
    jpeg_finish_decompress(cinfo);
    *warnings = decoder->err.warnings;
    *premature_end = decoder->err.premature_end;
    return WI_OK;
}

// MARK: - Encoder

typedef struct wi_jpeg_encode_state {
    struct jpeg_compress_struct cinfo;
    wi_jpeg_error err;
    unsigned char *buffer;
    unsigned long size;
    int created;
} wi_jpeg_encode_state;

/// N. Robidoux's quantisation table (ImageMagick forum, 2012; mozjpeg's table 3), in natural (row-major)
/// order as `jpeg_add_quant_table` takes it. Finer than Annex K at low frequencies, coarser at the highest: fewer
/// bytes at the same SSIMULACRA2 (docs/quality.md). Entries over 255 are clamped by the baseline scaling.
static const unsigned int wi_robidoux_luma[DCTSIZE2] = {
    16, 16, 16, 18, 25, 37, 56, 85,    16, 17, 20, 27, 34, 40, 53, 75,
    16, 20, 24, 31, 43, 62, 91, 135,   18, 27, 31, 40, 53, 74, 106, 156,
    25, 34, 43, 53, 69, 94, 131, 189,  37, 40, 62, 74, 94, 124, 169, 238,
    56, 53, 91, 106, 131, 169, 226, 311, 85, 75, 135, 156, 189, 238, 311, 418,
};

wi_status wi_jpeg_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                              int quality, int progressive, int chroma444, int optimize, int tables, uint8_t **out,
                              size_t *out_size, char *message) {
    *out = NULL;
    *out_size = 0;
    if (width == 0 || height == 0 || width > JPEG_MAX_DIMENSION || height > JPEG_MAX_DIMENSION ||
        stride < (size_t)width * 4) {
        wi_set_message(message, "image size not encodable as JPEG (1…65500 pixels per side)");
        return WI_ERROR;
    }
    wi_jpeg_encode_state *state = calloc(1, sizeof(wi_jpeg_encode_state));
    if (state == NULL) {
        wi_set_message(message, "out of memory");
        return WI_NO_MEMORY;
    }
    wi_status status = WI_OK;
    state->cinfo.err = &state->err.pub;
    wi_jpeg_install_errors(&state->err);
    if (setjmp(state->err.jump)) {
        wi_jpeg_format_error((j_common_ptr)&state->cinfo, message);
        status = WI_ERROR;
        goto cleanup;
    }
    jpeg_create_compress(&state->cinfo);
    state->created = 1;
    jpeg_mem_dest(&state->cinfo, &state->buffer, &state->size);
    state->cinfo.image_width = width;
    state->cinfo.image_height = height;
    state->cinfo.input_components = 4;
    state->cinfo.in_color_space = JCS_EXT_RGBA;
    jpeg_set_defaults(&state->cinfo);
    quality = quality < 0 ? 0 : (quality > 100 ? 100 : quality);
    jpeg_set_quality(&state->cinfo, quality, TRUE);
    if (tables == 1) {
        // Replaces the tables jpeg_set_quality just made. Chroma: Robidoux's too at 4:2:0 (1-2 % fewer bytes than
        // Annex K's chroma table there), Annex K's at 4:4:4, where Robidoux's finer chroma cost 2-8 % more bytes
        // at the same score (docs/quality.md, "Tuned encoders").
        int scale = jpeg_quality_scaling(quality);
        jpeg_add_quant_table(&state->cinfo, 0, wi_robidoux_luma, scale, TRUE);
        if (!chroma444) jpeg_add_quant_table(&state->cinfo, 1, wi_robidoux_luma, scale, TRUE);
    }
    state->cinfo.optimize_coding = optimize ? TRUE : FALSE;
    if (chroma444) {
        // jpeg_set_defaults made the luma component 2×2 (4:2:0); 1×1 everywhere keeps chroma at full resolution.
        state->cinfo.comp_info[0].h_samp_factor = 1;
        state->cinfo.comp_info[0].v_samp_factor = 1;
    }
    if (progressive) jpeg_simple_progression(&state->cinfo);
    jpeg_start_compress(&state->cinfo, TRUE);
    while (state->cinfo.next_scanline < height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)state->cinfo.next_scanline * stride);
        jpeg_write_scanlines(&state->cinfo, &row, 1);
    }
    jpeg_finish_compress(&state->cinfo);
    *out = state->buffer;
    *out_size = state->size;
    state->buffer = NULL;
cleanup:
    if (state->created) jpeg_destroy_compress(&state->cinfo);
    free(state->buffer);
    free(state);
    return status;
}
