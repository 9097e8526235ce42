/*
 * cli/progress.c - see progress.h.
 */
#include "cli/progress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Display pacing, not input limits: the bar appears only after SHOW_AFTER_S seconds of
 * reading and is redrawn at most every REDRAW_EVERY_S seconds. */
static const double SHOW_AFTER_S = 0.5;
static const double REDRAW_EVERY_S = 0.1;
/* Characters of the label shown; longer labels keep their end ("...tail"). */
#define PROGRESS_LABEL_CHARS 32
#define PROGRESS_BAR_CELLS 20

struct triage_progress {
  FILE *tty;
  char label[PROGRESS_LABEL_CHARS + 1];
  uint64_t total;
  double start;
  double last_draw;
  int drawn_width; /* characters of the last line drawn; 0 = nothing on screen */
  bool finished;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void set_label(triage_progress *p, const char *label) {
  if (!label) label = "";
  const char *slash = strrchr(label, '/');
  if (slash && slash[1] != '\0') label = slash + 1;
  size_t n = strlen(label);
  if (n <= PROGRESS_LABEL_CHARS) {
    memcpy(p->label, label, n + 1);
    return;
  }
  /* keep the end, which tells files of one profile directory apart */
  memcpy(p->label, "...", 3);
  memcpy(p->label + 3, label + n - (PROGRESS_LABEL_CHARS - 3), PROGRESS_LABEL_CHARS - 3);
  p->label[PROGRESS_LABEL_CHARS] = '\0';
}

triage_progress *triage_progress_create(FILE *tty, const char *label, uint64_t total,
                                        bool enabled) {
  if (!enabled || !tty) return NULL;
  int fd = fileno(tty);
  if (fd < 0 || !isatty(fd)) return NULL;
  triage_progress *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->tty = tty;
  p->total = total;
  p->start = now_s();
  p->last_draw = 0.0;
  set_label(p, label);
  return p;
}

static void draw(triage_progress *p, uint64_t done, double t) {
  char line[160];
  double mb = (double)done / 1e6;
  double elapsed = t - p->start;
  double rate = elapsed > 0.0 ? mb / elapsed : 0.0;
  int n;
  if (p->total > 0) {
    uint64_t d = done > p->total ? p->total : done;
    double frac = (double)d / (double)p->total;
    char bar[PROGRESS_BAR_CELLS + 1];
    int full = (int)(frac * PROGRESS_BAR_CELLS);
    for (int i = 0; i < PROGRESS_BAR_CELLS; i++) bar[i] = i < full ? '#' : '.';
    bar[PROGRESS_BAR_CELLS] = '\0';
    n = snprintf(line, sizeof line, "%s [%s] %.1f/%.1f MB %3d%% %.0f MB/s", p->label, bar, mb,
                 (double)p->total / 1e6, (int)(frac * 100.0), rate);
  } else {
    n = snprintf(line, sizeof line, "%s %.1f MB %.0f MB/s", p->label, mb, rate);
  }
  if (n < 0) return;
  if (n >= (int)sizeof line) n = (int)sizeof line - 1;
  /* pad over the previous line if this one is shorter */
  int pad = p->drawn_width > n ? p->drawn_width - n : 0;
  fprintf(p->tty, "\r%s%*s", line, pad, "");
  fflush(p->tty);
  p->drawn_width = n;
  p->last_draw = t;
}

void triage_progress_update(void *ctx, uint64_t done, uint64_t total) {
  triage_progress *p = ctx;
  if (!p || p->finished) return;
  if (total > 0) p->total = total;
  double t = now_s();
  if (t - p->start < SHOW_AFTER_S) return;
  if (p->drawn_width > 0 && t - p->last_draw < REDRAW_EVERY_S) return;
  draw(p, done, t);
}

void triage_progress_finish(triage_progress *p) {
  if (!p || p->finished) return;
  p->finished = true;
  if (p->drawn_width > 0) {
    fprintf(p->tty, "\r%*s\r", p->drawn_width, "");
    fflush(p->tty);
    p->drawn_width = 0;
  }
}

void triage_progress_destroy(triage_progress *p) {
  if (!p) return;
  triage_progress_finish(p);
  free(p);
}
