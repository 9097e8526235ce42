/*
 * cli/main.c - the triage binary: the allocator's tuning, then the command line
 * (cli/commands.h). Exit codes: cli/exit.h.
 */
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/commands.h"

/* The analysis allocates and frees big per-kernel and per-name arrays phase after phase.
 * glibc raises its mmap threshold to the size of each mapped block it frees, so later
 * arrays come from the heap, where freed space stays resident and the next phase's
 * arrays pile on top of it (262,145 kernel names: 157 -> 148 MB at the peak). A fixed
 * threshold keeps every block above it in its own mapping, returned when freed; the
 * read-heavy traces measure the same either way. */
#define TRIAGE_MMAP_THRESHOLD_BYTES (256 * 1024)

static void tune_allocator(void) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD)
  (void)mallopt(M_MMAP_THRESHOLD, TRIAGE_MMAP_THRESHOLD_BYTES);
#endif
}

int main(int argc, char **argv) {
  tune_allocator();
  return cli_main(argc, argv);
}
