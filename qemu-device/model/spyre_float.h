/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Number formats of the Spyre card: IEEE fp16, bfloat16, DLFloat16 and
 * int8/int32, converted to and from fp32 with round-to-nearest-even.
 */
#ifndef SPYRE_FLOAT_H
#define SPYRE_FLOAT_H

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

#endif /* SPYRE_FLOAT_H */
