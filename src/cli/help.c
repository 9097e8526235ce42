/*
 * cli/help.c - usage lines and --help from the command table and option rows (help.h).
 */
#include "cli/help.h"

#include <string.h>

/* Options start at column 2, their help at column HELP_COLUMN. */
#define HELP_COLUMN 30

void cli_synopsis(const cli_command *cmd, size_t form, char *buf, size_t cap) {
  bool analysis = cmd == cli_command_at(0);
  snprintf(buf, cap, "triage%s%s [options] %s", analysis ? "" : " ", analysis ? "" : cmd->name,
           cmd->forms[form]);
}

/* The value an option reads, as --help shows it. */
static void value_words(const cli_command *cmd, const cli_option *o, char *buf, size_t cap) {
  buf[0] = '\0';
  if (!cli_option_takes_value(o)) return;
  if (strcmp(o->name, "--format") == 0) {
    cli_format_words(cmd->formats, buf, cap);
  } else if (o->kind == CLI_CHOICE) { /* "markdown,md|json": the first word of each choice */
    size_t n = 0;
    for (const char *c = o->choices; *c && n + 1 < cap;) {
      size_t len = strcspn(c, ",|");
      n += (size_t)snprintf(buf + n, cap - n, "%s%.*s", n ? "|" : "", (int)len, c);
      c += len;
      if (*c == ',') c += strcspn(c, "|");
      if (*c) c++;
    }
  } else {
    snprintf(buf, cap, "%s", o->metavar ? o->metavar : "VALUE");
  }
}

static const char *help_text(const cli_command *cmd, const cli_option *o) {
  if (strcmp(o->name, "--format") == 0 && !(cmd->formats & CLI_FORMAT_BIT(TRIAGE_FORMAT_HTML)))
    return "report format (default markdown)";
  return o->help ? o->help : "";
}

/* "  -o, --output FILE           write ..." (help lines broken at '\n', aligned). */
static int option_lines(FILE *out, const cli_command *cmd, const cli_option *o) {
  char value[128], head[160];
  value_words(cmd, o, value, sizeof value);
  int n = snprintf(head, sizeof head, "  %s%s%s%s%s", o->alias ? o->alias : "",
                   o->alias ? ", " : "", o->name, value[0] ? " " : "", value);
  const char *h = help_text(cmd, o);
  if (fprintf(out, "%s", head) < 0) return -1;
  if (n >= HELP_COLUMN - 1 && fprintf(out, "\n%*s", HELP_COLUMN, "") < 0) return -1;
  if (n < HELP_COLUMN - 1 && fprintf(out, "%*s", HELP_COLUMN - n, "") < 0) return -1;
  for (const char *line = h;; line += strcspn(line, "\n") + 1) {
    int len = (int)strcspn(line, "\n");
    if (fprintf(out, "%.*s\n", len, line) < 0) return -1;
    if (!line[len]) return 0;
    if (fprintf(out, "%*s", HELP_COLUMN, "") < 0) return -1;
  }
}

/* The rows of a table, with their headings; the shared rows under one heading. */
static int option_table(FILE *out, const cli_command *cmd, cli_options t, const char *heading) {
  if (heading && t.n && fprintf(out, "%s\n", heading) < 0) return -1;
  for (size_t i = 0; i < t.n; i++) {
    const cli_option *o = &t.rows[i];
    if (o->kind == CLI_HEADING) {
      if (fprintf(out, "%s\n", o->help) < 0) return -1;
    } else if (!(strcmp(o->name, "--format") == 0 && !cmd->formats)) {
      if (option_lines(out, cmd, o) < 0) return -1;
    }
  }
  return 0;
}

static int usage_lines(FILE *out, const cli_command *cmd, bool first) {
  char line[512];
  for (size_t f = 0; cmd->forms[f]; f++, first = false) {
    cli_synopsis(cmd, f, line, sizeof line);
    if (fprintf(out, "%s%s\n", first ? "usage: " : "       ", line) < 0) return -1;
  }
  return 0;
}

/* The analysis's --help: every command's usage lines, and the list of commands. */
static int all_usage(FILE *out) {
  for (size_t i = 0; i < cli_command_count(); i++)
    if (usage_lines(out, cli_command_at(i), i == 0) < 0) return -1;
  return 0;
}

static int command_list(FILE *out) {
  if (fprintf(out, "commands:\n") < 0) return -1;
  for (size_t i = 1; i < cli_command_count(); i++) {
    const cli_command *c = cli_command_at(i);
    if (fprintf(out, "  %-10s%s\n", c->name, c->summary) < 0) return -1;
  }
  return fprintf(out, "  %-10s%s\n", "triage", "the analysis, as the reference tool's first word") <
                 0
             ? -1
             : 0;
}

int cli_help(const cli_command *cmd, FILE *out) {
  bool analysis = cmd == cli_command_at(0);
  if ((analysis ? all_usage(out) : usage_lines(out, cmd, true)) < 0) return -1;
  if (fprintf(out, "\n%s\n", cmd->summary) < 0) return -1;
  if (cmd->description && fprintf(out, "%s", cmd->description) < 0) return -1;
  if (fputc('\n', out) == EOF) return -1;
  char own[64];
  snprintf(own, sizeof own, "%s options:", cmd->name);
  cli_options mine = cli_command_options(cmd);
  if (option_table(out, cmd, mine, mine.n && mine.rows[0].kind != CLI_HEADING ? own : NULL) < 0)
    return -1;
  if (option_table(out, cmd, CLI_SHARED, "options of every command:") < 0) return -1;
  if (analysis && (fputc('\n', out) == EOF || command_list(out) < 0)) return -1;
  if (fprintf(out, "\nexit status: 0 success, 1 bad input, 2 usage error (docs/errors.md)\n") < 0)
    return -1;
  return cmd->exit_more && fprintf(out, "             %s\n", cmd->exit_more) < 0 ? -1 : 0;
}
