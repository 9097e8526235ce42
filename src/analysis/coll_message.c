/* analysis/coll_message.c - see coll_message.h. */
#include "analysis/coll_message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/op_cost.h"
#include "analysis/op_nest.h"
#include "util/limits.h"

struct an_coll_messages {
  const tr_trace *t;
  const te_rules *rules;
  an_strtab *strings;
  const te_matcher *op;     /* collective_message_op */
  const te_matcher *region; /* collective_message_region */
  an_op_nest own, regions;  /* CPU ops, regions around the launch times asked */
  const an_op_nest *nest;   /* the CPU ops': own, or the caller's of every op */
};

/* count elements of the format spelled `type` (the packs' dtypes) in bytes; 0 when the
 * format is not one of them or the count is not a positive number. */
static double message_bytes(const te_rules *rules, double count, const char *type) {
  const te_dtype *d = type && *type ? te_rules_dtype(rules, type) : NULL;
  return d && count > 0 && count == count ? count * d->bytes : 0;
}

static double arg_number(const tr_trace *t, tr_kind kind, const tr_event *e, tr_arg key) {
  tr_str v = tr_event_arg(t, kind, e, key);
  double x = v ? strtod(tr_str_get(t, v), NULL) : 0;
  return x > 0 && x < 1e18 ? x : 0;
}

/* The message of event e's args "In msg nelems", "Group size" and "dtype" (a collective
 * kernel's, or the record_param_comms op's of newer PyTorch), keyed after "what:" when
 * what is not NULL; false when e states no message size. */
static bool args_message(const tr_trace *t, const te_rules *rules, an_strtab *strings, tr_kind kind,
                         const tr_event *e, const char *what, an_coll_message *out) {
  tr_str n = tr_event_arg(t, kind, e, TR_ARG_IN_MSG_NELEMS);
  if (!n) return false;
  const char *dtype = tr_str_get(t, tr_event_arg(t, kind, e, TR_ARG_DTYPE));
  char buf[256];
  int len =
      snprintf(buf, sizeof buf, "%.120s%s%s/%s/%s", what ? what : "", what ? ":" : "",
               tr_str_get(t, n), tr_str_get(t, tr_event_arg(t, kind, e, TR_ARG_GROUP_SIZE)), dtype);
  if (len < 0) return false;
  out->key =
      an_strtab_intern(strings, buf, (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1);
  out->nelems = arg_number(t, kind, e, TR_ARG_IN_MSG_NELEMS);
  out->bytes = message_bytes(rules, strtod(tr_str_get(t, n), NULL), dtype);
  out->group_size = arg_number(t, kind, e, TR_ARG_GROUP_SIZE);
  out->from_kind = kind;
  out->from = e;
  return out->key != NULL;
}

/* The message "what:dims/type" of event e's first input ("Input Dims", "Input type": the
 * message tensor of a record_param_comms op or of a collective's region); false when that
 * input has no shape (a tensor list) or no format. */
static bool input_message(const an_coll_messages *m, tr_kind kind, const tr_event *e,
                          const char *what, an_coll_message *out) {
  const tr_trace *t = m->t;
  const char *dims = tr_str_get(t, tr_event_arg(t, kind, e, TR_ARG_INPUT_DIMS));
  const char *types = tr_str_get(t, tr_event_arg(t, kind, e, TR_ARG_INPUT_TYPE));
  int64_t d[AN_MAX_SHAPE_RANK];
  size_t rank = 0;
  if (!an_op_input_dims(dims, 0, d, AN_MAX_SHAPE_RANK, &rank) || !rank) return false;
  const char *q = strchr(types, '"'); /* the first input's format: ["float", ...] */
  const char *qe = q ? strchr(q + 1, '"') : NULL;
  if (!q || !qe || qe == q + 1) return false; /* an input with no format: not a message */
  char buf[256];
  int len = snprintf(buf, sizeof buf, "%.120s:", what);
  for (size_t i = 0; i < rank && len > 0 && (size_t)len < sizeof buf; i++)
    len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%lld", i ? "x" : "", (long long)d[i]);
  if (len > 0 && (size_t)len < sizeof buf)
    len += snprintf(buf + len, sizeof buf - (size_t)len, "/%.*s", (int)(qe - q - 1), q + 1);
  if (len < 0 || (size_t)len >= sizeof buf) return false;
  char type[64];
  double count = 1;
  snprintf(type, sizeof type, "%.*s", (int)(qe - q - 1), q + 1); /* a longer one: no dtype */
  for (size_t i = 0; i < rank; i++) count *= (double)d[i];
  out->key = an_strtab_intern(m->strings, buf, (size_t)len);
  out->nelems = count > 0 && count < 1e18 ? count : 0;
  out->bytes = message_bytes(m->rules, count, type);
  out->group_size = arg_number(t, kind, e, TR_ARG_GROUP_SIZE);
  out->from_kind = kind;
  out->from = e;
  return out->key != NULL;
}

/* Whether event e (of m's trace) is one matcher x names. */
static bool named_by(const an_coll_messages *m, const te_matcher *x, const tr_event *e) {
  const char *name = e && x ? tr_str_get(m->t, e->name) : NULL;
  return name && te_matcher_match(x, name, strlen(name));
}

an_coll_messages *an_coll_messages_create(const tr_trace *t, const te_rules *rules,
                                          an_strtab *strings, const an_op_nest *ops,
                                          const double *at, size_t n_at) {
  an_coll_messages *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  *m = (an_coll_messages){.t = t,
                          .rules = rules,
                          .strings = strings,
                          .op = te_rules_matcher(rules, "collective_message_op"),
                          .region = te_rules_matcher(rules, "collective_message_region")};
  m->nest = ops ? ops : &m->own;
  bool ok = !m->op || ops || an_op_nest_build_at(&m->own, t, at, n_at) == 0;
  if (ok && m->op && m->region) ok = an_op_nest_build_regions_at(&m->regions, t, at, n_at) == 0;
  if (!ok) {
    an_coll_messages_destroy(m);
    return NULL;
  }
  return m;
}

void an_coll_messages_destroy(an_coll_messages *m) {
  if (!m) return;
  an_op_nest_free(&m->own);
  an_op_nest_free(&m->regions);
  free(m);
}

bool an_coll_message_args(const tr_trace *t, const te_rules *rules, an_strtab *strings,
                          const tr_event *k, an_coll_message *out) {
  *out = (an_coll_message){0};
  return args_message(t, rules, strings, TR_KIND_KERNEL, k, NULL, out);
}

bool an_coll_message_host(an_coll_messages *m, const tr_event *launch, an_coll_message *out) {
  *out = (an_coll_message){0};
  if (!launch || !m || !m->op) return false;
  const tr_event *op = an_op_nest_around(m->nest, launch);
  if (named_by(m, m->op, op)) {
    const tr_event *coll = an_op_nest_enclosing(m->nest, op);
    const char *what = coll ? tr_str_get(m->t, coll->name) : "op";
    if (args_message(m->t, m->rules, m->strings, TR_KIND_CPU_OP, op, what, out) ||
        input_message(m, TR_KIND_CPU_OP, op, what, out))
      return true;
  }
  const tr_event *region = m->region ? an_op_nest_around(&m->regions, launch) : NULL;
  return named_by(m, m->region, region) &&
         input_message(m, TR_KIND_USER_ANNOTATION, region, tr_str_get(m->t, region->name), out);
}

bool an_coll_messages_under(const an_coll_messages *m, const tr_event *launch,
                            const te_matcher *x) {
  if (!m || !launch || !x || !m->op) return false; /* no op index without the op matcher */
  for (const tr_event *op = an_op_nest_around(m->nest, launch); op;
       op = an_op_nest_enclosing(m->nest, op))
    if (named_by(m, x, op)) return true;
  return false;
}
