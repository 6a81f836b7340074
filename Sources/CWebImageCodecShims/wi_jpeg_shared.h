#ifndef WI_JPEG_SHARED_H
#define WI_JPEG_SHARED_H
// libjpeg helpers shared by the one-shot decoder (wi_jpeg.c) and the incremental stream (wi_jpeg_stream.c),
// so both write the same RGBA rows (hence the same pixels). Both must be called inside the caller's setjmp.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>
#include "wi_codec.h"

/// After `jpeg_read_header`: fills `header` from `cinfo` and chooses the output colour space (CMYK for
/// CMYK/YCCK files, converted to RGBA row by row; RGBA otherwise).
void wi_jpeg_describe_header(j_decompress_ptr cinfo, wi_jpeg_header *header);

/// Converts one row of CMYK (as libjpeg outputs it) to opaque RGBA in place. Adobe files (`inverted`) store
/// inverted ink values (255 = no ink), others plain ink amounts.
void wi_jpeg_cmyk_row_to_rgba(uint8_t *row, uint32_t width, int inverted);

/// Reads up to 8 rows at `cinfo->output_scanline` into `pixels` (rows `stride` bytes apart, 4 bytes a pixel),
/// converting CMYK rows to RGBA. Returns the rows read: 0 when a suspending source ran out of data.
JDIMENSION wi_jpeg_read_rgba_rows(j_decompress_ptr cinfo, uint8_t *pixels, size_t stride);

/// As `wi_jpeg_read_rgba_rows`, reading no row at or past `until` (a band's end).
JDIMENSION wi_jpeg_read_rgba_rows_until(j_decompress_ptr cinfo, uint8_t *pixels, size_t stride, JDIMENSION until);

#endif
