/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Number formats of the Spyre card: IEEE fp16, bfloat16, DLFloat16 and
 * int8/int32, converted to and from fp32 with round-to-nearest-even.
 */
#ifndef SPYRE_FLOAT_H
#define SPYRE_FLOAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint16_t spyre_f32_to_fp16(float f);
float spyre_fp16_to_f32(uint16_t h);
uint16_t spyre_f32_to_bf16(float f);
float spyre_bf16_to_f32(uint16_t h);
uint16_t spyre_f32_to_dlf16(float f);
float spyre_dlf16_to_f32(uint16_t h);
int8_t spyre_f32_to_int8(float f);
int32_t spyre_f32_to_int32(float f);

/* Bytes per element of an enum spyre_isa_dtype, 0 when invalid. */
size_t spyre_dtype_size(unsigned int dtype);
/* Convert @n elements between a dtype in memory and fp32. */
void spyre_load_f32(float *dst, const uint8_t *src, unsigned int dtype, size_t n);
void spyre_store_f32(uint8_t *dst, const float *src, unsigned int dtype, size_t n);
/*
 * dst (@cols x @rows, dense) = the @rows x @cols matrix at @src (row
 * stride @ld elements) converted and transposed in one pass, the values
 * spyre_load_f32 gives; false (nothing done) where the host has no such
 * path for @dtype (only fp16 and bf16 on AVX2 + F16C hosts have one).
 */
bool spyre_load_f32_transposed(float *dst, const uint8_t *src, unsigned int dtype, size_t rows,
			       size_t cols, size_t ld);

#endif /* SPYRE_FLOAT_H */
