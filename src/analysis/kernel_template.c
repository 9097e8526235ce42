/* analysis/kernel_template.c - see kernel_template.h. */
#include "analysis/kernel_template.h"

#include <ctype.h>
#include <string.h>

static an_template_arg trimmed(const char *s, size_t len) {
  while (len && isspace((unsigned char)*s)) s++, len--;
  while (len && isspace((unsigned char)s[len - 1])) len--;
  return (an_template_arg){s, len};
}

/* One more argument s[0..len) into out; false past the limit. */
static bool push_arg(an_template *out, const char *s, size_t len) {
  if (out->n_args >= AN_TEMPLATE_ARGS_MAX) return false;
  out->args[out->n_args++] = trimmed(s, len);
  return true;
}

/* Brackets nest; a template list closes at the '>' of depth 0 ("a<b<c>, d>"). Parentheses
 * and braces count too, so a lambda's "operator()() {lambda()#2}" does not end the list. */
bool an_template_split(const char *name, an_template *out) {
  memset(out, 0, sizeof *out);
  const char *open = name ? strchr(name, '<') : NULL;
  if (!open) return false;
  out->stem_len = (size_t)(open - name);
  int depth = 0;
  const char *arg = open + 1;
  for (const char *p = arg; *p; p++) {
    char c = *p;
    if (c == '<' || c == '(' || c == '[' || c == '{') depth++;
    if ((c == ')' || c == ']' || c == '}') && --depth < 0) return false;
    if (c == '>' && depth-- == 0) {
      out->tail = p + 1;
      return push_arg(out, arg, (size_t)(p - arg));
    }
    if (c == ',' && depth == 0) {
      if (!push_arg(out, arg, (size_t)(p - arg))) return false;
      arg = p + 1;
    }
  }
  return false;
}

bool an_template_arg_differs(const an_template *a, const an_template *b, size_t i) {
  return a->args[i].len != b->args[i].len ||
         memcmp(a->args[i].text, b->args[i].text, a->args[i].len);
}

/* A value or type: letters, digits, '_', ':', '.', '-' and inner spaces ("unsigned int",
 * "2ul", "-2", "at::Half"); never a nested template, call or lambda. */
static bool plain_arg(const an_template_arg *x) {
  if (!x->len) return false;
  for (size_t i = 0; i < x->len; i++) {
    unsigned char c = (unsigned char)x->text[i];
    if (!isalnum(c) && c != '_' && c != ':' && c != '.' && c != '-' && c != ' ') return false;
  }
  return true;
}

bool an_template_same_kernel(const char *a_name, const an_template *a, const char *b_name,
                             const an_template *b) {
  if (a->stem_len != b->stem_len || memcmp(a_name, b_name, a->stem_len) != 0 ||
      a->n_args != b->n_args || strcmp(a->tail, b->tail) != 0)
    return false;
  size_t differing = 0;
  for (size_t i = 0; i < a->n_args; i++) {
    if (!an_template_arg_differs(a, b, i)) continue;
    if (!plain_arg(&a->args[i]) || !plain_arg(&b->args[i])) return false;
    differing++;
  }
  return differing > 0;
}
