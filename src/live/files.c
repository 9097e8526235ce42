/*
 * live/files.c - watching a profile directory for the trace files a server writes.
 *
 * A server writes its traces asynchronously after stop_profile, so "which files are
 * new" is decided by comparing snapshots (path, mtime, size) taken before start_profile
 * and while polling; a file rewritten in place (TRT-LLM's fixed trace path) counts as
 * new because its mtime changes.
 */
#include "live/lv_internal.h"
#include "util/vec.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

volatile sig_atomic_t lv_interrupted = 0;

void lv_snapshot_free(lv_snapshot *s) {
  if (!s) return;
  for (size_t i = 0; i < s->n; i++) free(s->files[i].path);
  free(s->files);
  memset(s, 0, sizeof *s);
}

static int lv_snapshot_add(lv_snapshot *s, const char *path, int64_t mtime_ns, int64_t size) {
  lv_file *f = ut_grow(s->files, &s->cap, s->n + 1, sizeof *f);
  if (!f) return -1;
  s->files = f;
  char *p = strdup(path);
  if (!p) return -1;
  s->files[s->n++] = (lv_file){p, mtime_ns, size};
  return 0;
}

static int lv_scan(const char *dir, int depth, lv_snapshot *out, long *budget) {
  DIR *d = opendir(dir);
  if (!d) return 0; /* not there yet: nothing written */
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (--*budget < 0) break;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    size_t n = strlen(dir) + 1 + strlen(e->d_name) + 1;
    char *p = malloc(n);
    if (!p) {
      rc = -1;
      break;
    }
    snprintf(p, n, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(p, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        if (depth > 1) rc = lv_scan(p, depth - 1, out, budget);
      } else if (S_ISREG(st.st_mode) && lv_is_trace_name(e->d_name)) {
        int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        rc = lv_snapshot_add(out, p, mt, (int64_t)st.st_size);
      }
    }
    free(p);
  }
  closedir(d);
  return rc;
}

int lv_snapshot_take(const char *dir, int max_depth, lv_snapshot *out) {
  memset(out, 0, sizeof *out);
  if (max_depth > LV_MAX_SCAN_DEPTH) max_depth = LV_MAX_SCAN_DEPTH;
  long budget = LV_MAX_DIR_ENTRIES;
  if (lv_scan(dir, max_depth, out, &budget) != 0) {
    lv_snapshot_free(out);
    return -1;
  }
  return 0;
}

int lv_snapshot_new(const lv_snapshot *before, const lv_snapshot *now, lv_snapshot *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < now->n; i++) {
    const lv_file *f = &now->files[i];
    bool same = false;
    for (size_t j = 0; j < before->n && !same; j++) {
      const lv_file *b = &before->files[j];
      same = strcmp(b->path, f->path) == 0 && b->mtime_ns == f->mtime_ns && b->size == f->size;
    }
    if (!same && lv_snapshot_add(out, f->path, f->mtime_ns, f->size) != 0) {
      lv_snapshot_free(out);
      return -1;
    }
  }
  return 0;
}

bool lv_sleep_ms(long ms) {
  /* Slices of 50 ms keep Ctrl-C responsive without busy waiting. */
  while (ms > 0) {
    if (lv_interrupted) return false;
    long slice = ms < 50 ? ms : 50;
    struct timespec ts = {slice / 1000, (slice % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
      if (lv_interrupted) return false;
    }
    ms -= slice;
  }
  return !lv_interrupted;
}

int lv_mkdirs(const char *path) {
  size_t n = strlen(path);
  char *p = malloc(n + 1);
  if (!p) return -1;
  memcpy(p, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] == '/' || p[i] == '\0') {
      char saved = p[i];
      p[i] = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        int e = errno;
        free(p);
        errno = e;
        return -1;
      }
      p[i] = saved;
    }
  }
  free(p);
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}
