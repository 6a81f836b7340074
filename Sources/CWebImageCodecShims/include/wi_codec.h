#ifndef WI_CODEC_H
#define WI_CODEC_H
// Every setjmp/longjmp of the codecs lives behind these functions: libjpeg's and libpng's error exits
// longjmp back into C here, and Swift sees a status code plus a message.
//
// Conventions: every function returns a wi_status; on WI_ERROR or WI_NO_MEMORY it writes a NUL-terminated
// message of at most WI_MESSAGE_MAX bytes into `message` (which may be NULL). Sizes are overflow-checked
// before every allocation. Decoder objects are not thread-safe: use one from one thread at a time.
#include <stddef.h>
#include <stdint.h>
// The resampler's loops (their own header; included here so a build whose module cache predates it sees it).
#include "wi_resample.h"
// The box prefilter's loops (their own header, included here for the same reason).
#include "wi_box_prefilter.h"
// The colour stage's matrix-shaper fast path (its own header, included here for the same reason).
#include "wi_color.h"
// AVIF output's RGB → YCbCr conversion (its own header, included here for the same reason).
#include "wi_yuv.h"
// SSIMULACRA2's per-pixel passes (its own header, included here for the same reason).
#include "wi_ssimulacra2.h"
// What 4:2:0 does to an image, for automatic quality (its own header, included here for the same reason).
#include "wi_chroma_detail.h"

/// Status codes returned by every `wi_` codec function.
typedef enum wi_status {
    WI_OK = 0,
    WI_ERROR = 1,      ///< the library reported a fatal error; the message says which
    WI_NEED_DATA = 2,  ///< more input is needed (incremental decoding)
    WI_NO_MEMORY = 3,
    WI_LIMIT_EXCEEDED = 4,  ///< a library-level limit was hit (`WI_JPEG_MAX_SCANS`); the message says which
} wi_status;

/// Most scans a JPEG may have. A progressive file of thousands of tiny scans costs a full pass over the
/// coefficients per scan (minutes of CPU for a few kilobytes); libjpeg-turbo's own tools stop at 500 too
/// (`djpeg -maxscans`). The one-shot decoder counts scans in a progress monitor, the stream as it consumes
/// input; both fail with WI_LIMIT_EXCEEDED and `*scans` (where given) set to the scan that went over.
#define WI_JPEG_MAX_SCANS 500

/// Per-side ceiling libpng enforces on IHDR (`png_set_user_limits`), set explicitly rather than left to how
/// the system libpng was built: 1,000,000 (libpng's usual default; PNG itself allows 2^31-1). It stays far above
/// `DecodeLimits.maxDimension` (checked in Swift before any allocation) so `ImageDecoder.info` still reports a
/// bomb's declared size.
#define WI_PNG_MAX_SIDE 1000000u
/// Most ancillary chunks libpng keeps per image (`png_set_chunk_cache_max`; libpng's default is 1000).
#define WI_PNG_MAX_CACHED_CHUNKS 128u
/// Largest ancillary chunk libpng allocates (`png_set_chunk_malloc_max`): 2 MiB (libpng's default 8 MB).
/// PLTE, tRNS and the rest we read are far smaller; text, ICC and EXIF are skipped unread.
#define WI_PNG_MAX_CHUNK_BYTES (2u << 20)

/// Size of the message buffer callers pass in (libjpeg's JMSG_LENGTH_MAX is 200).
#define WI_MESSAGE_MAX 256

/// Frees memory returned by a `wi_` encoder.
void wi_free(void *pointer);

// MARK: - JPEG decoding (libjpeg-turbo)

/// Header facts of a JPEG, filled by `wi_jpeg_decoder_read_header`.
typedef struct wi_jpeg_header {
    uint32_t width;            ///< image width as stored
    uint32_t height;           ///< image height as stored
    int components;            ///< 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK
    int color_space;           ///< 1 gray, 2 RGB, 3 YCbCr, 4 CMYK, 5 YCCK (libjpeg's J_COLOR_SPACE)
    int is_progressive;        ///< SOF2/SOF10
    int saw_adobe_marker;      ///< an Adobe APP14 marker was seen (CMYK stored inverted)
} wi_jpeg_header;

/// An opaque JPEG decompressor over a memory buffer (the buffer must outlive it).
typedef struct wi_jpeg_decoder wi_jpeg_decoder;

/// Makes a decoder reading `size` bytes at `data`; NULL when out of memory.
wi_jpeg_decoder *wi_jpeg_decoder_create(const uint8_t *data, size_t size);
/// Destroys a decoder (NULL is fine).
void wi_jpeg_decoder_destroy(wi_jpeg_decoder *decoder);
/// Reads the header (`jpeg_read_header`), saving APP1 markers for EXIF.
wi_status wi_jpeg_decoder_read_header(wi_jpeg_decoder *decoder, wi_jpeg_header *header, char *message);
/// The first APP1 marker starting with "Exif\0\0" (payload after that prefix), or NULL/0.
/// Valid after `read_header` until the decoder is destroyed.
void wi_jpeg_decoder_exif(wi_jpeg_decoder *decoder, const uint8_t **bytes, size_t *length);
/// The ICC profile of the APP2 `ICC_PROFILE` chunks (`jpeg_read_icc_profile`), reassembled: `*bytes` is a
/// buffer of `*length` bytes to release with `wi_free`, or NULL when the file has no such chunk. When chunks
/// exist but their sequence does not add up (missing, duplicate or zero sequence numbers, differing counts),
/// `*bytes` is NULL and `*is_invalid` 1: the profile is unusable, the image is not. After `read_header`.
wi_status wi_jpeg_decoder_icc_profile(wi_jpeg_decoder *decoder, uint8_t **bytes, size_t *length, int *is_invalid,
                                      char *message);
/// With `raw` != 0, CMYK and YCCK files decode to their four inks per pixel (C, M, Y, K as stored: inverted
/// when an Adobe marker was seen) for a colour transform, instead of the RGBA formula. Before `decode_rgba`.
void wi_jpeg_decoder_set_raw_cmyk(wi_jpeg_decoder *decoder, int raw);
/// Chooses DCT-domain scaling `scale_num/scale_denom` (1/1, 1/2, 1/4, 1/8, …) and reports the output size
/// (`jpeg_calc_output_dimensions`). Call after `read_header`.
wi_status wi_jpeg_decoder_set_scale(wi_jpeg_decoder *decoder, unsigned scale_num, unsigned scale_denom,
                                    uint32_t *output_width, uint32_t *output_height, char *message);
/// Decodes every row as RGBA8 (opaque; CMYK/YCCK converted to RGB) into `pixels`, rows `stride` bytes apart;
/// the buffer must hold `output_height` rows of at least `output_width * 4` bytes.
/// `rows_decoded` gets the rows written; `warnings` the number of libjpeg warnings; `premature_end` whether
/// the data ended early (libjpeg's "Premature end of JPEG file": the remaining rows are gray/blank).
wi_status wi_jpeg_decoder_decode_rgba(wi_jpeg_decoder *decoder, uint8_t *pixels, size_t stride,
                                      uint32_t *rows_decoded, uint32_t *warnings, int *premature_end,
                                      char *message);

/// The same decode in steps, for a caller that works on rows as they come (the colour stage converts band k
/// on another thread while band k + 1 is decoded): `decode_start` (`jpeg_start_decompress`; checks `stride`
/// against the output width), then `decode_rows` until it reports every row or no progress, then
/// `decode_finish`. The pixels are the ones `decode_rgba` writes. Each step runs once in that order; after a
/// failure only `wi_jpeg_decoder_destroy` may follow.
wi_status wi_jpeg_decoder_decode_start(wi_jpeg_decoder *decoder, size_t stride, char *message);
/// Decodes rows up to (not including) `until_row` into `pixels` (the whole image's buffer, rows `stride` bytes
/// apart); `*rows_decoded` gets the rows written so far. Fewer than asked means libjpeg gave up (a memory source
/// never suspends): call `decode_finish` next.
wi_status wi_jpeg_decoder_decode_rows(wi_jpeg_decoder *decoder, uint8_t *pixels, size_t stride, uint32_t until_row,
                                      uint32_t *rows_decoded, char *message);
/// Clears every row not decoded (the buffer may be uninitialized) and ends the decode (`jpeg_finish_decompress`);
/// `warnings` and `premature_end` as for `decode_rgba`.
wi_status wi_jpeg_decoder_decode_finish(wi_jpeg_decoder *decoder, uint8_t *pixels, size_t stride, uint32_t *warnings,
                                        int *premature_end, char *message);

// MARK: - JPEG streaming (incremental) decoding

/// An opaque incremental JPEG decoder: data is appended as it arrives (copied and kept), a suspending source
/// manager makes libjpeg return instead of blocking. Multi-scan (progressive) files run in buffered-image mode
/// so each completed scan can be rendered as a full image; single-scan (baseline) files are read directly,
/// row by row as the data arrives (each row decoded once; rows not reached are left untouched in the
/// caller's buffer).
typedef struct wi_jpeg_stream wi_jpeg_stream;

/// Makes a stream decoder; NULL when out of memory.
wi_jpeg_stream *wi_jpeg_stream_create(void);
/// Destroys a stream decoder (NULL is fine).
void wi_jpeg_stream_destroy(wi_jpeg_stream *stream);
/// Appends `length` bytes; `is_final` != 0 marks the end of the data (later appends are refused).
wi_status wi_jpeg_stream_append(wi_jpeg_stream *stream, const uint8_t *bytes, size_t length, int is_final,
                                char *message);
/// Reads the header once enough data is there: WI_OK (header filled), WI_NEED_DATA, or WI_ERROR.
wi_status wi_jpeg_stream_read_header(wi_jpeg_stream *stream, wi_jpeg_header *header, char *message);
/// Starts decompression (buffered-image mode) after the header: WI_OK with the output size, WI_NEED_DATA, or
/// WI_ERROR. Call `wi_jpeg_stream_set_scale`-free: output is full size.
wi_status wi_jpeg_stream_start(wi_jpeg_stream *stream, uint32_t *output_width, uint32_t *output_height,
                               char *message);
/// Consumes the data available and, when a scan more than last time is complete (or the image is), renders
/// the image as of that scan into `pixels` (opaque RGBA8, rows `stride` apart) and sets `*rendered` to 1.
/// A single-scan file instead continues reading rows where the previous call stopped (the same buffer, with
/// the earlier rows, must be passed each time) and sets `*rendered` when it read at least one new row.
/// `*is_complete` becomes 1 once the whole image was rendered (the stream is then finished).
/// Intermediate scans render with the fast IDCT and without block smoothing (previews); the final image
/// with libjpeg's defaults, exactly as a one-shot decode.
/// Returns WI_OK (even when nothing new could be rendered) or WI_ERROR.
wi_status wi_jpeg_stream_render(wi_jpeg_stream *stream, uint8_t *pixels, size_t stride, int *rendered,
                                int *is_complete, uint32_t *scans_rendered, char *message);
/// Rows of the output that hold decoded pixels: the rows read so far of a single-scan file; the whole height
/// once a progressive file rendered a scan; 0 before.
uint32_t wi_jpeg_stream_rows_decoded(const wi_jpeg_stream *stream);
/// libjpeg warnings so far (corrupt data it recovered from). Where data is corrupt, how libjpeg recovers can
/// depend on where the input suspended, so a stream with warnings may not match a one-shot decode.
uint32_t wi_jpeg_stream_warnings(const wi_jpeg_stream *stream);

// MARK: - JPEG encoding

/// Encodes RGBA8 pixels (alpha ignored) as JPEG with `quality` 0…100, progressive when `progressive` != 0,
/// full-resolution chroma (4:4:4) when `chroma444` != 0, else 4:2:0; optimised Huffman tables when `optimize` != 0
/// (progressive JPEG always has them). `tables`: 0 = the standard tables of the JPEG spec's Annex K (libjpeg's), 1 =
/// N. Robidoux's table for luma, and for chroma at 4:2:0 (Annex K's chroma table at 4:4:4), scaled by `quality` as libjpeg scales its own and
/// kept baseline (entries ≤ 255).
/// On success `*out` is a buffer of `*out_size` bytes to release with `wi_free`.
wi_status wi_jpeg_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                              int quality, int progressive, int chroma444, int optimize, int tables, uint8_t **out,
                              size_t *out_size, char *message);

// MARK: - PNG decoding (libpng)

/// Header facts of a PNG, filled by `wi_png_decoder_read_info`.
typedef struct wi_png_header {
    uint32_t width;
    uint32_t height;
    int bit_depth;       ///< 1, 2, 4, 8 or 16
    int color_type;      ///< PNG colour type: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
    int is_interlaced;   ///< Adam7
    int has_trns;        ///< a tRNS chunk was read
} wi_png_header;

/// An opaque PNG reader over a memory buffer (the buffer must outlive it).
typedef struct wi_png_decoder wi_png_decoder;

/// Makes a reader of `size` bytes at `data`; NULL when out of memory.
wi_png_decoder *wi_png_decoder_create(const uint8_t *data, size_t size);
/// Destroys a reader (NULL is fine).
void wi_png_decoder_destroy(wi_png_decoder *decoder);
/// Reads the signature and every chunk up to the first IDAT (`png_read_info`).
wi_status wi_png_decoder_read_info(wi_png_decoder *decoder, wi_png_header *header, char *message);
/// Decodes every row as RGBA8 (palette/gray/tRNS expanded, 16 bit reduced to 8, Adam7 de-interlaced) into
/// `pixels`, rows `stride` bytes apart (`height` rows of at least `width * 4` bytes), premultiplying colour
/// by alpha when `premultiply` != 0; then reads to IEND (`png_read_end`).
wi_status wi_png_decoder_decode_rgba(wi_png_decoder *decoder, uint8_t *pixels, size_t stride, int premultiply,
                                     char *message);

/// Decodes a 16-bit PNG as straight RGBA with 16 bits per channel in the machine's byte order (grey expanded,
/// tRNS to alpha, opaque alpha 0xFFFF, Adam7 de-interlaced) into `pixels`, rows `stride` bytes apart (`height`
/// rows of at least `width * 8` bytes), then reads to IEND: for a colour transform before the reduction to 8 bits.
wi_status wi_png_decoder_decode_rgba16(wi_png_decoder *decoder, uint16_t *pixels, size_t stride, char *message);

/// Row-by-row reading (for decoding into a resampler without a full-size buffer): sets the same RGBA8
/// transforms as `decode_rgba` and reports the number of passes (7 for Adam7, else 1). Then call
/// `read_row` passes × height times (for Adam7, each row buffer must keep the previous passes' pixels),
/// then `finish`. Rows come out straight (not premultiplied).
wi_status wi_png_decoder_start_rows(wi_png_decoder *decoder, int *passes, char *message);
/// Reads the next row into `row` (at least `width * 4` bytes).
wi_status wi_png_decoder_read_row(wi_png_decoder *decoder, uint8_t *row, char *message);
/// Reads the chunks after the image data up to IEND (`png_read_end`).
wi_status wi_png_decoder_finish(wi_png_decoder *decoder, char *message);

// MARK: - PNG streaming (incremental) decoding

/// An opaque incremental PNG decoder over libpng's progressive reader (`png_process_data`): bytes are pushed
/// as they arrive (libpng keeps only the few it cannot use yet) and rows are written into the caller's
/// buffer, with the same RGBA8 transforms as `wi_png_decoder_decode_rgba` (straight alpha, never
/// premultiplied: Adam7 combining needs the straight values).
typedef struct wi_png_stream wi_png_stream;

/// How far a PNG stream got, from `wi_png_stream_get_progress`.
typedef struct wi_png_stream_progress {
    uint64_t rows_delivered;  ///< row callbacks that carried pixels (grows with every new row)
    int passes;               ///< 7 for Adam7, 1 otherwise (0 before the header)
    int passes_completed;     ///< passes fully written (Adam7: a coarse full image after each)
    uint32_t rows_in_pass;    ///< rows written so far in the current pass (the height once complete)
    int is_complete;          ///< IEND was reached
    uint32_t warnings;        ///< libpng warnings so far (push mode demotes some one-shot errors, such as a
                              ///< bad zlib checksum after the last row, to warnings)
} wi_png_stream_progress;

/// Makes a stream decoder; NULL when out of memory.
wi_png_stream *wi_png_stream_create(void);
/// Destroys a stream decoder (NULL is fine).
void wi_png_stream_destroy(wi_png_stream *stream);
/// Pushes `length` bytes (`png_process_data`). `*consumed` gets the bytes taken: when the header completes
/// during this call, libpng pauses and the rest must be fed again after the caller checked its limits and
/// allocated the pixel buffer. From then on every call needs `pixels` (height rows, `stride` >= width * 4,
/// zeroed by the caller: rows not reached stay as they are). Returns WI_OK or WI_ERROR (the stream is then
/// dead). Bytes after IEND are ignored.
wi_status wi_png_stream_feed(wi_png_stream *stream, const uint8_t *bytes, size_t length, uint8_t *pixels,
                             size_t stride, size_t *consumed, char *message);
/// 1 and the header once it was read (the transforms are set), else 0.
int wi_png_stream_header(const wi_png_stream *stream, wi_png_header *header);
/// How far the stream got.
void wi_png_stream_get_progress(const wi_png_stream *stream, wi_png_stream_progress *progress);

// MARK: - PNG encoding

/// Encodes straight-alpha RGBA8 pixels as PNG (colour type 6, or 2 when `has_alpha` is 0), Adam7-interlaced
/// when `interlace` != 0. On success `*out` is a buffer of `*out_size` bytes to release with `wi_free`.
wi_status wi_png_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                             int has_alpha, int interlace, uint8_t **out, size_t *out_size, char *message);

#endif
