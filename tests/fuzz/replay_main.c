/*
 * replay_main.c - a main() for building a libFuzzer harness as a plain program.
 *
 * Usage: replay_HARNESS PATH...   Each PATH is a file or a directory; every regular file
 * of a directory (not recursive, names starting with '.' and README* skipped, in name
 * order) is read into a buffer of exactly its size and passed once to
 * LLVMFuzzerTestOneInput. A missing directory counts as empty (a harness may have no
 * regression cases yet). Exit 0 when every input returned (a crash or sanitizer report
 * aborts the process), 2 on a usage or I/O problem.
 * This is how CI runs the fuzz corpora without clang or libFuzzer.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (len == cap) {
      uint8_t *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad) {
    free(buf);
    fprintf(stderr, "replay: %s: cannot read\n", path);
    return -1;
  }
  /* Exactly len bytes, so AddressSanitizer sees a read past the end of the input. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(buf);
    return -1;
  }
  if (len) memcpy(exact, buf, len);
  free(buf);
  fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count) {
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT) return 0;
    fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0) continue;
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      char **nn = realloc(names, ncap * sizeof *nn);
      if (!nn) {
        rc = -1;
        break;
      }
      names = nn;
      cap = ncap;
    }
    names[n] = strdup(e->d_name);
    if (!names[n]) {
      rc = -1;
      break;
    }
    n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_names);
  for (size_t i = 0; i < n; i++) {
    if (rc == 0) {
      size_t plen = strlen(dir) + strlen(names[i]) + 2;
      char *path = malloc(plen);
      if (!path) {
        rc = -1;
      } else {
        snprintf(path, plen, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
          if (run_file(path) != 0)
            rc = -1;
          else
            (*count)++;
        }
        free(path);
      }
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  int rc = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISREG(st.st_mode)) {
      if (run_file(argv[i]) != 0)
        rc = 2;
      else
        count++;
    } else if (run_dir(argv[i], &count) != 0) {
      rc = 2;
    }
  }
  printf("replayed %zu inputs\n", count);
  return rc;
}
