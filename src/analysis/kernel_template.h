/*
 * analysis/kernel_template.h - a kernel name's template argument list, split at its
 * top-level commas: "void tbe_fwd<float, float, long, 2ul>" is the stem "void tbe_fwd"
 * and the arguments float, float, long, 2ul. Two runs that launch the same kernel with
 * other template arguments (a table width that changed 2ul -> 5ul) show two names that
 * only this split pairs.
 *
 * Ownership: an an_template points into the name it was split from (keep it alive); no
 * allocation.
 */
#ifndef TRIAGE_ANALYSIS_KERNEL_TEMPLATE_H
#define TRIAGE_ANALYSIS_KERNEL_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/limits.h"

typedef struct an_template_arg {
  const char *text; /* trimmed, not NUL-terminated */
  size_t len;
} an_template_arg;

typedef struct an_template {
  size_t stem_len;  /* the name before its '<' */
  const char *tail; /* what follows the closing '>' (a parameter list, or "") */
  size_t n_args;
  an_template_arg args[AN_TEMPLATE_ARGS_MAX];
} an_template;

/* Splits name's first template argument list. false when the name has none, it is not
 * balanced, or it has more than AN_TEMPLATE_ARGS_MAX arguments. */
bool an_template_split(const char *name, an_template *out);

/* Whether two splits are one kernel with other arguments: the same stem, tail and
 * argument count, at least one argument differing, and each differing argument a plain
 * value or type (a number, "2ul", "float", "unsigned int"): a functor or lambda argument
 * that differs is another kernel, not the same one re-instantiated. */
bool an_template_same_kernel(const char *a_name, const an_template *a, const char *b_name,
                             const an_template *b);

/* Whether argument i differs between the splits. */
bool an_template_arg_differs(const an_template *a, const an_template *b, size_t i);

#endif
