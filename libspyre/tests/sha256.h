/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4) for the tests' digests of card results: a
 * checked-in digest stands for megabytes of expected output bits.
 */
#ifndef SPYRE_TEST_SHA256_H
#define SPYRE_TEST_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	uint8_t buf[64];
	unsigned int nbuf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* The digest as 64 lowercase hex digits and a NUL. */
void sha256_hex(struct sha256 *s, char out[65]);

#endif
