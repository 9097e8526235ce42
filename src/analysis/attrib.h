/*
 * analysis/attrib.h - source-location attribution of kernels (docs/reference.md §4.2):
 * kernel -> CPU op (External id) or launch (correlation) -> the Python frames active on
 * that thread -> chosen frame (location) and stack.
 *
 * Resolution is batched: the caller hands every kernel it needs at once so the Python
 * frames of each thread are swept once with sorted probe times (frames sorted by
 * (start, -end), an active list pruned by end time): O((F + Q) log(F + Q)) instead of a
 * scan per kernel. Traces can hold millions of frames.
 *
 * Ownership: an_resolver borrows the trace and the rules (both must outlive it). The
 * strings it returns are interned in the an_strtab given at creation (borrowed, owned
 * by the caller).
 */
#ifndef TRIAGE_ANALYSIS_ATTRIB_H
#define TRIAGE_ANALYSIS_ATTRIB_H

#include <stddef.h>

#include "analysis/strtab.h"
#include "analysis/trace_view.h"
#include "trace/trace.h"
#include "triage/rules.h"

typedef struct an_site_ctx {
  const char *location; /* normalised chosen frame, or "unresolved" */
  const char *cpu_op;   /* CPU op or launch name; "" when none */
  const char *stack;    /* " -> "-joined normalised frames; NULL when unresolved */
} an_site_ctx;

typedef struct an_resolver an_resolver;

/* ids: the trace's id indexes to borrow (must outlive the resolver), or NULL to build
 * its own. */
an_resolver *an_resolver_create(const tr_trace *t, const an_trace_ids *ids, const te_rules *rules,
                                an_strtab *strings);
void an_resolver_destroy(an_resolver *r);

/* Resolves kernels[0..n) into out[0..n). */
an_status an_resolver_resolve(an_resolver *r, const tr_event *const *kernels, size_t n,
                              an_site_ctx *out);

/* The layer of each kernel: the outermost Python frame around its CPU op (else its launch)
 * that is an instance of a module class the trace has several instances of (matcher
 * layer_module_frame: "nn.Module: Qwen3DecoderLayer_3"; with_stack traces), borrowed from
 * the trace; NULL where no such frame is around it (graph replay, no module frames). Two
 * kernels in different layers are two layers' work, whatever runs between them. */
an_status an_resolver_layers(an_resolver *r, const tr_event *const *kernels, size_t n,
                             const char **layer);

/* Frame priority (ladder frame_priority) of a raw frame name, and its normalised form
 * (interned). Exposed for tests and the overlap code. */
int an_frame_priority(an_resolver *r, const char *raw, const char **normalized);

#endif
