// The loops of ImageCodec's BoxPrefilter (the block averages before a large shrink's filter), in C so they get an
// AVX2 clone (function multiversioning, as wi_resample.h). The Swift loop they replace summed every row's blocks as
// the row came, about 7 ns a block: with the 2-pixel blocks of a 10× shrink, 41 of the 52 ms of CPU of a
// 4000×3000 → 400×300 Lanczos3 resize. Here the rows of a block are summed per column (a plain vector add) and the
// blocks are summed and divided once per block of rows, with its last row (about 10 ms for the same resize). Same
// integers and the same rounding as that loop: the averages are bit-identical.
#ifndef WI_BOX_PREFILTER_H
#define WI_BOX_PREFILTER_H

#include <stdint.h>

/// The rows a `uint16_t` column sum may hold: 257 × 255 = 65535.
#define WI_BOX_COLUMN_ROWS 257

/// A division by a block's pixel count as BoxPrefilter rounds it, `(s * reciprocal + 2^31) >> 32` with
/// `reciprocal = ⌊(2^32 + ⌊count / 2⌋) / count⌋`. When `multiplier` is not 0, `(s * multiplier + bias) >> shift` in
/// 32 bits gives the same result for every sum a block of `count` pixels can have (checked for each of them by
/// `wi_box_make_divisor`), a quarter of the work in vector registers.
typedef struct wi_box_divisor {
    uint64_t reciprocal;
    uint32_t multiplier;
    uint32_t bias;
    uint32_t shift;
} wi_box_divisor;

/// The divisor for blocks of `count` pixels (`count` ≥ 1).
wi_box_divisor wi_box_make_divisor(intptr_t count);

/// `columns[i] = source[i]` when `is_first` is non-zero, else `columns[i] += source[i]`, for `count` values.
void wi_box_add_row(uint16_t *columns, const uint8_t *source, intptr_t count, int is_first);

/// The block averages of one block of rows, into `out` (`⌈pixels / factor⌉` RGBA pixels): each block sums
/// `columns` (the column sums of its earlier rows, or NULL when there are none) and `row` (its last row) over
/// `factor` pixels (the last block over what is left), and is divided by `full` (`last` for the last block).
void wi_box_average(uint8_t *out, const uint16_t *columns, const uint8_t *row, intptr_t pixels, intptr_t factor,
                    wi_box_divisor full, wi_box_divisor last);

/// Adds the column sums of `pixels` RGBA pixels into the blocks' 32-bit sums (`sums[b * 4 + c]`, blocks of
/// `factor` pixels, the last one narrower), wrapping on overflow: for blocks taller than `WI_BOX_COLUMN_ROWS`.
void wi_box_reduce_columns(uint32_t *sums, const uint16_t *columns, intptr_t pixels, intptr_t factor);

/// `out[i]` = `sums[i]` divided by `divisor`, for `count` values, then zeroes the sums.
void wi_box_divide(uint8_t *out, uint32_t *sums, intptr_t count, wi_box_divisor divisor);

#endif
