/*
 * cli/main.c - the triage binary (placeholder while the CLI lands).
 */
#include <stdio.h>

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fputs("triage: not built yet\n", stderr);
  return 1;
}
