/*
 * cli/common.h - what every command shares: the shared options (--format, -o/--output,
 * --rules, --no-default-rules, --compat, --quiet, --workers) and their values, the one
 * format enum, and the steps every command takes the same way: loading the rule packs,
 * reading an input that is a trace, a profile directory or a JSON report, running the
 * analysis with the progress bar and warnings, and opening the output.
 *
 * Every command's arguments struct starts with a cli_common, so the shared option rows
 * (CLI_SHARED) store into any of them.
 *
 * Ownership: strings point into argv; the lists are freed by cli_common_free. A
 * cli_input owns its report or JSON document (cli_input_free). Functions that return an
 * exit status (cli/exit.h) have printed the one line that explains a failure.
 */
#ifndef TRIAGE_CLI_COMMON_H
#define TRIAGE_CLI_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis/pipeline.h"
#include "cli/args.h"
#include "triage/rules.h"

/* The allocator's tuning, before anything is allocated (the binary's main). The analysis
 * allocates and frees big per-kernel and per-name arrays phase after phase; glibc raises
 * its mmap threshold to the size of each mapped block it frees, so later arrays come from
 * the heap, where freed space stays resident and the next phase's arrays pile on top of
 * it. A fixed threshold (CLI_MMAP_THRESHOLD_BYTES) keeps every block above it in its own
 * mapping, returned when freed. True when applied (a glibc build), false elsewhere. */
bool cli_tune_allocator(void);

/* --format; UNSET until the command line is read: then html for an --output ending in
 * .html/.htm when the command writes html, else markdown. */
typedef enum triage_format {
  TRIAGE_FORMAT_UNSET = -1,
  TRIAGE_FORMAT_MARKDOWN = 0,
  TRIAGE_FORMAT_JSON = 1,
  TRIAGE_FORMAT_HTML = 2
} triage_format;

#define CLI_FORMAT_BIT(f) (1u << (unsigned)(f))
#define CLI_FORMATS_ALL                                                          \
  (CLI_FORMAT_BIT(TRIAGE_FORMAT_MARKDOWN) | CLI_FORMAT_BIT(TRIAGE_FORMAT_JSON) | \
   CLI_FORMAT_BIT(TRIAGE_FORMAT_HTML))

/* The values of the shared options, and the command's words. */
typedef struct cli_common {
  int format;         /* triage_format */
  const char *output; /* -o/--output FILE; NULL = stdout */
  cli_list rules;     /* --rules FILE|DIR, in order */
  bool no_default_rules;
  const char *compat; /* --compat NAME: <rules dir>/compat/NAME.yaml; NULL = none */
  bool quiet;         /* no progress bar, no warnings */
  int workers;        /* --workers, else TRIAGE_WORKERS; 0 = the online CPUs */
  cli_list operands;  /* the words after the options are taken out, in order */
} cli_common;

/* The shared option rows (offsets into cli_common), --help and --version included. */
extern const cli_options CLI_SHARED;

/* The words of a format ("markdown|json") among those in the mask. */
void cli_format_words(unsigned mask, char *buf, size_t cap);

/* How the binary was called: for the rule directory, the command line of the reports. */
typedef struct cli_invocation {
  const char *argv0;
  int argc;
  char **argv;
} cli_invocation;

/* "LEAD ARG1 ARG2 ..." of argv[1..] (malloc'd; NULL if out of memory): the report's
 * provenance uses LEAD = argv[0], the HTML pages' footers "triage". */
char *cli_command_line(const cli_invocation *inv, const char *lead);

/* The rule packs of c: the defaults (unless --no-default-rules), the --compat pack, the
 * --rules packs, with a value for every setting (cli_main loads them for a command that
 * asks). NULL with *rc the exit status (an unknown --compat is a usage error). */
te_rules *cli_rules_load(const cli_invocation *inv, const cli_common *c, int *rc);

/* an_run options of c: the progress bar and the warnings on stderr unless --quiet, the
 * workers, the packs' kernel-table bar. */
an_run_options cli_run_options(const cli_common *c);

/* The one line of a failed an_run ("triage: PATH: offset N: MESSAGE"); path names the
 * input when the error names none. */
void cli_print_run_error(const an_error *e, const char *path);

/* One input of diff, bundle or merge. */
typedef enum cli_input_kind {
  CLI_INPUT_TRACE = 0,
  CLI_INPUT_DIRECTORY = 1,
  CLI_INPUT_REPORT = 2 /* a JSON report written by --format json */
} cli_input_kind;

typedef struct cli_input {
  const char *path;
  cli_input_kind kind;
  an_report *report; /* a trace or directory, analysed */
  cJSON *doc;        /* a JSON report, parsed */
} cli_input;

/* Reads path: a JSON report is parsed (one larger than max_report_bytes is an error
 * naming limit_name: pass CLI_REPORT_LIMIT(TR_MAX_...)), anything else is analysed as a
 * trace or profile directory (the options of c). Returns an exit status. */
int cli_input_load(const cli_common *c, const te_rules *rules, const char *path,
                   size_t max_report_bytes, const char *limit_name, cli_input *in);
/* --rank N names a rank of a profile directory; given a trace file that says it is another
 * rank (distributedInfo.rank), the report would be of that rank without a word: one line
 * naming both and TRIAGE_EXIT_BAD_INPUT. TRIAGE_EXIT_OK otherwise (rank < 0, a directory,
 * "-", a trace of that rank or of none). */
int cli_rank_check(const char *path, long rank, const an_report *rep);
/* cli_input_load, but a profile directory is read for rank `rank` alone, as `triage --rank
 * N DIR` reads it (its tables, no Ranks section; a directory without that rank is an
 * error; a trace file is read as it is, whatever its rank); rank < 0: every rank, as
 * cli_input_load. */
int cli_input_load_rank(const cli_common *c, const te_rules *rules, const char *path, long rank,
                        size_t max_report_bytes, const char *limit_name, cli_input *in);
#define CLI_REPORT_LIMIT(limit) (limit), #limit
void cli_input_free(cli_input *in);

/* The file at path for writing (stdout when path is NULL), or NULL after one line saying
 * why; cli_file_close flushes and closes it (not stdout): write_rc is the writer's result
 * (0 = written); returns the exit status, after one line on a write error. Every file
 * triage writes (the report, the kernel map) opens and closes through these. */
FILE *cli_file_open(const char *path);
int cli_file_close(FILE *out, const char *path, int write_rc);

/* The output of c (stdout without -o), or NULL after one line saying why. */
FILE *cli_output_open(const cli_common *c);
/* Flushes and closes out (not stdout); write_rc is the renderer's result (0 = written).
 * Returns the exit status, after one line on a write error. */
int cli_output_close(FILE *out, const cli_common *c, int write_rc);

void cli_common_free(cli_common *c);

#endif
