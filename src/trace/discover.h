/*
 * trace/discover.h - which trace files an input names, and the server_args.json beside
 * them (docs/reference.md §2.1 and §2.2).
 *
 * A file is used as given; a directory is searched for Kineto traces, one rank (the
 * lowest, or the one asked for) and the newest file per stage are kept, ordered by stage
 * then name; rank_files lists every rank of the run beside them. Sub-directories holding
 * the ranks of one run (no stage and rank repeated across them: vLLM V1's one folder per
 * node) are one run. Stage comes from the rule packs (te_rules_stage_from_path); a
 * file's rank from its own distributedInfo.rank, else the packs' file-name patterns
 * (te_rules_rank_from_filename); no naming heuristic lives here, and a directory name is
 * never a rank.
 *
 * Paths are built the way the reference prints them (Python pathlib): the input as the
 * user typed it, with "." components, repeated and trailing slashes removed, joined with
 * '/' to the names found below it.
 *
 * Ownership: tr_discover fills a caller-provided tr_input_set whose strings and array it
 * owns; tr_input_set_free releases them. stage_id strings are borrowed from the te_rules
 * (or static "all") and live as long as the rules. tr_server_args owns all its members.
 */
#ifndef TRIAGE_TRACE_DISCOVER_H
#define TRIAGE_TRACE_DISCOVER_H

#include <stddef.h>

#include "trace/trace.h"
#include "triage/rules.h"

typedef struct tr_input_file {
  char *path;
  const char *stage_id; /* from the te_rules stage, "all" if none */
  long rank;            /* -1 if none */
  /* rank_files only: the host_name the file states before its events (the node; read
   * with the rank by the same probe of its head), NULL when none (one stated after the
   * events is found when the whole file is read: an_rank_row.host). Owned. */
  char *host_name;
} tr_input_file;

/* A file whose name states another rank than its distributedInfo.rank (which wins). */
typedef struct tr_rank_conflict {
  char *path;
  long name_rank, trace_rank;
} tr_rank_conflict;

typedef struct tr_input_set {
  tr_input_file *files;
  size_t n;
  char *trace_dir;        /* directory the traces were taken from; NULL for "-" */
  char *server_args_path; /* NULL if not found */
  /* Every rank of the run (its newest file per stage and rank), ordered by stage then
   * rank; empty unless a directory holds at least two ranked files. Rank-less files
   * (API-server traces) are never ranks. */
  tr_input_file *rank_files;
  size_t n_rank_files;
  /* Files of the directory whose name and distributedInfo disagree on the rank. */
  tr_rank_conflict *rank_conflicts;
  size_t n_rank_conflicts, cap_rank_conflicts;
} tr_input_set;

/* input: a file, a directory or "-" (standard input, used as one unstaged trace).
 * rules may be NULL (every file is stage "all" and has no rank).
 * Errors: TR_ERR_IO "no such file or directory", "no trace files found under DIR",
 * TR_ERR_LIMIT when a directory holds more than TR_MAX_DIR_FILES candidates. */
int tr_discover(const char *input, const te_rules *rules, tr_input_set *out, tr_error *err);
/* tr_discover keeping rank `rank` instead of the lowest (rank < 0: the lowest).
 * TR_ERR_IO "no trace of rank N under DIR" when a directory has no file of that rank. */
int tr_discover_rank(const char *input, const te_rules *rules, long rank, tr_input_set *out,
                     tr_error *err);
void tr_input_set_free(tr_input_set *s);

/* Stage id of a path (its last 6 components, lower-cased, joined by '/'), "all" if none. */
const char *tr_path_stage(const te_rules *rules, const char *path);

typedef struct tr_server_args {
  char *model_path; /* "model_path", else "model"; NULL */
  long tp_size;     /* "tp_size", default 1 */
  char **keys;      /* top-level keys, in file order */
  size_t n_keys;
  char *json_text; /* the document as read (for text hints) */
} tr_server_args;

/* Loads a whole server_args.json (at most TR_MAX_SMALL_JSON_BYTES). Returns 0, or a
 * TR_ERR_* code with err filled (TR_ERR_SHAPE if the document is not an object). */
int tr_server_args_load(const char *path, tr_server_args *out, tr_error *err);
void tr_server_args_free(tr_server_args *a);

#endif
