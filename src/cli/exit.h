/*
 * cli/exit.h - the exit status of the triage binary (docs/errors.md), and how the status
 * codes of the libraries below map onto it. Only the CLI picks exit codes.
 */
#ifndef TRIAGE_CLI_EXIT_H
#define TRIAGE_CLI_EXIT_H

#include "live/live.h"

typedef enum triage_exit {
  TRIAGE_EXIT_OK = 0,             /* report printed (or the sub-command succeeded) */
  TRIAGE_EXIT_BAD_INPUT = 1,      /* unreadable trace, broken rules, nothing to analyse,
                                     failed capture */
  TRIAGE_EXIT_USAGE = 2,          /* the command line cannot work */
  TRIAGE_EXIT_REGRESSION = 3,     /* triage diff --fail-on regression: the diff holds a
                                     regression beyond the noise floor (its report is written) */
  TRIAGE_EXIT_NOT_COMPARABLE = 4, /* triage diff --fail-on regression: the runs do not compare
                                     (other GPU or world size), so the gate cannot pass them */
  TRIAGE_EXIT_INTERRUPTED = 130   /* Ctrl-C during live capture (128 + SIGINT) */
} triage_exit;

/* Exit status for a live-capture result. */
static inline triage_exit triage_exit_for_live(lv_status s) {
  switch (s) {
    case LV_OK:
      return TRIAGE_EXIT_OK;
    case LV_USAGE:
      return TRIAGE_EXIT_USAGE;
    case LV_INTERRUPTED:
      return TRIAGE_EXIT_INTERRUPTED;
    case LV_FAIL:
      break;
  }
  return TRIAGE_EXIT_BAD_INPUT;
}

#endif
