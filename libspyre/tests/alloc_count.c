// SPDX-License-Identifier: MIT
/*
 * Heap allocations of the calling thread, counted through the linker's
 * --wrap of malloc, calloc, realloc and aligned_alloc (see the Makefile),
 * leaving out those the sim backend makes while standing in for the kernel.
 */
#include <stddef.h>

#include "harness.h"

extern _Thread_local int spy_in_backend;
_Thread_local unsigned long test_allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);

static void count(void)
{
	if (!spy_in_backend)
		test_allocs++;
}

void *__wrap_malloc(size_t n)
{
	count();
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	count();
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	count();
	return __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
	count();
	return __real_aligned_alloc(a, n);
}
