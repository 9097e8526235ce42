/*
 * trace/keys.h - the member names of an event the readers act on, classified in place,
 * and the states of the fields read from them
 * (private to src/trace: the byte scanner of kineto.c and the fast path of fast_event.c share
 * it, so both read the same members).
 */
#ifndef TRIAGE_TRACE_KEYS_H
#define TRIAGE_TRACE_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace/trace.h" /* tr_arg */

/* The framework-detection sample (tr_trace_sample_text): the first SAMPLE_EVENTS events
 * give their name, cat and pid, and the names and string values of their first
 * SAMPLE_ARGS args; a text longer than SAMPLE_STRING_CAP is left out (4 below the limit
 * so that the last escape or UTF-8 sequence stored cannot cross it). */
#define SAMPLE_EVENTS 256u
#define SAMPLE_ARGS 8u
#define SAMPLE_STRING_CAP (TR_MAX_STRING_BYTES - 4u)

/* A field of the event being read (ts, dur): absent, usable, or present but unusable. */
enum { F_ABSENT = 0, F_OK = 1, F_BAD = 2 };

/* The member names the event and args parsers act on. */
enum {
  K_OTHER = 0,
  K_PH,
  K_NAME,
  K_CAT,
  K_PID,
  K_TID,
  K_TS,
  K_DUR,
  K_ARGS, /* event members */
  K_EXTERNAL_ID,
  K_CORRELATION,
  K_STREAM,
  K_CUDA_STREAM, /* args members */
  K_ARG0         /* K_ARG0 + a tr_arg: the kept args (trace.h) */
};

/* Whether the n bytes at k are those of lit, for a constant n: a few word loads and
 * compares once inlined (memcmp of 3, 6 or 11 bytes stays a library call in GCC 12, and
 * this runs for every member name of a trace). */
static inline bool key_eq(const char *k, const char *lit, size_t n) {
  uint64_t a8, b8;
  uint32_t a4, b4;
  uint16_t a2, b2;
  for (; n >= 8; k += 8, lit += 8, n -= 8) {
    memcpy(&a8, k, 8);
    memcpy(&b8, lit, 8);
    if (a8 != b8) return false;
  }
  if (n >= 4) {
    memcpy(&a4, k, 4);
    memcpy(&b4, lit, 4);
    if (a4 != b4) return false;
    k += 4, lit += 4, n -= 4;
  }
  if (n >= 2) {
    memcpy(&a2, k, 2);
    memcpy(&b2, lit, 2);
    if (a2 != b2) return false;
    k += 2, lit += 2, n -= 2;
  }
  return n == 0 || *k == *lit;
}
#define KEY_EQ(k, lit) key_eq((k), lit, sizeof(lit) - 1)

/* The kept args' member names (tr_arg); K_OTHER for any other. Apart from key_code, which
 * runs for every member, so that it stays small enough to be inlined. */
static int arg_key_code(const char *k, size_t n) {
  switch (n) {
    case 5:
      if (KEY_EQ(k, "dtype")) return K_ARG0 + TR_ARG_DTYPE;
      if (KEY_EQ(k, "bytes")) return K_ARG0 + TR_ARG_BYTES;
      break;
    case 10:
      if (KEY_EQ(k, "Input Dims")) return K_ARG0 + TR_ARG_INPUT_DIMS;
      if (KEY_EQ(k, "Input type")) return K_ARG0 + TR_ARG_INPUT_TYPE;
      if (KEY_EQ(k, "Group size")) return K_ARG0 + TR_ARG_GROUP_SIZE;
      break;
    case 13:
      if (KEY_EQ(k, "In msg nelems")) return K_ARG0 + TR_ARG_IN_MSG_NELEMS;
      break;
    case 14:
      if (KEY_EQ(k, "Out msg nelems")) return K_ARG0 + TR_ARG_OUT_MSG_NELEMS;
      if (KEY_EQ(k, "wait_on_stream")) return K_ARG0 + TR_ARG_WAIT_ON_STREAM;
      break;
    case 15:
      if (KEY_EQ(k, "Concrete Inputs")) return K_ARG0 + TR_ARG_CONCRETE_INPUTS;
      if (KEY_EQ(k, "Collective name")) return K_ARG0 + TR_ARG_COLLECTIVE_NAME;
      break;
    case 18:
      if (KEY_EQ(k, "Process Group Name")) return K_ARG0 + TR_ARG_PG_NAME;
      break;
    case 19:
      if (KEY_EQ(k, "Process Group Ranks")) return K_ARG0 + TR_ARG_PG_RANKS;
      break;
    case 25:
      if (KEY_EQ(k, "Process Group Description")) return K_ARG0 + TR_ARG_PG_DESC;
      break;
    case 33:
      if (KEY_EQ(k, "wait_on_cuda_event_record_corr_id"))
        return K_ARG0 + TR_ARG_WAIT_ON_RECORD_CORR;
      break;
    default:
      break;
  }
  return K_OTHER;
}

static inline int key_code(const char *k, size_t n) {
  switch (n) {
    case 5:
    case 10:
    case 13:
    case 14:
    case 15:
    case 18:
    case 19:
    case 25:
    case 33:
      return arg_key_code(k, n);
    case 2:
      if (KEY_EQ(k, "ph")) return K_PH;
      if (KEY_EQ(k, "ts")) return K_TS;
      break;
    case 3:
      if (KEY_EQ(k, "cat")) return K_CAT;
      if (KEY_EQ(k, "pid")) return K_PID;
      if (KEY_EQ(k, "tid")) return K_TID;
      if (KEY_EQ(k, "dur")) return K_DUR;
      break;
    case 4:
      if (KEY_EQ(k, "name")) return K_NAME;
      if (KEY_EQ(k, "args")) return K_ARGS;
      break;
    case 6:
      if (KEY_EQ(k, "stream")) return K_STREAM;
      break;
    case 11:
      if (KEY_EQ(k, "External id")) return K_EXTERNAL_ID;
      if (KEY_EQ(k, "correlation")) return K_CORRELATION;
      if (KEY_EQ(k, "cuda_stream")) return K_CUDA_STREAM;
      break;
    default:
      break;
  }
  return K_OTHER;
}

#endif
