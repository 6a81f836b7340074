// Incremental JPEG decoding: a suspending memory source that grows as data arrives. Multi-scan (progressive)
// files run in libjpeg's buffered-image mode (each completed scan renders a sharper full image); single-scan
// (baseline) files are read directly: jpeg_read_scanlines returns the rows the data so far holds and resumes
// where it suspended on the next call, so no row is decoded twice.
#include "wi_codec.h"
#include "wi_jpeg_shared.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct wi_jpeg_stream_error {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    uint32_t warnings;
} wi_jpeg_stream_error;

struct wi_jpeg_stream {
    struct jpeg_decompress_struct cinfo;
    wi_jpeg_stream_error err;
    struct jpeg_source_mgr source;
    uint8_t *data;
    size_t size;
    size_t capacity;
    size_t skip_pending;
    int is_final;
    int created;
    int header_read;
    int started;
    int finished;
    int last_completed_scan;   ///< scans fully consumed so far
    int last_rendered_scan;
    int finish_pending;        ///< jpeg_finish_output suspended and must be called again first
    int direct;                ///< single scan: rows are read straight into the caller's buffer
    int rows_done;             ///< direct mode: every row was read; jpeg_finish_decompress is pending
};

static const JOCTET wi_fake_eoi[2] = {0xFF, JPEG_EOI};

static void wi_stream_error_exit(j_common_ptr cinfo) { longjmp(((wi_jpeg_stream_error *)cinfo->err)->jump, 1); }
/// Counts warnings (level -1: corrupt data libjpeg recovered from); trace messages are ignored.
static void wi_stream_emit_message(j_common_ptr cinfo, int level) {
    wi_jpeg_stream_error *err = (wi_jpeg_stream_error *)cinfo->err;
    if (level < 0 && err->warnings < UINT32_MAX) err->warnings += 1;
}
static void wi_stream_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void wi_stream_set_message(char *message, const char *text) {
    if (message != NULL) snprintf(message, WI_MESSAGE_MAX, "%s", text);
}

static void wi_stream_format_error(wi_jpeg_stream *stream, char *message) {
    char buffer[JMSG_LENGTH_MAX];
    buffer[0] = 0;
    (*stream->cinfo.err->format_message)((j_common_ptr)&stream->cinfo, buffer);
    wi_stream_set_message(message, buffer);
}

static void wi_source_init(j_decompress_ptr cinfo) { (void)cinfo; }
static void wi_source_term(j_decompress_ptr cinfo) { (void)cinfo; }

/// Suspends (returns FALSE) until more data is appended; at the final end, inserts a fake EOI as libjpeg's
/// own memory source does.
static boolean wi_source_fill(j_decompress_ptr cinfo) {
    wi_jpeg_stream *stream = (wi_jpeg_stream *)cinfo->client_data;
    if (!stream->is_final) return FALSE;
    WARNMS(cinfo, JWRN_JPEG_EOF);
    cinfo->src->next_input_byte = wi_fake_eoi;
    cinfo->src->bytes_in_buffer = 2;
    return TRUE;
}

static void wi_source_skip(j_decompress_ptr cinfo, long count) {
    if (count <= 0) return;
    wi_jpeg_stream *stream = (wi_jpeg_stream *)cinfo->client_data;
    struct jpeg_source_mgr *src = cinfo->src;
    if ((size_t)count <= src->bytes_in_buffer) {
        src->next_input_byte += count;
        src->bytes_in_buffer -= (size_t)count;
    } else {
        stream->skip_pending += (size_t)count - src->bytes_in_buffer;
        src->next_input_byte += src->bytes_in_buffer;
        src->bytes_in_buffer = 0;
    }
}

wi_jpeg_stream *wi_jpeg_stream_create(void) {
    wi_jpeg_stream *stream = calloc(1, sizeof(wi_jpeg_stream));
    if (stream == NULL) return NULL;
    stream->cinfo.err = jpeg_std_error(&stream->err.pub);
    stream->err.pub.error_exit = wi_stream_error_exit;
    stream->err.pub.emit_message = wi_stream_emit_message;
    stream->err.pub.output_message = wi_stream_output_message;
    if (setjmp(stream->err.jump)) {
        free(stream);
        return NULL;
    }
    jpeg_create_decompress(&stream->cinfo);
    stream->created = 1;
    stream->cinfo.client_data = stream;
    stream->source.init_source = wi_source_init;
    stream->source.fill_input_buffer = wi_source_fill;
    stream->source.skip_input_data = wi_source_skip;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = wi_source_term;
    stream->source.next_input_byte = NULL;
    stream->source.bytes_in_buffer = 0;
    stream->cinfo.src = &stream->source;
    return stream;
}

void wi_jpeg_stream_destroy(wi_jpeg_stream *stream) {
    if (stream == NULL) return;
    if (stream->created) jpeg_destroy_decompress(&stream->cinfo);
    free(stream->data);
    free(stream);
}

wi_status wi_jpeg_stream_append(wi_jpeg_stream *stream, const uint8_t *bytes, size_t length, int is_final,
                                char *message) {
    if (stream->is_final) {
        wi_stream_set_message(message, "data already final");
        return WI_ERROR;
    }
    struct jpeg_source_mgr *src = &stream->source;
    int pointing_at_data = src->next_input_byte != NULL && src->next_input_byte != wi_fake_eoi;
    size_t consumed = pointing_at_data ? (size_t)(src->next_input_byte - stream->data) : 0;
    if (length > SIZE_MAX - stream->size) {
        wi_stream_set_message(message, "data too large");
        return WI_NO_MEMORY;
    }
    size_t needed = stream->size + length;
    if (needed > stream->capacity) {
        size_t capacity = stream->capacity < 65536 ? 65536 : stream->capacity;
        while (capacity < needed) capacity = capacity > SIZE_MAX / 2 ? needed : capacity * 2;
        uint8_t *grown = realloc(stream->data, capacity);
        if (grown == NULL) {
            wi_stream_set_message(message, "out of memory");
            return WI_NO_MEMORY;
        }
        stream->data = grown;
        stream->capacity = capacity;
    }
    if (length > 0) memcpy(stream->data + stream->size, bytes, length);
    stream->size = needed;
    stream->is_final = is_final ? 1 : 0;
    // Skips libjpeg asked for past the old end come out of the new data first.
    size_t available = stream->size - consumed;
    size_t skip = stream->skip_pending < available ? stream->skip_pending : available;
    stream->skip_pending -= skip;
    src->next_input_byte = stream->data + consumed + skip;
    src->bytes_in_buffer = available - skip;
    return WI_OK;
}

wi_status wi_jpeg_stream_read_header(wi_jpeg_stream *stream, wi_jpeg_header *header, char *message) {
    j_decompress_ptr cinfo = &stream->cinfo;
    if (setjmp(stream->err.jump)) {
        wi_stream_format_error(stream, message);
        return WI_ERROR;
    }
    if (!stream->header_read) {
        if (stream->source.next_input_byte == NULL) return WI_NEED_DATA;
        if (jpeg_read_header(cinfo, TRUE) == JPEG_SUSPENDED) return WI_NEED_DATA;
        stream->header_read = 1;
    }
    wi_jpeg_describe_header(cinfo, header);  // idempotent: the same colour space on every call
    return WI_OK;
}

wi_status wi_jpeg_stream_start(wi_jpeg_stream *stream, uint32_t *output_width, uint32_t *output_height,
                               char *message) {
    j_decompress_ptr cinfo = &stream->cinfo;
    if (!stream->header_read) {
        wi_stream_set_message(message, "start needs the header");
        return WI_ERROR;
    }
    if (setjmp(stream->err.jump)) {
        wi_stream_format_error(stream, message);
        return WI_ERROR;
    }
    if (!stream->started) {
        // A single-scan file needs no coefficient buffer: its rows come out as the data arrives.
        stream->direct = jpeg_has_multiple_scans(cinfo) ? 0 : 1;
        cinfo->buffered_image = stream->direct ? FALSE : TRUE;
        if (!jpeg_start_decompress(cinfo)) return WI_NEED_DATA;
        stream->started = 1;
    }
    *output_width = cinfo->output_width;
    *output_height = cinfo->output_height;
    return WI_OK;
}

/// Direct (single-scan) mode: reads the rows the data so far holds into `pixels`, resuming at the row where
/// the previous call suspended; rows not reached are left as they are. libjpeg errors longjmp to the caller.
static wi_status wi_stream_render_direct(wi_jpeg_stream *stream, uint8_t *pixels, size_t stride, int *rendered,
                                         int *is_complete) {
    j_decompress_ptr cinfo = &stream->cinfo;
    while (!stream->rows_done && cinfo->output_scanline < cinfo->output_height) {
        if (wi_jpeg_read_rgba_rows(cinfo, pixels, stride) == 0) break;  // suspended: the next append resumes here
        *rendered = 1;
    }
    if (cinfo->output_scanline >= cinfo->output_height) stream->rows_done = 1;
    if (stream->rows_done && jpeg_finish_decompress(cinfo)) {  // reads on to EOI; may suspend
        stream->finished = 1;
        *is_complete = 1;
    }
    return WI_OK;
}

uint32_t wi_jpeg_stream_warnings(const wi_jpeg_stream *stream) { return stream->err.warnings; }

uint32_t wi_jpeg_stream_rows_decoded(const wi_jpeg_stream *stream) {
    if (!stream->started) return 0;
    if (stream->direct) return stream->rows_done ? stream->cinfo.output_height : stream->cinfo.output_scanline;
    return stream->last_rendered_scan > 0 ? stream->cinfo.output_height : 0;
}

wi_status wi_jpeg_stream_render(wi_jpeg_stream *stream, uint8_t *pixels, size_t stride, int *rendered,
                                int *is_complete, uint32_t *scans_rendered, char *message) {
    j_decompress_ptr cinfo = &stream->cinfo;
    *rendered = 0;
    *is_complete = stream->finished;
    *scans_rendered = (uint32_t)stream->last_rendered_scan;
    if (!stream->started || stream->finished) {
        if (!stream->started) wi_stream_set_message(message, "render needs a started stream");
        return stream->started ? WI_OK : WI_ERROR;
    }
    if (stride < (size_t)cinfo->output_width * 4) {
        wi_stream_set_message(message, "row stride too small");
        return WI_ERROR;
    }
    if (setjmp(stream->err.jump)) {
        wi_stream_format_error(stream, message);
        return WI_ERROR;
    }
    if (stream->direct) return wi_stream_render_direct(stream, pixels, stride, rendered, is_complete);
    if (stream->finish_pending) {
        if (!jpeg_finish_output(cinfo)) return WI_OK;  // still waiting for the next scan's header
        stream->finish_pending = 0;
    }
    // Absorb what has arrived, counting completed scans (a scan is complete once the next one started).
    int reached_eoi = jpeg_input_complete(cinfo);
    while (!reached_eoi) {
        int result = jpeg_consume_input(cinfo);
        if (result == JPEG_SUSPENDED) break;
        if (cinfo->input_scan_number > WI_JPEG_MAX_SCANS) {
            wi_stream_set_message(message, "too many scans");
            return WI_LIMIT_EXCEEDED;
        }
        if (result == JPEG_SCAN_COMPLETED && cinfo->input_scan_number > stream->last_completed_scan) {
            stream->last_completed_scan = cinfo->input_scan_number;
        }
        if (result == JPEG_REACHED_EOI) reached_eoi = 1;
    }
    if (cinfo->input_scan_number - 1 > stream->last_completed_scan) stream->last_completed_scan = cinfo->input_scan_number - 1;
    if (reached_eoi) stream->last_completed_scan = cinfo->input_scan_number;
    int target = stream->last_completed_scan;
    if (target == 0 || (target <= stream->last_rendered_scan && !reached_eoi)) return WI_OK;
    // Output a completed scan: its coefficients are all buffered, so the output pass never suspends.
    // Intermediate scans are previews: the fast integer IDCT and no block smoothing make each about twice as
    // cheap. The final pass uses libjpeg's defaults (accurate IDCT; smoothing never applies once every
    // coefficient is known), so the finished image equals a one-shot decode.
    cinfo->dct_method = reached_eoi ? JDCT_ISLOW : JDCT_IFAST;
    cinfo->do_block_smoothing = reached_eoi ? TRUE : FALSE;
    jpeg_start_output(cinfo, target);
    while (cinfo->output_scanline < cinfo->output_height) {
        if (wi_jpeg_read_rgba_rows(cinfo, pixels, stride) == 0) break;
    }
    for (JDIMENSION y = cinfo->output_scanline; y < cinfo->output_height; y++) {
        memset(pixels + (size_t)y * stride, 0, (size_t)cinfo->output_width * 4);
    }
    stream->last_rendered_scan = target;
    *rendered = 1;
    *scans_rendered = (uint32_t)target;
    if (!jpeg_finish_output(cinfo)) {
        stream->finish_pending = 1;  // it reads on to the next scan's header; finished on a later call
        return WI_OK;
    }
    if (reached_eoi) {
        jpeg_finish_decompress(cinfo);
        stream->finished = 1;
        *is_complete = 1;
    }
    return WI_OK;
}
