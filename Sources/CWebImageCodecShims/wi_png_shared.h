#ifndef WI_PNG_SHARED_H
#define WI_PNG_SHARED_H
// libpng helpers shared by the one-shot reader (wi_png.c) and the progressive reader (wi_png_stream.c), so
// both decode with the same error handling, skipped chunks and RGBA8 transforms (hence the same pixels).
#include <png.h>
#include <stdint.h>
#include "wi_codec.h"

/// Where libpng's error text goes (the error pointer of a png struct).
typedef struct wi_png_errors {
    char text[WI_MESSAGE_MAX];
    uint32_t warnings;
} wi_png_errors;

/// Copies libpng's message into the `wi_png_errors` error pointer and longjmps (png_longjmp).
void wi_png_error_fn(png_structp png, png_const_charp text);
/// Counts warnings in the `wi_png_errors` error pointer.
void wi_png_warning_fn(png_structp png, png_const_charp text);
/// Skips, unread, the metadata chunks the decoders never use (see wi_png_decoder_create for why), and sets
/// libpng's limits (WI_PNG_MAX_SIDE, WI_PNG_MAX_CACHED_CHUNKS, WI_PNG_MAX_CHUNK_BYTES).
void wi_png_skip_unused_chunks(png_structp png);
/// Sets the RGBA8 transforms (palette/gray/tRNS expanded, 16 bit scaled, filler alpha) and interlace
/// handling, then `png_read_update_info`; libpng errors longjmp. Returns the pass count (7 for Adam7, else 1).
int wi_png_apply_rgba_transforms(png_structp png, png_infop info, int *has_alpha);

#endif
