/* util/params.c - see params.h. */
#include "util/params.h"

size_t ut_params_start(const char *s, size_t n) {
  if (!n || s[n - 1] != ')') return n;
  long depth = 0;
  for (size_t k = n; k > 0;) {
    k--;
    if (s[k] == ')')
      depth++;
    else if (s[k] == '(' && --depth == 0)
      return k;
  }
  return n;
}
