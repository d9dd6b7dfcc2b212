/* SPDX-License-Identifier: MIT */
/*
 * Small card programs for the tests, the example and the benchmarks, built
 * at run time in the program format of hw/spyre_isa.h.
 */
#ifndef SPYRE_EXAMPLE_KERNELS_H
#define SPYRE_EXAMPLE_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * y[i] = x[i] * alpha + beta for @n fp32 values (slot 0: x, slot 1: y),
 * spread over up to 32 cores. Returns a malloc'd image, its size in @size.
 */
void *kern_scale_f32(uint64_t n, float alpha, float beta, size_t *size);
/*
 * y = x repeatedly scaled: @reps vector passes of v = v * alpha + beta per
 * tile (a compute-heavy kernel for timelines).
 */
void *kern_scale_rep_f32(uint64_t n, float alpha, float beta, unsigned int reps, size_t *size);
/* z = x + y for @n fp32 values (slots 0, 1: x, y; slot 2: z). */
void *kern_add_f32(uint64_t n, size_t *size);
/*
 * Same as kern_scale_f32 but staging x through the workspace first
 * (LOAD x -> STORE ws -> LOAD ws -> scale -> STORE y): needs a workspace of
 * n * 4 bytes.
 */
void *kern_scale_via_ws_f32(uint64_t n, float alpha, float beta, size_t *size);
/* Reads 128 bytes at @offset of slot 0 and writes them to slot 0: a bounds test. */
void *kern_touch(uint64_t offset, size_t *size);
/*
 * Gathers @bytes from each of slots 1..@nslots-1 into slot 0 at offset
 * k * @bytes (slot 0 holds @nslots * @bytes): a program over many slots.
 */
void *kern_collect(unsigned int nslots, uint32_t bytes, size_t *size);
/*
 * Memory-bound: each of the 32 cores loads its @bytes_per_core share of
 * argument 0 (32 * @bytes_per_core bytes) into its scratchpad, @reps times.
 */
void *kern_read_rep(uint64_t bytes_per_core, unsigned int reps, size_t *size);
/* About 2 ms of device time per instruction on core 0's load unit (slot 0: >= 1 byte). */
void *kern_lsu_busy(unsigned int insns, size_t *size);
/*
 * y = 2x + 1 for @n fp32 values on core 0 (slots x, y). Without @with_token
 * the SFU does not wait for the load it reads: a racy program the card's
 * hazard check refuses.
 */
void *kern_scale_racy_f32(uint32_t n, bool with_token, size_t *size);
/* C (fp32, M x N) = A (fp16, M x K) x B (fp16, K x N) on one core; slots A, B, C. */
void *kern_matmul_f16(uint32_t m, uint32_t n, uint32_t k, size_t *size);
/* Core 0 stores its first @bytes of scratchpad to slot 0 (without writing them first). */
void *kern_store_scratchpad(uint32_t bytes, size_t *size);
/* y[r] = sum of row r of x (fp32, rows x cols) on one core; slots x, y. */
void *kern_sum_rows_f32(uint32_t rows, uint32_t cols, size_t *size);

#endif
