/*
 * analysis/op_cost.c - FLOPs and bytes of a CPU op from its shapes (op_cost.h).
 *
 * The args are the compact JSON the trace reader keeps (trace.h tr_event_arg): Input
 * Dims a list of per-input dimension lists ("[[8944, 1024], [1024, 2816], []]", a tensor
 * list nested one deeper), Input type and Concrete Inputs lists of strings. Each formula
 * kind reads the inputs its model names; TraceLens's conventions where they exist
 * (docs/roofline.md), so its figures can be checked against ours.
 */
#include "analysis/op_cost.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/limits.h"

#define TYPE_NAME_MAX 64u   /* longest Input type spelling compared with the dtypes */
#define CONCRETE_MAX 64u    /* longest Concrete Inputs entry read (a bool, a ScalarType code) */
#define MAX_DIM (1ll << 40) /* one dimension past this is absurd */

/* One input of the op as Input Dims and Input type give it. */
typedef struct tensor {
  bool usable; /* a flat list of sane dimensions and a known dtype */
  int rank;
  int64_t dims[AN_MAX_SHAPE_RANK];
  double elems;
  const te_dtype *dtype;
} tensor;

typedef struct op_inputs {
  size_t n;
  tensor t[AN_MAX_OP_INPUTS];
  size_t n_concrete;
  char concrete[AN_MAX_OP_INPUTS][CONCRETE_MAX];
} op_inputs;

/* ------------------------------------------------------------------ parsing */

static const char *skip_ws(const char *p) {
  while (*p == ' ') p++;
  return p;
}

/* After a list item: the next item, the closing ']' (not consumed), or NULL when neither
 * follows. */
static const char *next_item(const char *p) {
  p = skip_ws(p);
  if (*p == ',') return skip_ws(p + 1);
  return *p == ']' ? p : NULL;
}

/* A non-negative integer below MAX_DIM; NULL when the text is not one. */
static const char *parse_dim(const char *p, int64_t *out) {
  int64_t v = 0;
  if (*p < '0' || *p > '9') return NULL;
  for (; *p >= '0' && *p <= '9'; p++) {
    v = v * 10 + (*p - '0');
    if (v > MAX_DIM) return NULL;
  }
  *out = v;
  return p;
}

/* The end of the bracketed value at p ('['), nested brackets included; NULL if unclosed. */
static const char *skip_list(const char *p) {
  int depth = 0;
  for (; *p; p++) {
    if (*p == '[') depth++;
    if (*p == ']' && --depth == 0) return p + 1;
    if (*p == '"') return NULL; /* strings are not dimensions */
  }
  return NULL;
}

/* One entry of Input Dims at p ('['): a flat list fills t; a nested one (a tensor list)
 * or a bad dimension leaves t unusable. Returns the text after the entry, NULL when it
 * does not parse. */
static const char *parse_entry(const char *p, tensor *t) {
  const char *end = skip_list(p);
  if (!end) return NULL;
  t->rank = 0;
  t->elems = 1;
  t->usable = true;
  p = skip_ws(p + 1);
  if (*p == '[') {
    t->usable = false; /* a tensor list */
    return end;
  }
  while (*p != ']') {
    int64_t d;
    const char *q = parse_dim(p, &d);
    if (!q || t->rank == (int)AN_MAX_SHAPE_RANK) {
      t->usable = false;
      return end;
    }
    t->dims[t->rank++] = d;
    t->elems *= (double)d;
    p = skip_ws(q);
    if (*p == ',')
      p = skip_ws(p + 1);
    else if (*p != ']')
      return NULL;
  }
  if (t->elems > (double)AN_MAX_TENSOR_ELEMENTS) t->usable = false;
  return end;
}

static bool parse_dims(const char *p, op_inputs *in) {
  in->n = 0;
  if (!p || *p != '[') return false;
  p = skip_ws(p + 1);
  while (*p != ']') {
    if (*p != '[' || in->n == AN_MAX_OP_INPUTS) return false;
    p = parse_entry(p, &in->t[in->n++]);
    if (!p || !(p = next_item(p))) return false;
  }
  return true;
}

/* One JSON string at p ('"') into out (cut at cap - 1; an escape other than \" \\ makes
 * it unusable: '\1'). Returns the text after it, NULL when unterminated. */
static const char *parse_string(const char *p, char *out, size_t cap) {
  size_t n = 0;
  bool odd = false;
  for (p++; *p && *p != '"'; p++) {
    char c = *p;
    if (c == '\\') {
      c = *++p;
      if (!c) return NULL;
      if (c != '"' && c != '\\') odd = true;
    }
    if (n + 1 < cap)
      out[n++] = c;
    else
      odd = true;
  }
  if (*p != '"') return NULL;
  out[n] = '\0';
  if (odd) out[0] = '\1', out[1] = '\0';
  return p + 1;
}

bool an_op_input_dims(const char *p, size_t i, int64_t *out, size_t cap, size_t *rank) {
  tensor t;
  if (!p || *p != '[') return false;
  p = skip_ws(p + 1);
  for (size_t k = 0; *p == '['; k++) {
    p = parse_entry(p, &t);
    if (!p) return false;
    if (k == i) {
      if (!t.usable || (size_t)t.rank > cap) return false;
      memcpy(out, t.dims, (size_t)t.rank * sizeof *out);
      *rank = (size_t)t.rank;
      return true;
    }
    if (!(p = next_item(p))) return false;
  }
  return false;
}

/* A list of strings; each goes to emit(ctx, i, text). False when it does not parse. */
static bool parse_strings(const char *p, void (*emit)(void *, size_t, const char *), void *ctx) {
  char buf[TYPE_NAME_MAX > CONCRETE_MAX ? TYPE_NAME_MAX : CONCRETE_MAX];
  if (!p || *p != '[') return false;
  p = skip_ws(p + 1);
  for (size_t i = 0; *p != ']'; i++) {
    if (*p != '"' || i == AN_MAX_OP_INPUTS || !(p = parse_string(p, buf, sizeof buf))) return false;
    emit(ctx, i, buf);
    if (!(p = next_item(p))) return false;
  }
  return true;
}

typedef struct type_ctx {
  const te_rules *rules;
  op_inputs *in;
} type_ctx;

static void emit_type(void *ctx, size_t i, const char *s) {
  type_ctx *c = ctx;
  if (i < c->in->n) c->in->t[i].dtype = te_rules_dtype(c->rules, s);
}

static void emit_concrete(void *ctx, size_t i, const char *s) {
  op_inputs *in = ctx;
  snprintf(in->concrete[i], CONCRETE_MAX, "%s", s);
  in->n_concrete = i + 1;
}

/* The inputs of an op from its args; false when Input Dims or Input type do not parse. */
static bool parse_types(const te_rules *rules, const char *types, const char *concrete,
                        op_inputs *in);
static bool parse_inputs(const te_rules *rules, const char *dims, const char *types,
                         const char *concrete, op_inputs *in) {
  return parse_dims(dims, in) && parse_types(rules, types, concrete, in);
}

/* Input type (and Concrete Inputs) onto the inputs parse_dims read; false when Input type
 * does not parse. */
static bool parse_types(const te_rules *rules, const char *types, const char *concrete,
                        op_inputs *in) {
  for (size_t i = 0; i < in->n; i++) in->t[i].dtype = NULL;
  type_ctx tc = {rules, in};
  if (!parse_strings(types, emit_type, &tc)) return false;
  for (size_t i = 0; i < in->n; i++)
    if (!in->t[i].dtype) in->t[i].usable = false; /* "Scalar", "", an unknown format */
  in->n_concrete = 0;
  if (concrete && *concrete && !parse_strings(concrete, emit_concrete, in)) in->n_concrete = 0;
  return true;
}

/* ------------------------------------------------------------------ formulas */

/* Input i when it is a usable tensor of rank at least min_rank (-1: any), else NULL. */
static const tensor *input(const op_inputs *in, int i, int min_rank) {
  if (i < 0 || (size_t)i >= in->n || !in->t[i].usable) return NULL;
  return in->t[i].rank >= min_rank ? &in->t[i] : NULL;
}

static double tensor_bytes(const tensor *t) { return t->elems * t->dtype->bytes; }

/* Concrete Inputs[i], or NULL when absent or empty. */
static const char *concrete_at(const op_inputs *in, int i) {
  if (i < 0 || (size_t)i >= in->n_concrete || !in->concrete[i][0]) return NULL;
  return in->concrete[i];
}

/* Bytes of the inputs in list (each must be a tensor; an absent optional one, such as a
 * bias left None, adds nothing). */
static double list_bytes(const op_inputs *in, const int *list, size_t n) {
  double b = 0;
  for (size_t k = 0; k < n; k++) {
    const tensor *t = input(in, list[k], 0);
    if (t) b += tensor_bytes(t);
  }
  return b;
}

static const te_dtype *gemm_out_dtype(const te_rules *rules, const te_op_cost *m,
                                      const op_inputs *in, const tensor *a) {
  if (m->out_dtype) return m->out_dtype;
  const char *code = concrete_at(in, m->out_dtype_arg);
  if (code) {
    char *end;
    long v = strtol(code, &end, 10);
    const te_dtype *d = *end ? NULL : te_rules_dtype_by_code(rules, v);
    if (d) return d;
  }
  const tensor *out = input(in, m->out, 0);
  return out ? out->dtype : a->dtype;
}

/* (batch, M, N, K) of A x B, or false when the shapes do not multiply. */
static bool gemm_dims(const te_op_cost *m, const tensor *a, const tensor *b, double *batch,
                      double *mm, double *nn, double *kk) {
  int64_t k2, n;
  if (b->rank == 3) {
    if (a->rank != 3 || a->dims[0] != b->dims[0]) return false;
    *batch = (double)a->dims[0];
    *mm = (double)a->dims[1];
  } else {
    *batch = 1;
    *mm = a->elems / (double)(a->dims[a->rank - 1] ? a->dims[a->rank - 1] : 1);
    if (a->dims[a->rank - 1] == 0) *mm = 0;
  }
  int r = b->rank;
  n = m->b_nk ? b->dims[r - 2] : b->dims[r - 1];
  k2 = m->b_nk ? b->dims[r - 1] : b->dims[r - 2];
  *nn = (double)n;
  *kk = (double)a->dims[a->rank - 1];
  return a->dims[a->rank - 1] == k2;
}

/* A and B of a gemm model, and (batch, M, N, K); false when the shapes do not multiply. */
static bool gemm_operands(const te_op_cost *m, const op_inputs *in, const tensor **pa,
                          const tensor **pb, double *batch, double *mm, double *nn, double *kk) {
  const tensor *a = *pa = input(in, m->a, 2), *b = *pb = input(in, m->b, 2);
  if (!a || !b || b->rank > 3) return false;
  return gemm_dims(m, a, b, batch, mm, nn, kk);
}

static bool cost_gemm(const te_rules *rules, const te_op_cost *m, const op_inputs *in,
                      an_op_cost *out) {
  const tensor *a, *b;
  double batch, mm, nn, kk;
  if (!gemm_operands(m, in, &a, &b, &batch, &mm, &nn, &kk)) return false;
  const te_dtype *od = gemm_out_dtype(rules, m, in, a);
  out->flops = 2 * batch * mm * nn * kk;
  out->bytes = tensor_bytes(a) + tensor_bytes(b) + batch * mm * nn * od->bytes;
  const tensor *bias = input(in, m->bias, 1);
  if (bias) {
    out->flops += batch * mm * nn; /* the bias add, as TraceLens counts it */
    out->bytes += tensor_bytes(bias);
  }
  out->bytes += list_bytes(in, m->reads, m->n_reads);
  out->dtype = a->dtype;
  return true;
}

/* Causal from the model or Concrete Inputs ("True" / "False"); false when unknown. */
static bool causal_of(const te_op_cost *m, const op_inputs *in, bool *causal) {
  if (m->causal_arg < 0) {
    *causal = m->causal;
    return true;
  }
  const char *s = concrete_at(in, m->causal_arg);
  if (!s || (strcmp(s, "True") && strcmp(s, "False"))) return false;
  *causal = !strcmp(s, "True");
  return true;
}

static bool cost_attention(const te_op_cost *m, const op_inputs *in, an_op_cost *out) {
  const tensor *q = input(in, m->q, 4), *k = input(in, m->k, 4), *v = input(in, m->v, 4);
  bool causal;
  if (!q || !k || !v || q->rank != 4 || k->rank != 4 || v->rank != 4 || !causal_of(m, in, &causal))
    return false;
  int s = m->bshd ? 1 : 2, h = m->bshd ? 2 : 1; /* sequence and head axes */
  double b = (double)q->dims[0], hq = (double)q->dims[h], sq = (double)q->dims[s];
  double skv = (double)k->dims[s], d = (double)q->dims[3], dv = (double)v->dims[3];
  if (k->dims[3] != q->dims[3] || k->dims[0] != q->dims[0] || v->dims[s] != k->dims[s])
    return false;
  out->flops = 2 * b * hq * sq * skv * (d + dv) * (causal ? 0.5 : 1.0);
  out->bytes =
      tensor_bytes(q) + tensor_bytes(k) + tensor_bytes(v) + b * hq * sq * dv * q->dtype->bytes;
  out->dtype = q->dtype;
  out->attn_head_dim = d;
  out->attn_kv_len = skv;
  out->attn_causal = causal;
  return true;
}

/* Expected distinct experts hit by rows routings over e experts (uniform routing). */
static double experts_touched(double e, double rows) {
  return e * (1.0 - pow(1.0 - 1.0 / e, rows));
}

static bool cost_grouped(const te_op_cost *m, const op_inputs *in, an_op_cost *out) {
  const tensor *x = input(in, m->tokens, 2), *ids = input(in, m->topk, 2);
  if (!x || !ids || x->rank != 2 || m->topk_dim >= ids->rank || ids->dims[0] != x->dims[0])
    return false;
  double rows = (double)x->dims[0] * (double)ids->dims[m->topk_dim];
  out->flops = out->bytes = 0;
  out->dtype = NULL;
  for (size_t i = 0; i < m->n_weights; i++) {
    const tensor *w = input(in, m->weights[i], 3);
    if (!w || w->rank != 3 || w->dims[0] == 0) return false;
    double e = (double)w->dims[0];
    double n = (double)(m->weights_kn ? w->dims[2] : w->dims[1]);
    double k = (double)(m->weights_kn ? w->dims[1] : w->dims[2]);
    out->flops += 2 * rows * n * k;
    out->bytes +=
        experts_touched(e, rows) * n * k * w->dtype->bytes + rows * (k + n) * x->dtype->bytes;
    if (!out->dtype) out->dtype = w->dtype;
  }
  return m->n_weights > 0;
}

static bool cost_elementwise(const te_op_cost *m, const op_inputs *in, an_op_cost *out) {
  const tensor *largest = NULL;
  out->bytes = 0;
  for (size_t i = 0; i < (m->reads_all ? in->n : m->n_reads); i++) {
    int at = m->reads_all ? (int)i : m->reads[i];
    const tensor *t = input(in, at, 0);
    if (!t && !m->reads_all) return false; /* a named input that is no tensor */
    if (!t) continue;
    out->bytes += tensor_bytes(t);
    if (!largest || t->elems > largest->elems) largest = t;
  }
  if (!largest) return false;
  double written = largest->elems;
  if (m->writes == TE_WRITES_LARGEST) out->bytes += tensor_bytes(largest);
  if (m->writes == TE_WRITES_LIST) {
    written = 0;
    for (size_t i = 0; i < m->n_writes; i++) {
      const tensor *t = input(in, m->write_inputs[i], 0);
      if (!t) return false;
      out->bytes += tensor_bytes(t);
      written += t->elems;
    }
  }
  out->flops = written * m->flops_per_element;
  out->dtype = out->flops > 0 ? largest->dtype : NULL;
  return true;
}

/* String i of a JSON list of strings into out (cap bytes); false when absent or unparsed. */
typedef struct pick_ctx {
  size_t want;
  char *out;
  size_t cap;
  bool found;
} pick_ctx;

static void emit_pick(void *ctx, size_t i, const char *s) {
  pick_ctx *c = ctx;
  if (i != c->want) return;
  snprintf(c->out, c->cap, "%s", s);
  c->found = true;
}

static bool string_at(const char *list, int i, char *out, size_t cap) {
  pick_ctx c = {(size_t)i, out, cap, false};
  return i >= 0 && parse_strings(list, emit_pick, &c) && c.found;
}

/* The output elements of a gather: the shape a child op states, else the source with one
 * dimension replaced by the index tensor's elements. */
static bool gather_out_elems(const te_op_cost *m, const op_inputs *in, const tensor *src,
                             const char *shape, double *elems) {
  if (m->shape_from) {
    char size[CONCRETE_MAX];
    tensor t;
    if (!string_at(shape, m->shape_arg, size, sizeof size) || size[0] != '[' ||
        !parse_entry(size, &t) || !t.usable)
      return false;
    *elems = t.elems;
    return true;
  }
  const tensor *idx = input(in, m->index, 0);
  long dim = m->dim;
  const char *d = concrete_at(in, m->dim_arg);
  if (d) {
    char *end;
    dim = strtol(d, &end, 10);
    if (*end) return false;
    if (dim < 0) dim += src->rank;
  }
  if (!idx || dim < 0 || dim >= src->rank || src->dims[dim] == 0) return false;
  *elems = src->elems / (double)src->dims[dim] * idx->elems;
  return true;
}

/* A gather copies its output's elements out of the source: each read once and written
 * once, plus the index tensor when the op names it. No FLOPs. */
static bool cost_gather(const te_op_cost *m, const op_inputs *in, const char *shape,
                        an_op_cost *out) {
  const tensor *src = input(in, m->source, 1);
  double elems;
  if (!src || !gather_out_elems(m, in, src, shape, &elems) ||
      elems > (double)AN_MAX_TENSOR_ELEMENTS)
    return false;
  const tensor *idx = input(in, m->index, 0);
  out->flops = 0;
  out->bytes = 2.0 * elems * src->dtype->bytes + (idx ? tensor_bytes(idx) : 0);
  out->dtype = NULL;
  return true;
}

an_cost_status an_op_cost_eval(const te_rules *rules, const te_op_cost *model, const char *dims,
                               const char *types, const char *concrete, const char *shape,
                               an_op_cost *out) {
  memset(out, 0, sizeof *out);
  if (!dims || !*dims) return AN_COST_NO_SHAPES;
  op_inputs *in = malloc(sizeof *in);
  if (!in) return AN_COST_BAD; /* out of memory: no roofline for it, the run goes on */
  bool ok = parse_inputs(rules, dims, types, concrete, in);
  if (ok) {
    switch (model->kind) {
      case TE_COST_GEMM:
        ok = cost_gemm(rules, model, in, out);
        break;
      case TE_COST_ATTENTION:
        ok = cost_attention(model, in, out);
        break;
      case TE_COST_GROUPED_GEMM:
        ok = cost_grouped(model, in, out);
        break;
      case TE_COST_GATHER:
        ok = cost_gather(model, in, shape, out);
        break;
      default:
        ok = cost_elementwise(model, in, out);
        break;
    }
  }
  free(in);
  ok = ok && isfinite(out->flops) && isfinite(out->bytes) && out->bytes > 0;
  if (!ok) memset(out, 0, sizeof *out);
  return ok ? AN_COST_OK : AN_COST_BAD;
}

bool an_op_shape_read(const te_rules *rules, const te_op_cost *model, const char *dims,
                      const char *types, an_op_shape *out, double *elems) {
  memset(out, 0, sizeof *out);
  if (!dims || !*dims) return true;
  op_inputs *in = malloc(sizeof *in);
  if (!in) return false;
  if (parse_dims(dims, in)) {
    out->parsed = true;
    out->n_elems = in->n;
    /* before the types: an input of no known format still has its element count */
    for (size_t i = 0; i < in->n; i++)
      elems[i] = in->t[i].usable && in->t[i].rank > 0 ? in->t[i].elems : 0;
    if (parse_types(rules, types, NULL, in)) {
      const tensor *a, *b;
      an_gemm_shape *g = &out->gemm;
      out->is_gemm = model && model->kind == TE_COST_GEMM &&
                     gemm_operands(model, in, &a, &b, &g->batch, &g->m, &g->n, &g->k);
      if (out->is_gemm)
        g->dtype = a->dtype;
      else
        memset(g, 0, sizeof *g);
      for (size_t i = 0; i < in->n; i++) {
        const tensor *t = input(in, (int)i, 1);
        double d = t ? (double)t->dims[t->rank - 1] : 0;
        if (d > 0 && (!out->small_dtype || d < out->last_dim))
          out->last_dim = d, out->small_dtype = t->dtype;
      }
    }
  }
  free(in);
  return true;
}
