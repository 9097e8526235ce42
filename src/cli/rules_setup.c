/*
 * cli/rules_setup.c - finding and loading the rule packs of a run (see rules_setup.h).
 */
#include "cli/rules_setup.h"

#include <stddef.h>
#include <stdio.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TRIAGE_INSTALL_RULES_DIR
#define TRIAGE_INSTALL_RULES_DIR ""
#endif

static bool is_dir(const char *path) {
  struct stat st;
  return path && *path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Tries DIR/suffix; on success leaves it in buf. */
static bool try_dir(const char *dir, const char *suffix, char *buf, size_t cap) {
  int n = snprintf(buf, cap, "%s/%s", dir, suffix);
  return n > 0 && (size_t)n < cap && is_dir(buf);
}

/* Directory part of path into out ("." when it has none). */
static void dir_of(const char *path, char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash) {
    snprintf(out, cap, ".");
  } else if (slash == path) {
    snprintf(out, cap, "/");
  } else {
    snprintf(out, cap, "%.*s", (int)(slash - path), path);
  }
}

const char *triage_default_rules_dir(const char *argv0, char *buf, size_t cap) {
  if (!buf || cap == 0) return NULL;
  const char *env = getenv("TRIAGE_RULES_DIR");
  if (env && *env) {
    /* An explicit setting wins even when wrong, so the load error names it. */
    int n = snprintf(buf, cap, "%s", env);
    return n > 0 && (size_t)n < cap ? buf : NULL;
  }
  /* The binary as invoked first (a copied or relocated tree), then as resolved by the
   * kernel (a symlink in PATH pointing into an install tree). */
  char bin_dirs[2][PATH_MAX];
  size_t n_dirs = 0;
  if (argv0 && strchr(argv0, '/')) dir_of(argv0, bin_dirs[n_dirs++], sizeof bin_dirs[0]);
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = '\0';
    dir_of(exe, bin_dirs[n_dirs++], sizeof bin_dirs[0]);
  }
  for (size_t i = 0; i < n_dirs; i++)
    if (try_dir(bin_dirs[i], "rules", buf, cap)) return buf;
  for (size_t i = 0; i < n_dirs; i++)
    if (try_dir(bin_dirs[i], "../share/triage/rules", buf, cap)) return buf;
  if (is_dir(TRIAGE_INSTALL_RULES_DIR)) {
    snprintf(buf, cap, "%s", TRIAGE_INSTALL_RULES_DIR);
    return buf;
  }
  return NULL;
}

void triage_print_diags(const te_diags *d, FILE *err) {
  char line[2048];
  for (size_t i = 0; i < te_diags_count(d); i++) {
    te_diag_format(te_diags_get(d, i), line, sizeof line);
    fprintf(err, "%s\n", line);
  }
  if (te_diags_dropped(d))
    fprintf(err, "triage: %zu more rule-pack diagnostics not shown\n", te_diags_dropped(d));
}

const char *triage_compat_pack(const char *argv0, const char *name, char *buf, size_t cap,
                               FILE *err) {
  bool ok_name = name && *name;
  for (const char *c = name; ok_name && *c; c++)
    ok_name = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_';
  if (!ok_name) {
    fprintf(err, "triage: --compat: '%s' is not a compatibility mode name\n", name ? name : "");
    return NULL;
  }
  char dir[PATH_MAX];
  if (!triage_default_rules_dir(argv0, dir, sizeof dir)) {
    fprintf(err, "triage: --compat: no rule directory found (set TRIAGE_RULES_DIR)\n");
    return NULL;
  }
  int n = snprintf(buf, cap, "%s/compat/%s.yaml", dir, name);
  struct stat st;
  if (n < 0 || (size_t)n >= cap || stat(buf, &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(err, "triage: --compat: unknown compatibility mode '%s' (no %s/compat/%s.yaml)\n", name,
            dir, name);
    return NULL;
  }
  return buf;
}

/* The default packs and the --compat pack beside them. */
static bool load_defaults(te_rules *r, const char *argv0, const triage_rules_setup_options *o,
                          te_diags *d, FILE *err) {
  if (o->no_defaults && !o->compat) return true;
  char dir[PATH_MAX], pack[PATH_MAX + 64];
  if (!triage_default_rules_dir(argv0, dir, sizeof dir)) {
    fprintf(err,
            "triage: no default rule packs found (set TRIAGE_RULES_DIR, or pass "
            "--no-default-rules with --rules)\n");
    return false;
  }
  bool ok = o->no_defaults || te_rules_load_path(r, dir, d) == TE_OK;
  if (o->compat)
    ok = triage_compat_pack(argv0, o->compat, pack, sizeof pack, err) &&
         te_rules_load_path(r, pack, d) == TE_OK && ok;
  return ok;
}

te_rules *triage_rules_setup(const char *argv0, const triage_rules_setup_options *o, FILE *err) {
  te_rules *r = te_rules_create();
  te_diags *d = te_diags_create();
  if (!r || !d) {
    fprintf(err, "triage: out of memory\n");
    te_rules_destroy(r);
    te_diags_destroy(d);
    return NULL;
  }
  bool ok = load_defaults(r, argv0, o, d, err);
  /* Every pack is loaded even after a failure, so one run reports every broken pack. */
  for (size_t i = 0; i < o->n_extra; i++)
    if (te_rules_load_path(r, o->extra[i], d) != TE_OK) ok = false;
  if (ok && te_rules_finalize(r, d) != TE_OK) ok = false;
  triage_print_diags(d, err);
  if (ok && te_diags_error_count(d) > 0) ok = false;
  te_diags_destroy(d);
  if (!ok) {
    te_rules_destroy(r);
    return NULL;
  }
  return r;
}
