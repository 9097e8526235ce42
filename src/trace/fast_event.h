/*
 * trace/fast_event.h - stage 2 of the SIMD scanner: one event object parsed by jumping
 * from token to token over the bitmasks of its chunk (private to src/trace).
 *
 * The fast path of kineto.c. It takes the events it can read exactly as the byte
 * scanner of kineto.c would (the reference): an event wholly inside the chunk, kept
 * strings of plain printable ASCII, numbers in the JSON grammar, any nesting up to
 * FE_MAX_DEPTH in the skipped values. On anything else (an event crossing the chunk's
 * end, an escape or a UTF-8 byte in a kept string, a numeric string for ts, an id with
 * a fraction, a kept container whose text is not already compact JSON (tr_event_arg),
 * bad JSON of any kind) it returns false having changed nothing the reader
 * keeps, and the byte scanner reads the event, errors and repairs included. So both give
 * the same trace by construction; tests/unit/test_trace_scanner.c and the fuzz harness
 * fuzz_scanner check it on every input they have.
 *
 * What it reads is what parse_event of kineto.c reads, member for member, a later
 * member overwriting an earlier one the same way: views into the chunk, valid until the
 * reader moves to the next chunk.
 */
#ifndef TRIAGE_TRACE_FAST_EVENT_H
#define TRIAGE_TRACE_FAST_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/keys.h"
#include "trace/structural.h"
#include "trace/trace.h" /* tr_arg */

/* Containers nested inside an event that the fast path follows (deeper: the byte
 * scanner, which also enforces TR_MAX_JSON_DEPTH). */
#define FE_MAX_DEPTH 64u
/* Longest kept string the fast path copies (longer: the byte scanner, which enforces
 * TR_MAX_STRING_BYTES). */
#define FE_MAX_KEPT_STRING (64u * 1024u)
/* Shapes remembered, values one shape may hold, and the bytes around them. */
#define FE_SHAPES 16u
#define FE_SHAPE_HOLES 40u
#define FE_SHAPE_BYTES 1024u
/* Kept containers remembered (Input Dims, Input type, ...: a few hundred texts recur on
 * most CPU ops, and a short one takes a slot per member after it, which the bytes that
 * choose its slot take in: 256 slots left 17 % of hta's kept containers walked, 1,024 10 %),
 * the longest one remembered, and the bytes from a container's first that choose its slot. */
#define FE_MEMO_SLOTS 1024u
#define FE_MEMO_TEXT 122u
#define FE_MEMO_WINDOW 32u
/* Room the reader gives for the kept containers of one event written anew (fe_chunk). */
#define FE_SCRATCH_BYTES (2u * TR_MAX_ARG_BYTES)

typedef struct fe_text {
  const char *p;
  size_t n;
} fe_text;

/* A remembered container's slot (slot - 1; 0: none) and the text it held then (gen). An
 * event read ahead (fe_ahead_event) notes its slots in the reading-ahead shapes with
 * FE_MEMO_AHEAD set: the reader keeps the ids of those texts apart (fe_memo_id knows none). */
typedef struct fe_memo {
  uint16_t slot;
  uint32_t gen;
} fe_memo;
#define FE_MEMO_AHEAD 0x8000u
_Static_assert(FE_MEMO_SLOTS < FE_MEMO_AHEAD, "a slot number leaves FE_MEMO_AHEAD clear");

/* The members of one event, as kineto.c's parse_event leaves them. */
typedef struct fe_event {
  fe_text ph; /* n = 0 unless the last "ph" was a string */
  fe_text name, cat, pid, tid;
  bool has_name, name_bad, has_cat, has_pid, has_tid;
  int ts_state, dur_state; /* F_ABSENT / F_OK / F_BAD (keys.h) */
  double ts, dur;
  int64_t ext, corr; /* TR_NO_ID when absent */
  int stream_prio;   /* 0 none, 1 from args.cuda_stream, 2 from args.stream */
  fe_text stream;    /* its text when stream_prio > 0 */
  bool has_argname;  /* args.name was a string */
  fe_text argname;
  /* the kept args (tr_arg), as parse_args leaves them: present (mask), dropped for their
   * length (dropped), and each present one's text, compact JSON for a container */
  uint32_t arg_mask, arg_dropped;
  fe_text arg[TR_ARG_COUNT];
  /* per present kept arg: the remembered container that holds its text (slot 0: none) */
  fe_memo arg_memo[TR_ARG_COUNT];
  /* while sampling (tr_trace_sample_text): the texts of args the sample takes, in order */
  bool sampling;
  unsigned n_args, n_sample;
  fe_text sample[2 * SAMPLE_ARGS];
} fe_event;

/* What the fast path remembers from the events it read (opaque): the shapes of events
 * seen lately, the bytes around their values (an event whose bytes match a shape's is read
 * value by value, its member names and punctuation checked by comparing bytes instead of
 * token by token), and kept containers already checked to be compact JSON (one whose bytes
 * are such a text's is that text, without a walk over its tokens). */
typedef struct fe_shapes fe_shapes;

fe_shapes *fe_shapes_create(void);
void fe_shapes_destroy(fe_shapes *s);

/* The id the reader gave the text of a kept container (fe_event.arg_memo) by
 * fe_memo_set_id, as long as its slot still holds that text: 0 when it holds another text
 * by now, or no id was set (slot 0: none). A container's text is interned once while its
 * slot keeps it, not once per event. */
uint32_t fe_memo_id(fe_shapes *s, fe_memo ref);
void fe_memo_set_id(fe_shapes *s, fe_memo ref, uint32_t id);

/* One chunk of the JSON text and its masks (structural.h), room where the compact JSON of
 * kept containers laid out otherwise in the file is written (an event whose texts do not
 * fit is left to the byte scanner), and what the fast path remembers (NULL: nothing). */
typedef struct fe_chunk {
  const uint8_t *buf;
  size_t len;
  const tr_block_masks *masks;
  char *scratch;
  size_t scratch_cap;
  fe_shapes *shapes;
} fe_chunk;

/* Parses the event object whose '{' is at offset off of the chunk, noting what the sample
 * text takes of its args when sampling. true: *ev holds its members and *end the offset
 * just past its '}'. false: the byte scanner must read it. */
bool fe_parse_event(const fe_chunk *c, size_t off, bool sampling, fe_event *ev, size_t *end);

/* ------------------------------------------------------------------ reading ahead
 *
 * The inflate thread reads events ahead (source.h, tr_source_ahead_fn): it parses the
 * events of a chunk's tail with its own shapes before handing the chunk over, as compact
 * records the reader's thread takes instead of parsing those events itself. A record is
 * what fe_parse_event gave for the '{' at its offset (not sampling), so an event taken
 * from a record is read exactly as if parsed there; the reader only takes a record at the
 * offset where it expects its next event, so a record of an object that is not an event
 * (a guessed start, below) is never taken. */

/* A text of the chunk: its offset and length. */
typedef struct fe_span {
  uint32_t off, n;
} fe_span;

/* One event read ahead: fe_event's fields the reader uses, its texts as spans of the
 * chunk (an event with a text outside the chunk, such as a container written anew, is not
 * recorded), the kept args' spans in fe_ahead_list.args from args on, in tr_arg order, and
 * their remembered containers' slots in fe_ahead_list.memo alike. */
typedef struct fe_ahead_rec {
  uint32_t off, end; /* the event's '{' and just past its '}' */
  double ts, dur;
  int64_t ext, corr;
  uint32_t arg_mask, arg_dropped, args;
  uint8_t ts_state, dur_state, stream_prio, flags;
  fe_span ph, name, cat, pid, tid, stream, argname;
} fe_ahead_rec;

/* The records of one chunk, by offset. Owned by the caller; fe_ahead_list_free frees the
 * arrays. */
typedef struct fe_ahead_list {
  fe_ahead_rec *v;
  size_t n, cap;
  fe_span *args;
  fe_memo *memo; /* cap_args of them, beside args */
  size_t n_args, cap_args;
} fe_ahead_list;

/* Empties out, then records the events of the chunk from the first object at or after
 * offset from that follows "}," (the likely next event; a guess, see above), each followed
 * by ',' and the next '{', until one does not read or the chunk ends. Out of memory: stops
 * (records are optional). */
void fe_ahead_read(const fe_chunk *c, size_t from, fe_ahead_list *out);
/* The record of the event at offset off, from *cursor on (records before off are passed
 * over and *cursor moved past the one returned); NULL when none. Inline: the reader asks
 * for every event, and most of a chunk's are before its first record or at the cursor. */
static inline const fe_ahead_rec *fe_ahead_find(const fe_ahead_list *l, size_t *cursor,
                                                size_t off) {
  size_t i = *cursor;
  while (i < l->n && l->v[i].off < off) i++;
  *cursor = i;
  if (i == l->n || l->v[i].off != off) return NULL;
  *cursor = i + 1;
  return &l->v[i];
}
/* *ev as fe_parse_event left it for rec's event in the chunk at buf (not sampling; its
 * remembered containers' slots with FE_MEMO_AHEAD). */
void fe_ahead_event(const fe_ahead_list *l, const fe_ahead_rec *rec, const uint8_t *buf,
                    fe_event *ev);
/* Room for recs records and args spans (fe_ahead_read grows the arrays when a chunk needs
 * more); false when out of memory. */
bool fe_ahead_list_reserve(fe_ahead_list *l, size_t recs, size_t args);
void fe_ahead_list_free(fe_ahead_list *l);

#endif
