/*
 * cli/main.c - the triage binary: the allocator's tuning, then the command line
 * (cli/commands.h). Exit codes: cli/exit.h.
 */
#include "cli/commands.h"
#include "cli/common.h"

int main(int argc, char **argv) {
  (void)cli_tune_allocator();
  return cli_main(argc, argv);
}
