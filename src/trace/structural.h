/*
 * trace/structural.h - stage 1 of the JSON scanner: 64-byte blocks classified with SIMD
 * (private to src/trace).
 *
 * The simdjson idea: one pass over the decompressed bytes turns every 64-byte block into
 * bitmasks, so the event parser (fast_event.c, stage 2) jumps from token to token with a
 * count of trailing zeros instead of testing bytes one by one. It runs on the inflate
 * thread right after each chunk is inflated (source.c), so on gzip input it costs the
 * scanner thread nothing.
 *
 * Per block two masks, bit i for byte i of the block:
 *   tok      where a token starts: { } [ ] : , outside strings, every quote that is not
 *            escaped (the opening and the closing one of each string), and the first
 *            byte of each scalar (a run of bytes outside strings that are neither
 *            whitespace, one of those six, nor a quote: numbers, true, false, null, and
 *            any garbage, which the parser then refuses);
 *   special  bytes inside strings a stored string cannot take verbatim: the backslash,
 *            bytes below 0x20 and bytes from 0x80.
 * Whitespace is exactly JSON's four bytes. A backslash escapes the next byte wherever it
 * is (as simdjson); outside strings it is garbage anyway.
 *
 * The classification carries its state (inside a string, the next byte escaped, the
 * previous byte part of a scalar) from block to block and from chunk to chunk in
 * tr_struct_state, at byte precision: a chunk may end anywhere.
 *
 * Levels: a portable scalar classifier (also the reference of the tests), SSE2 (the x86-64
 * baseline), AVX2 (chosen at run time when the CPU has it), NEON on aarch64. All give the
 * same masks. TRIAGE_SIMD=scalar|sse2|avx2|neon in the environment caps the level (tests
 * run every level; a machine without AVX2 is simulated with TRIAGE_SIMD=sse2), and
 * TRIAGE_SIMD=off turns the fast path off (kineto.c then reads every byte through lexer.h).
 */
#ifndef TRIAGE_TRACE_STRUCTURAL_H
#define TRIAGE_TRACE_STRUCTURAL_H

#include <stddef.h>
#include <stdint.h>

#define TR_BLOCK 64u /* bytes per block: one bit each in a uint64_t */

typedef struct tr_block_masks {
  uint64_t tok;
  uint64_t special;
} tr_block_masks;

/* What one block hands to the next. Zero = the start of a document. */
typedef struct tr_struct_state {
  uint64_t in_string; /* all ones when the next byte is inside a string, else 0 */
  uint64_t escaped;   /* 1 when the next byte is escaped by a backslash */
  uint64_t scalar;    /* 1 when the previous byte belongs to a scalar */
} tr_struct_state;

typedef enum tr_simd_level {
  TR_SIMD_OFF = -1, /* TRIAGE_SIMD=off: no masks, the byte scanner reads everything */
  TR_SIMD_SCALAR = 0,
  TR_SIMD_SSE2 = 1,
  TR_SIMD_NEON = 2,
  TR_SIMD_AVX2 = 3
} tr_simd_level;

/* The level used by tr_struct_index: the best this CPU and build have, capped by
 * TRIAGE_SIMD (read once); TR_SIMD_OFF when TRIAGE_SIMD=off. */
tr_simd_level tr_simd_level_get(void);
/* The name of a level ("avx2"). */
const char *tr_simd_level_name(tr_simd_level level);
/* Whether this build and CPU can run level. */
int tr_simd_level_available(tr_simd_level level);

/* Classifies buf[0, n) into masks[0, (n + 63) / 64), continuing from *st and leaving in
 * it the state after byte n - 1. A last partial block is classified as if padded with
 * spaces (bits past n are 0). */
void tr_struct_index(tr_struct_state *st, const uint8_t *buf, size_t n, tr_block_masks *masks);
/* The same at a given level (must be available): the tests compare the levels. */
void tr_struct_index_at(tr_simd_level level, tr_struct_state *st, const uint8_t *buf, size_t n,
                        tr_block_masks *masks);

#endif
