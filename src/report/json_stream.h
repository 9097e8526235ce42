/*
 * report/json_stream.h - a JSON document written while it is built, in cJSON_Print's
 * layout byte for byte (tabs, ":\t", ",\n" between members, ", " between elements), so
 * a big array goes out one element at a time and the document's tree never exists
 * whole: a run of 262,145 kernel names held ~900 MB of tree and printed text for its
 * 146 MB report.
 *
 * The caller opens and closes objects and arrays, names members, and hands each small
 * part over as a cJSON tree, which is printed at the current depth (cJSON prints
 * a tree alone at depth 0; inside the document each of its lines moves right by the
 * depth of the place it lands, and a string never holds a raw newline).
 *
 * Ownership: an rp_jstream borrows its FILE; it frees no tree it is given. A failed write
 * or allocation sticks (rp_jstream_ok), and what was written stays written.
 */
#ifndef TRIAGE_REPORT_JSON_STREAM_H
#define TRIAGE_REPORT_JSON_STREAM_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/limits.h" /* RP_JSON_STREAM_DEPTH */

typedef struct rp_jstream {
  FILE *out;
  unsigned depth;     /* cJSON's: +1 inside each object and each array */
  uint64_t has_items; /* bit d: the container at depth d has a member or element */
  uint64_t arrays;    /* bit d: the container at depth d is an array */
  bool ok;
} rp_jstream;

void rp_jstream_init(rp_jstream *w, FILE *out);
/* A document: rp_jstream_init and its top-level object opened; rp_jstream_end closes it,
 * writes the final newline and returns 0, or -1 when !ok or the stream failed. */
void rp_jstream_begin(rp_jstream *w, FILE *out);
int rp_jstream_end(rp_jstream *w, bool ok);
void rp_jstream_object_open(rp_jstream *w);
void rp_jstream_object_close(rp_jstream *w);
void rp_jstream_array_open(rp_jstream *w);
void rp_jstream_array_close(rp_jstream *w);
/* The next member's key inside an object (any text: escaped as cJSON escapes it); its
 * value follows: an open, or rp_jstream_value. */
void rp_jstream_key(rp_jstream *w, const char *key);
/* A value: after a key, or as the next element of an array. */
void rp_jstream_value(rp_jstream *w, const cJSON *v);
/* rp_jstream_value of a part made for it, which is then deleted: the element loop of a
 * streamed list. False when v is NULL (it could not be made; the stream fails too). */
bool rp_jstream_value_take(rp_jstream *w, cJSON *v);
/* Member key: an array of n elements, item(items, i) made, written and freed one at a time
 * (false as soon as one cannot be made). */
typedef cJSON *(*rp_jstream_item)(const void *items, size_t i);
bool rp_jstream_list(rp_jstream *w, const char *key, size_t n, rp_jstream_item item,
                     const void *items);
/* Every member of object o, in order, as key and value. */
void rp_jstream_members(rp_jstream *w, const cJSON *o);
bool rp_jstream_ok(const rp_jstream *w);

#endif
