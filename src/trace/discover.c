/* trace/discover.c - see discover.h. */
#include "trace/discover.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/source.h"
#include "triage/ascii.h"
#include "util/file.h"
#include "util/vec.h"

static const char k_all[] = "all";

/* ------------------------------------------------------------------ paths */

/* pathlib-style lexical normalisation: "a//b/./c/" -> "a/b/c", "./x" -> "x", "" -> ".". */
static char *path_norm(const char *in) {
  size_t len = strlen(in);
  char *out = malloc(len + 2);
  if (!out) return NULL;
  size_t n = 0;
  bool abs = in[0] == '/';
  if (abs) out[n++] = '/';
  const char *p = in;
  while (*p) {
    while (*p == '/') p++;
    const char *q = p;
    while (*q && *q != '/') q++;
    size_t cl = (size_t)(q - p);
    if (cl && !(cl == 1 && p[0] == '.')) {
      if (n && out[n - 1] != '/') out[n++] = '/';
      memcpy(out + n, p, cl);
      n += cl;
    }
    p = q;
  }
  if (n == 0) out[n++] = '.';
  out[n] = '\0';
  return out;
}

static char *path_join(const char *base, const char *name) {
  if (strcmp(base, ".") == 0) return strdup(name);
  size_t bl = strlen(base), nl = strlen(name);
  char *out = malloc(bl + nl + 2);
  if (!out) return NULL;
  memcpy(out, base, bl);
  size_t n = bl;
  if (n && out[n - 1] != '/') out[n++] = '/';
  memcpy(out + n, name, nl + 1);
  return out;
}

/* Lexical parent of a normalised path ("a/b" -> "a", "a" -> ".", "/a" -> "/"). */
static char *path_parent(const char *p) {
  const char *slash = strrchr(p, '/');
  if (!slash) return strdup(".");
  if (slash == p) return strdup("/");
  return strndup(p, (size_t)(slash - p));
}

static const char *base_name(const char *p) {
  const char *slash = strrchr(p, '/');
  return slash ? slash + 1 : p;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

const char *tr_path_stage(const te_rules *rules, const char *path) {
  if (!rules || !path) return k_all;
  /* the last 6 components, lower-cased, joined by '/' */
  char *norm = path_norm(path);
  if (!norm) return k_all;
  const char *start = norm;
  int seen = 0;
  for (const char *p = norm + strlen(norm); p > norm; p--) {
    if (p[-1] == '/') {
      if (++seen == 6) {
        start = p;
        break;
      }
    }
  }
  while (*start == '/') start++;
  char *tail = strdup(start);
  free(norm);
  if (!tail) return k_all;
  te_ascii_lower(tail, tail, strlen(tail));
  const te_stage *st = te_rules_stage_from_path(rules, tail);
  free(tail);
  return st && st->id ? st->id : k_all;
}

/* Stages no pack defines sort last. */
static int stage_order(const te_rules *rules, const char *id) {
  const te_stage *st = rules ? te_rules_stage_by_id(rules, id) : NULL;
  return st ? st->order : INT_MAX;
}

/* ------------------------------------------------------------------ candidates */

typedef struct cand {
  char *path;
  char *dir;
  struct timespec mtime;
  const char *stage;
  long rank;
  char *host; /* host_name stated at the file's head; NULL when none or not probed */
  int order;
  bool keep;
  bool in_run; /* in the chosen run (steps 1-3), whatever its rank */
} cand;

typedef struct cvec {
  cand *v;
  size_t n, cap;
} cvec;

static int cmp_stage_name(const void *pa, const void *pb) {
  const cand *a = pa, *b = pb;
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  int c = strcmp(strrchr(a->path, '/') ? strrchr(a->path, '/') + 1 : a->path,
                 strrchr(b->path, '/') ? strrchr(b->path, '/') + 1 : b->path);
  return c ? c : strcmp(a->path, b->path);
}

static int cmp_stage_rank(const void *pa, const void *pb) {
  const cand *a = pa, *b = pb;
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return strcmp(a->path, b->path);
}

static void cvec_free(cvec *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->v[i].path);
    free(c->v[i].dir);
    free(c->v[i].host);
  }
  free(c->v);
  c->v = NULL;
  c->n = c->cap = 0;
}

static bool is_trace_name(const char *name, const char *path) {
  if (!ends_with(name, ".json") && !ends_with(name, ".json.gz")) return false;
  if (strcmp(name, "server_args.json") == 0 || strcmp(name, "metadata.json") == 0 ||
      strcmp(name, "config.json") == 0)
    return false;
  if (ends_with(name, ".trace.json") || ends_with(name, ".trace.json.gz") ||
      strstr(name, ".pt.trace.json"))
    return true;
  /* other JSON: only if it holds a trace */
  return tr_trace_probe(path) == 1;
}

static int nomem(tr_error *err) {
  tr_set_error(err, TR_ERR_NOMEM, false, 0, "out of memory");
  return TR_ERR_NOMEM;
}

static int scan_dir(const char *dir, bool recursive, unsigned depth, cvec *out, tr_error *err) {
  if (depth > TR_MAX_DIR_DEPTH) {
    tr_set_error(err, TR_ERR_LIMIT, false, 0,
                 "directories nested deeper than %u levels under the input (TR_MAX_DIR_DEPTH)",
                 (unsigned)TR_MAX_DIR_DEPTH);
    return TR_ERR_LIMIT;
  }
  DIR *d = opendir(dir);
  if (!d) {
    if (depth == 0) {
      tr_set_error(err, TR_ERR_IO, false, 0, "cannot read directory %s: %s", dir, strerror(errno));
      return TR_ERR_IO;
    }
    return 0; /* an unreadable sub-directory holds nothing we can use */
  }
  int rc = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    char *full = path_join(dir, de->d_name);
    if (!full) {
      rc = nomem(err);
      break;
    }
    struct stat st, lst;
    if (stat(full, &st) != 0) {
      free(full);
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      /* symlinked directories are not followed: they can form cycles */
      if (recursive && lstat(full, &lst) == 0 && S_ISDIR(lst.st_mode))
        rc = scan_dir(full, true, depth + 1, out, err);
      free(full);
      if (rc) break;
      continue;
    }
    if (!S_ISREG(st.st_mode) || !is_trace_name(de->d_name, full)) {
      free(full);
      continue;
    }
    if (out->n >= TR_MAX_DIR_FILES) {
      free(full);
      tr_set_error(err, TR_ERR_LIMIT, false, 0,
                   "more than %u trace files under the input directory (TR_MAX_DIR_FILES)",
                   (unsigned)TR_MAX_DIR_FILES);
      rc = TR_ERR_LIMIT;
      break;
    }
    cand *v = ut_grow(out->v, &out->cap, out->n + 1, sizeof *v);
    if (!v) {
      free(full);
      rc = nomem(err);
      break;
    }
    out->v = v;
    cand *c = &out->v[out->n];
    memset(c, 0, sizeof *c);
    c->path = full;
    c->dir = strdup(dir);
    if (!c->dir) {
      free(full);
      rc = nomem(err);
      break;
    }
    c->mtime = st.st_mtim;
    out->n++;
  }
  closedir(d);
  return rc;
}

static int cmp_time(const struct timespec *a, const struct timespec *b) {
  if (a->tv_sec != b->tv_sec) return a->tv_sec < b->tv_sec ? -1 : 1;
  if (a->tv_nsec != b->tv_nsec) return a->tv_nsec < b->tv_nsec ? -1 : 1;
  return 0;
}

static int cmp_mtime(const void *pa, const void *pb) {
  const cand *a = pa, *b = pb;
  int c = cmp_time(&a->mtime, &b->mtime);
  return c ? c : strcmp(a->path, b->path);
}

/* ------------------------------------------------------------------ discovery */

static char *find_server_args(const char *dir) {
  char *parent = path_parent(dir);
  const char *dirs[2] = {dir, parent};
  char *found = NULL;
  for (int i = 0; i < 2 && !found && dirs[i]; i++) {
    if (i == 1 && strcmp(dirs[0], dirs[1]) == 0) break;
    char *p = path_join(dirs[i], "server_args.json");
    struct stat st;
    if (p && stat(p, &st) == 0 && S_ISREG(st.st_mode))
      found = p;
    else
      free(p);
  }
  free(parent);
  return found;
}

static int set_single(tr_input_set *out, const te_rules *rules, const char *path,
                      bool stdin_input) {
  out->files = calloc(1, sizeof *out->files);
  if (!out->files) return -1;
  out->files[0].path = strdup(path);
  if (!out->files[0].path) return -1;
  out->n = 1;
  out->files[0].rank = -1;
  if (stdin_input) {
    out->files[0].stage_id = k_all;
    return 0;
  }
  out->files[0].stage_id = tr_path_stage(rules, path);
  long rank;
  if (rules && te_rules_rank_from_filename(rules, base_name(path), &rank))
    out->files[0].rank = rank;
  out->trace_dir = path_parent(path);
  if (!out->trace_dir) return -1;
  out->server_args_path = find_server_args(out->trace_dir);
  return 0;
}

/* The rank distributedInfo states at the head of a candidate's file, or -1; its host_name
 * on the way (the same probe, so the node topology costs no second read). */
static long trace_rank(cand *c) {
  int64_t rank = TR_NO_ID;
  char host[TR_MAX_HOST_NAME];
  if (tr_trace_probe_head(c->path, &rank, host, sizeof host) != 1) return -1;
  if (*host && !(c->host = strdup(host))) return -1; /* out of memory: no host, no rank */
  if (rank == TR_NO_ID || rank < 0 || rank > LONG_MAX) return -1;
  return (long)rank;
}

/* Notes a file whose name states another rank than its distributedInfo. */
static int add_conflict(tr_input_set *out, const char *path, long name_rank, long trace_rank) {
  tr_rank_conflict *v =
      ut_grow(out->rank_conflicts, &out->cap_rank_conflicts, out->n_rank_conflicts + 1, sizeof *v);
  if (!v) return -1;
  out->rank_conflicts = v;
  char *copy = strdup(path);
  if (!copy) return -1;
  v[out->n_rank_conflicts++] = (tr_rank_conflict){copy, name_rank, trace_rank};
  return 0;
}

/* The rank of every candidate of a directory holding several: distributedInfo.rank inside
 * the file first (a probe of its head, where Kineto writes it), then the packs'
 * rank_patterns on the file name. A directory name is never read; a name stating another
 * rank than the file is a conflict, reported, and the file's own rank wins. Files with
 * neither (API-server traces) have no rank. */
static int assign_ranks(const te_rules *rules, cvec *all, tr_input_set *out) {
  for (size_t i = 0; i < all->n; i++) {
    cand *c = &all->v[i];
    long from_name = -1;
    if (!rules || !te_rules_rank_from_filename(rules, base_name(c->path), &from_name))
      from_name = -1;
    c->rank = rules && all->n > 1 ? trace_rank(c) : -1;
    if (c->rank >= 0 && from_name >= 0 && from_name != c->rank &&
        add_conflict(out, c->path, from_name, c->rank) != 0)
      return -1;
    if (c->rank < 0) c->rank = from_name;
  }
  return 0;
}

/* Ranked files in several sub-directories form one run when no (stage, rank) pair repeats
 * across them (vLLM V1 writes one folder per node); otherwise they are separate runs. */
static bool one_ranked_run(const te_rules *rules, cvec *all) {
  if (!rules) return false;
  size_t ranked = 0;
  for (size_t i = 0; i < all->n; i++) ranked += all->v[i].rank >= 0;
  if (ranked < 2) return false;
  for (size_t i = 0; i < all->n; i++) {
    const cand *a = &all->v[i];
    if (a->rank < 0) continue;
    for (size_t j = i + 1; j < all->n; j++) {
      const cand *b = &all->v[j];
      if (b->rank == a->rank && strcmp(b->stage, a->stage) == 0 && strcmp(b->dir, a->dir) != 0)
        return false;
    }
  }
  return true;
}

/* docs/reference.md §2.2 steps 1-2: every recursive trace when sub-directories carry
 * stages (or hold the ranks of one run); else the directory itself, or the sub-directory
 * holding the newest trace ("newest run"). Returns the trace dir (borrowed). */
static const char *choose_trace_dir(const char *dir, const te_rules *rules, cvec *all) {
  bool direct = false, staged = false;
  for (size_t i = 0; i < all->n; i++) {
    cand *c = &all->v[i];
    c->stage = tr_path_stage(rules, c->path);
    c->order = stage_order(rules, c->stage);
    if (strcmp(c->dir, dir) == 0)
      direct = true;
    else if (strcmp(c->stage, k_all) != 0)
      staged = true;
  }
  if (!direct && (staged || one_ranked_run(rules, all))) {
    for (size_t i = 0; i < all->n; i++) all->v[i].keep = true;
    return dir;
  }
  const char *trace_dir = direct ? dir : all->v[all->n - 1].dir;
  for (size_t i = 0; i < all->n; i++) all->v[i].keep = strcmp(all->v[i].dir, trace_dir) == 0;
  return trace_dir;
}

/* Keeps, among kept candidates, the newest per stage; all is sorted by mtime, so the
 * last one wins. */
static void keep_newest(cvec *all) {
  for (size_t i = 0; i < all->n; i++) {
    if (!all->v[i].keep) continue;
    for (size_t j = i + 1; j < all->n; j++) {
      const cand *a = &all->v[i], *b = &all->v[j];
      if (b->keep && strcmp(b->stage, a->stage) == 0) {
        all->v[i].keep = false;
        break;
      }
    }
  }
}

/* Every rank of the chosen run (newest per stage and rank), by stage order then rank.
 * all must be in mtime order (the last of equals wins); it is not reordered. */
static int collect_ranks(const cvec *all, tr_input_set *out) {
  size_t n = 0;
  cand *pick = calloc(all->n ? all->n : 1, sizeof *pick); /* shallow copies */
  if (!pick) return -1;
  for (size_t i = 0; i < all->n; i++) {
    const cand *a = &all->v[i];
    if (!a->in_run || a->rank < 0) continue;
    bool newer = false;
    for (size_t j = i + 1; j < all->n && !newer; j++) {
      const cand *b = &all->v[j];
      newer = b->in_run && b->rank == a->rank && strcmp(b->stage, a->stage) == 0;
    }
    if (!newer) pick[n++] = *a;
  }
  int rc = 0;
  if (n >= 2) { /* one rank is no rank table */
    qsort(pick, n, sizeof *pick, cmp_stage_rank);
    out->rank_files = calloc(n, sizeof *out->rank_files);
    rc = out->rank_files ? 0 : -1;
    for (size_t i = 0; i < n && rc == 0; i++) {
      tr_input_file *f = &out->rank_files[i];
      f->stage_id = pick[i].stage;
      f->rank = pick[i].rank;
      if (!(f->path = strdup(pick[i].path)))
        rc = -1;
      else
        out->n_rank_files = i + 1;
      if (rc == 0 && pick[i].host && !(f->host_name = strdup(pick[i].host))) rc = -1;
    }
  }
  free(pick);
  return rc;
}

/* Step 4: the wanted rank (want_rank < 0: the lowest); rank-less files go when any file
 * has a rank (API-server traces such as vLLM's *.async_llm.* carry none). */
static int keep_rank(const char *dir, long want_rank, cvec *all, tr_error *err) {
  long pick = -1;
  for (size_t i = 0; i < all->n; i++) {
    cand *c = &all->v[i];
    if (!c->in_run) c->rank = -1;
    if (c->rank >= 0 && (want_rank >= 0 ? c->rank == want_rank : (pick < 0 || c->rank < pick)))
      pick = c->rank;
  }
  if (want_rank >= 0 && pick < 0) {
    tr_set_error(err, TR_ERR_IO, false, 0, "no trace of rank %ld under %s", want_rank, dir);
    return TR_ERR_IO;
  }
  if (pick >= 0)
    for (size_t i = 0; i < all->n; i++)
      if (all->v[i].keep && all->v[i].rank != pick) all->v[i].keep = false;
  return 0;
}

static int discover_dir(const char *dir, const te_rules *rules, long want_rank, tr_input_set *out,
                        tr_error *err) {
  cvec all = {0};
  int rc = scan_dir(dir, true, 0, &all, err);
  if (rc) goto done;
  if (all.n == 0) {
    tr_set_error(err, TR_ERR_IO, false, 0, "no trace files found under %s", dir);
    rc = TR_ERR_IO;
    goto done;
  }
  qsort(all.v, all.n, sizeof *all.v, cmp_mtime);
  if (assign_ranks(rules, &all, out) != 0) {
    rc = nomem(err);
    goto done;
  }
  const char *trace_dir = choose_trace_dir(dir, rules, &all);
  /* step 3: merged-* files only when nothing else is there */
  bool unmerged = false;
  for (size_t i = 0; i < all.n; i++)
    if (all.v[i].keep && strncmp(base_name(all.v[i].path), "merged-", 7) != 0) unmerged = true;
  if (unmerged)
    for (size_t i = 0; i < all.n; i++)
      if (strncmp(base_name(all.v[i].path), "merged-", 7) == 0) all.v[i].keep = false;
  for (size_t i = 0; i < all.n; i++) all.v[i].in_run = all.v[i].keep;
  if ((rc = keep_rank(dir, want_rank, &all, err)) != 0) goto done;
  if (collect_ranks(&all, out) != 0) {
    rc = nomem(err);
    goto done;
  }
  /* step 5: the newest file per stage */
  keep_newest(&all);
  size_t n = 0;
  for (size_t i = 0; i < all.n; i++) {
    if (all.v[i].keep) {
      cand tmp = all.v[n];
      all.v[n] = all.v[i];
      all.v[i] = tmp;
      n++;
    }
  }
  /* step 6: stage order, then name */
  qsort(all.v, n, sizeof *all.v, cmp_stage_name);
  out->files = calloc(n ? n : 1, sizeof *out->files);
  out->trace_dir = strdup(trace_dir);
  if (!out->files || !out->trace_dir) {
    rc = nomem(err);
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    out->files[i].path = strdup(all.v[i].path);
    if (!out->files[i].path) {
      rc = nomem(err);
      goto done;
    }
    out->files[i].stage_id = all.v[i].stage;
    out->files[i].rank = all.v[i].rank;
    out->n = i + 1;
  }
  out->server_args_path = find_server_args(out->trace_dir);
done:
  cvec_free(&all);
  return rc;
}

int tr_discover(const char *input, const te_rules *rules, tr_input_set *out, tr_error *err) {
  return tr_discover_rank(input, rules, -1, out, err);
}

int tr_discover_rank(const char *input, const te_rules *rules, long rank, tr_input_set *out,
                     tr_error *err) {
  memset(out, 0, sizeof *out);
  if (err) memset(err, 0, sizeof *err);
  if (!input || !*input) {
    tr_set_error(err, TR_ERR_IO, false, 0, "no such file or directory");
    return TR_ERR_IO;
  }
  if (strcmp(input, "-") == 0) {
    if (set_single(out, rules, "-", true) != 0) {
      tr_input_set_free(out);
      return nomem(err);
    }
    return 0;
  }
  struct stat st;
  if (stat(input, &st) != 0) {
    tr_set_error(
        err, TR_ERR_IO, false, 0, "%s",
        errno == ENOENT || errno == ENOTDIR ? "no such file or directory" : strerror(errno));
    return TR_ERR_IO;
  }
  char *norm = path_norm(input);
  if (!norm) return nomem(err);
  int rc;
  if (S_ISDIR(st.st_mode)) {
    rc = discover_dir(norm, rules, rank, out, err);
  } else {
    rc = set_single(out, rules, norm, false) == 0 ? 0 : nomem(err);
  }
  free(norm);
  if (rc) tr_input_set_free(out);
  return rc;
}

void tr_input_set_free(tr_input_set *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n; i++) free(s->files[i].path);
  free(s->files);
  for (size_t i = 0; i < s->n_rank_files; i++) {
    free(s->rank_files[i].path);
    free(s->rank_files[i].host_name);
  }
  free(s->rank_files);
  for (size_t i = 0; i < s->n_rank_conflicts; i++) free(s->rank_conflicts[i].path);
  free(s->rank_conflicts);
  free(s->trace_dir);
  free(s->server_args_path);
  memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ server_args.json */

int tr_server_args_load(const char *path, tr_server_args *out, tr_error *err) {
  memset(out, 0, sizeof *out);
  out->tp_size = 1;
  char *text = NULL;
  size_t n = 0;
  int err_no = 0;
  int rc = 0;
  switch (ut_read_file(path, TR_MAX_SMALL_JSON_BYTES, &text, &n, &err_no)) {
    case UT_FILE_OK:
      break;
    case UT_FILE_IO:
      tr_set_error(err, TR_ERR_IO, false, 0, "%s",
                   err_no == ENOENT ? "no such file or directory"
                   : err_no         ? strerror(err_no)
                                    : "read error");
      return TR_ERR_IO;
    case UT_FILE_TOO_BIG:
      tr_set_error(err, TR_ERR_LIMIT, false, 0, "larger than %u bytes (TR_MAX_SMALL_JSON_BYTES)",
                   (unsigned)TR_MAX_SMALL_JSON_BYTES);
      return TR_ERR_LIMIT;
    case UT_FILE_NOMEM:
      return nomem(err);
  }
  const char *end = NULL;
  cJSON *doc = cJSON_ParseWithLengthOpts(text, n, &end, 0);
  if (!doc) {
    const char *ep = cJSON_GetErrorPtr();
    uint64_t off = (ep && ep >= text && ep <= text + n) ? (uint64_t)(ep - text) : 0;
    free(text);
    tr_set_error(err, TR_ERR_JSON, true, off, "malformed JSON");
    return TR_ERR_JSON;
  }
  if (!cJSON_IsObject(doc)) {
    cJSON_Delete(doc);
    free(text);
    tr_set_error(err, TR_ERR_SHAPE, false, 0, "server arguments are not a JSON object");
    return TR_ERR_SHAPE;
  }
  size_t nk = 0;
  for (cJSON *it = doc->child; it; it = it->next) nk++;
  out->keys = calloc(nk ? nk : 1, sizeof *out->keys);
  if (!out->keys) rc = TR_ERR_NOMEM;
  for (cJSON *it = doc->child; it && !rc; it = it->next) {
    out->keys[out->n_keys] = strdup(it->string ? it->string : "");
    if (!out->keys[out->n_keys])
      rc = TR_ERR_NOMEM;
    else
      out->n_keys++;
  }
  const cJSON *mp = cJSON_GetObjectItemCaseSensitive(doc, "model_path");
  if (!cJSON_IsString(mp) || !mp->valuestring[0])
    mp = cJSON_GetObjectItemCaseSensitive(doc, "model");
  if (!rc && cJSON_IsString(mp) && mp->valuestring[0]) {
    out->model_path = strdup(mp->valuestring);
    if (!out->model_path) rc = TR_ERR_NOMEM;
  }
  const cJSON *tp = cJSON_GetObjectItemCaseSensitive(doc, "tp_size");
  if (cJSON_IsNumber(tp) && tp->valuedouble >= 1 && tp->valuedouble <= 1e9)
    out->tp_size = (long)tp->valuedouble;
  cJSON_Delete(doc);
  out->json_text = text; /* NUL-terminated by ut_read_file */
  if (rc) {
    tr_server_args_free(out);
    return nomem(err);
  }
  return 0;
}

void tr_server_args_free(tr_server_args *a) {
  if (!a) return;
  free(a->model_path);
  for (size_t i = 0; i < a->n_keys; i++) free(a->keys[i]);
  free(a->keys);
  free(a->json_text);
  memset(a, 0, sizeof *a);
  a->tp_size = 1;
}
