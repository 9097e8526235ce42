/*
 * tests/unit/gzip_member.h - gzip in memory for the reader and scanner tests (a header of
 * static functions: each test is its own executable).
 */
#ifndef TRIAGE_TESTS_GZIP_MEMBER_H
#define TRIAGE_TESTS_GZIP_MEMBER_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* gzip-compresses len bytes as one member; caller frees. */
static unsigned char *gzip_member(const void *data, size_t len, size_t *out_len) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  size_t cap = deflateBound(&zs, (uLong)len) + 64;
  unsigned char *out = malloc(cap);
  zs.next_in = (Bytef *)(uintptr_t)data;
  zs.avail_in = (uInt)len;
  zs.next_out = out;
  zs.avail_out = (uInt)cap;
  cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
  *out_len = cap - zs.avail_out;
  deflateEnd(&zs);
  return out;
}

#endif
