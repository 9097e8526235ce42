/*
 * fuzz_names.c - libFuzzer harness for display names (src/report/names.h).
 *
 * Kernel names come from traces, so the demangler and the display code see hostile
 * text: mangled-looking bombs (back-references that double the text at each level),
 * unbalanced brackets, stray UTF-8, names that collide after collapsing. The input is a
 * table of names, one per line (NUL bytes end a name early, as the trace reader would
 * have replaced them). Each name is demangled and displayed alone, then the whole table
 * is displayed, checking the module's promises: no display longer than the cap, equal
 * names equal, different names different. The default rule packs are loaded once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/names.h"
#include "triage/rules.h"
#include "util/limits.h"

#ifndef TRIAGE_SOURCE_DIR
#define TRIAGE_SOURCE_DIR "."
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "fuzz_names: invariant failed: %s (line %d)\n", #cond, __LINE__); \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

/* Most names a table may hold here: the uniqueness check below is quadratic. */
#define MAX_NAMES 256

static const rp_names *names(void) {
  static rp_names *nm;
  if (nm) return nm;
  const char *dir = getenv("TRIAGE_RULES_DIR");
  if (!dir || !*dir) dir = TRIAGE_SOURCE_DIR "/rules";
  te_diags *d = te_diags_create();
  te_rules *r = te_rules_create();
  CHECK(r && d);
  if (te_rules_load_path(r, dir, d) != TE_OK || te_rules_finalize(r, d) != TE_OK) {
    fprintf(stderr, "fuzz_names: cannot load the rule packs of %s\n", dir);
    abort();
  }
  te_diags_destroy(d);
  nm = rp_names_create(r); /* the rules live as long as the process */
  CHECK(nm);
  return nm;
}

static size_t chars(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const rp_names *nm = names();
  char *text = malloc(size + 1);
  const char *full[MAX_NAMES];
  size_t n = 0;
  CHECK(text);
  memcpy(text, data, size);
  text[size] = '\0';
  for (char *p = text; n < MAX_NAMES && p < text + size;) {
    char *nl = memchr(p, '\n', (size_t)(text + size - p));
    if (nl) *nl = '\0';
    full[n++] = p;
    if (!nl) break;
    p = nl + 1;
  }
  size_t max = rp_names_max_chars(nm);
  for (size_t i = 0; i < n; i++) {
    char *d = rp_names_demangle(full[i]);
    CHECK(d && strlen(d) <= (size_t)RP_MAX_DEMANGLED_BYTES + strlen(full[i]));
    free(d);
    d = rp_names_display(nm, full[i]);
    CHECK(d && chars(d) <= max);
    free(d);
  }
  char **t = rp_names_display_table(nm, full, n);
  CHECK(t);
  for (size_t i = 0; i < n; i++) {
    CHECK(chars(t[i]) <= max);
    for (size_t j = 0; j < i; j++)
      CHECK((strcmp(full[i], full[j]) == 0) == (strcmp(t[i], t[j]) == 0));
  }
  rp_names_table_free(t, n);
  free(text);
  return 0;
}
