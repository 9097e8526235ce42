/* util/file.c - capped whole-file read (file.h). */
#include "util/file.h"
#include "util/vec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

ut_file_status ut_read_file(const char *path, size_t max_bytes, char **data, size_t *len,
                            int *err_no) {
  *data = NULL;
  *len = 0;
  *err_no = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    *err_no = errno;
    return UT_FILE_IO;
  }
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size > max_bytes) {
    fclose(f); /* a regular file's size says it without reading a byte */
    return UT_FILE_TOO_BIG;
  }
  size_t room = 0, n = 0; /* room: bytes held, one past the text for its NUL */
  char *text = ut_grow(NULL, &room, 4096 + 1, 1);
  bool nomem = text == NULL;
  /* Read until EOF or past the cap: a pipe or a growing file is refused too. */
  while (!nomem && n <= max_bytes) {
    if (n + 1 == room) {
      char *bigger = ut_grow(text, &room, room + 1, 1);
      if (!bigger) {
        nomem = true;
        break;
      }
      text = bigger;
    }
    size_t got = fread(text + n, 1, room - 1 - n, f);
    n += got;
    if (got == 0) break;
  }
  ut_file_status st = nomem           ? UT_FILE_NOMEM
                      : ferror(f)     ? UT_FILE_IO
                      : n > max_bytes ? UT_FILE_TOO_BIG
                                      : UT_FILE_OK;
  fclose(f);
  if (st != UT_FILE_OK) {
    free(text);
    return st;
  }
  text[n] = '\0';
  *data = text;
  *len = n;
  return UT_FILE_OK;
}
