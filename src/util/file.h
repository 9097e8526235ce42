/*
 * util/file.h - reading a whole small file (server_args.json and the like) with a cap, so
 * a huge or endless input (a pipe, /dev/zero) is refused instead of exhausting memory.
 *
 * Ownership: on UT_FILE_OK *data is a malloc'd, NUL-terminated copy of the file the
 * caller frees; on any other result it is NULL.
 */
#ifndef TRIAGE_UTIL_FILE_H
#define TRIAGE_UTIL_FILE_H

#include <stddef.h>

typedef enum ut_file_status {
  UT_FILE_OK = 0,
  UT_FILE_IO = 1,      /* cannot open or read; *err_no holds errno (0 for a read error) */
  UT_FILE_TOO_BIG = 2, /* more than max_bytes */
  UT_FILE_NOMEM = 3
} ut_file_status;

/* Reads path whole, at most max_bytes: a regular file larger than that is refused by its
 * size, anything else once one byte more has been read. */
ut_file_status ut_read_file(const char *path, size_t max_bytes, char **data, size_t *len,
                            int *err_no);

#endif
