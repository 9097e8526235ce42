/*
 * analysis/pipeline.c - an_run: inputs + rules + options -> report model (pipeline.h).
 *
 * Steps: load each side (discover, read, stage views, server args), decide each side's
 * framework, build the kernel maps, the kernel and fuse tables, the overlap table, then
 * assemble the model. The traces and views are released before an_run returns: the
 * model keeps only what the renderers read (tables, kernel maps, overlap rows, inputs).
 */
#include "analysis/pipeline.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/chain_runs.h"
#include "analysis/collective_names.h"
#include "analysis/graph_staging.h"
#include "analysis/kernel_map.h"
#include "analysis/opaque_ops.h"
#include "analysis/overlap.h"
#include "analysis/ranks.h"
#include "analysis/read_jobs.h"
#include "analysis/roofline.h"
#include "analysis/steps.h"
#include "analysis/strtab.h"
#include "analysis/summary.h"
#include "analysis/tables.h"
#include "analysis/timeline.h"
#include "analysis/trace_filter.h"
#include "analysis/trace_view.h"
#include "analysis/workers.h"
#include "analysis/workload.h"
#include "trace/discover.h"
#include "trace/trace.h"
#include "util/limits.h"
#include "util/map.h"
#include "util/vec.h"

/* One side of the analysis: the mapping traces or the formal traces. */
typedef struct side {
  const char *label; /* the input as named (messages) */
  tr_input_set set;
  tr_trace **traces;
  an_trace_view *views;
  const char **paths; /* parallel to traces */
  size_t n;
  tr_server_args sa;
  bool has_sa;
  const te_framework *fw;
  an_source fw_source;
  const char *fw_evidence; /* the name that decided it (framework_from_names), else NULL */
  an_kernel_map *kmap;
  bool shared;        /* traces and views borrowed from the formal side */
  bool kmap_borrowed; /* kmap is the mapping side's (the same files, built alike) */
} side;

/* What the formal traces' content says of their framework (framework_from_content), kept
 * for a mapping side that reads the same traces. */
typedef struct content_memo {
  bool known;
  const te_framework *fw;
  an_source source;
  const char *evidence;
} content_memo;

/* What the run context reads from the formal kernels' names (scan_kernel_names): the model
 * family (under graph replay the frames are gone) and whether a collective that only runs
 * inside one node ran. */
typedef struct name_facts {
  size_t family;    /* the first family of fuse.model_kernel_families, in pack order, one
                       of whose matchers hits some name (families are listed most specific
                       first); the family count when none does */
  bool single_node; /* matcher single_node_collective hits some name */
} name_facts;

/* Everything a run owns; the report is the first member, so an_report_destroy finds it. */
typedef struct run_state {
  an_report report;
  const an_run_options *opt; /* during an_run only */
  const te_rules *rules;
  an_error *err;
  bool two;
  double kernel_min_share; /* the kernel table's bar (an_run: --min-share, else the packs') */
  side formal, mapping;
  content_memo fw_content;
  an_tables tables;
  an_roofline_result roofline; /* parallel to tables.stages */
  an_overlap_result overlap;
  an_ranks_result ranks;
  an_rank_summary **own_ranks; /* one-rank runs: a summary per formal trace */
  an_rank_data *rank_data;
  const char **rank_paths; /* a directory run: every rank trace read (provenance) */
  an_stage_report *stages;
  an_hint *hints;
  size_t n_hints, cap_hints;
  an_pack_ref *packs;
  an_strtab *strings;       /* copies that outlive the traces (hint paths, names) */
  an_summary_data summary;  /* summary items, per-stage category times */
  an_steps *steps;          /* the formal traces' step windows, while the traces live */
  an_timeline *timeline;    /* the time account of the formal traces */
  an_graph_staging staging; /* kernels launched inside graph-launching ops (formal traces) */
  an_model_scan *scans;     /* the formal views' model scans, until the roofline takes them */
  struct take_job *take;    /* the trace take_trace is viewing (run_two's steps read it) */
  bool one_thread;          /* run_two's second step runs after the first, on its thread */
  bool nests_ahead;         /* the formal views' nests are built on a thread of their own */
  an_kernel_map *building;  /* the kernel map build_one_map finishes on two threads */
  /* the kernel names' facts infer_context asks (which of them: family, single) and
   * build_beside_timeline finds, for infer_context_names */
  bool names_family, names_single;
  name_facts names;
} run_state;

/* One trace being viewed (take_trace): its view here, its id indexes on the second thread. */
typedef struct take_job {
  side *s;
  size_t i;
  const char *stage_id;
  an_status view_rc;
  an_trace_ids *ids;
} take_job;

/* A failure into an error record: the run's (fail), or a record of its own for a step on
 * the second thread (run_two), which fails there while the first thread may write r->err. */
static an_status fail_in(an_error *e, an_status code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static an_status fail_in(an_error *e, an_status code, const char *path, const char *fmt, ...) {
  snprintf(e->path, sizeof e->path, "%s", path ? path : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message, sizeof e->message, fmt, ap);
  va_end(ap);
  return code;
}
#define fail(r, ...) fail_in((r)->err, __VA_ARGS__)

/* A trace-layer failure of path: its offset and message. */
static an_status fail_trace(run_state *r, const char *path, const tr_error *te) {
  r->err->has_offset = te->has_offset;
  r->err->offset = te->offset;
  return fail(r, AN_ERR_INPUT, path, "%s", te->message[0] ? te->message : "cannot read");
}

/* ------------------------------------------------------------------ hints */

static void add_hint(run_state *r, an_hint h) {
  if (h.path && !(h.path = an_strtab_cstr(r->strings, h.path))) return;
  if (h.detail && !(h.detail = an_strtab_cstr(r->strings, h.detail))) return;
  an_hint *v = ut_grow(r->hints, &r->cap_hints, r->n_hints + 1, sizeof *v);
  if (!v) return; /* a lost hint loses a warning line, not the report */
  r->hints = v;
  r->hints[r->n_hints++] = h;
  if (r->opt->hint) r->opt->hint(r->opt->hint_ctx, &r->hints[r->n_hints - 1]);
}

static void on_trace_warning(void *ctx, const tr_warning *w) {
  an_hint h = {w->code == TR_WARN_SKIPPED_EVENTS ? AN_HINT_SKIPPED_EVENTS : AN_HINT_REPLACED_UTF8,
               AN_HINT_WARNING,
               w->path,
               w->count,
               w->offset,
               NULL};
  add_hint(ctx, h);
}

/* Step-marker annotations (matcher stage_marker) that no stage rule places: one warning
 * per trace naming the first, so a stage does not vanish without a word. */
static void warn_unknown_stage_markers(run_state *r, const tr_trace *t, const char *path) {
  const te_matcher *marker = te_rules_matcher(r->rules, "stage_marker");
  if (!marker) return;
  static const tr_kind kinds[] = {TR_KIND_USER_ANNOTATION, TR_KIND_GPU_ANNOTATION};
  const char *first = NULL;
  uint64_t count = 0;
  for (size_t j = 0; j < 2; j++) {
    size_t n = 0;
    const tr_event *ev = tr_trace_events(t, kinds[j], &n);
    for (size_t i = 0; i < n; i++) {
      const char *name = tr_str_get(t, ev[i].name);
      if (!te_matcher_match(marker, name, strlen(name)) ||
          te_rules_stage_from_annotation(r->rules, name))
        continue;
      if (!first) first = name;
      count++;
    }
  }
  if (!count) return;
  an_hint h = {AN_HINT_UNKNOWN_STAGE_MARKER, AN_HINT_WARNING, path, count, 0, first};
  add_hint(r, h);
}

/* ------------------------------------------------------------------ sides */

/* The traces and views go once the model is assembled; paths and n stay (the model
 * lists the inputs). */
static void side_release_traces(side *s) {
  if (s->shared) {
    s->views = NULL;
    s->traces = NULL;
    return;
  }
  for (size_t i = 0; s->traces && i < s->n; i++) {
    an_trace_view_free(&s->views[i]);
    tr_trace_destroy(s->traces[i]);
  }
  free(s->views);
  free(s->traces);
  s->views = NULL;
  s->traces = NULL;
}

static void side_free(side *s) {
  side_release_traces(s);
  if (!s->kmap_borrowed) an_kernel_map_destroy(s->kmap);
  free(s->paths);
  if (s->has_sa) tr_server_args_free(&s->sa);
  tr_input_set_free(&s->set);
  memset(s, 0, sizeof *s);
}

static an_status run_two(run_state *r, an_status (*first)(run_state *),
                         an_status (*second)(run_state *, an_error *), bool lanes);

static an_status take_view(run_state *r) {
  take_job *k = r->take;
  k->view_rc =
      an_trace_view_build(k->s->traces[k->i], k->stage_id, r->rules, NULL, &k->s->views[k->i]);
  return AN_OK; /* take_trace says why */
}

static an_status take_ids(run_state *r, an_error *err) {
  take_job *k = r->take;
  k->ids = an_trace_view_ids_build(k->s->traces[k->i]);
  return k->ids ? AN_OK : fail_in(err, AN_ERR_NOMEM, k->s->paths[k->i], "out of memory");
}

/* Takes trace i of a side from its read job: replays the read's warnings, then builds its
 * view, and its id indexes beside it on the second thread (run_two: both read the trace
 * alone, once take_trace's own changes to it are made; the kernel maps read the indexes,
 * and the steps, which they once ran beside, now run beside the framework's detection).
 * In job order, so warnings and failures come as a one-at-a-time read gives them. */
static an_status take_trace(run_state *r, side *s, size_t i, an_read_job *j, const char *stage_id) {
  for (size_t k = 0; k < j->n_warns; k++) on_trace_warning(r, &j->warns[k]);
  if (!j->trace) return fail_trace(r, j->path, &j->te);
  s->traces[i] = j->trace;
  j->trace = NULL; /* the side owns it now */
  s->paths[i] = j->path;
  s->n = i + 1;
  /* the analysis asks a correlation's External id only of events that lack theirs */
  tr_trace_drop_unasked_correlations(s->traces[i]);
  an_status rc = an_collective_names_split(s->traces[i], r->rules, NULL);
  take_job k = {s, i, stage_id, AN_OK, NULL};
  r->take = &k;
  an_status ids_rc = rc == AN_OK ? run_two(r, take_view, take_ids, false) : AN_OK;
  r->take = NULL;
  if (rc == AN_OK) rc = k.view_rc;
  if (rc == AN_OK && ids_rc == AN_OK)
    an_trace_view_adopt_ids(&s->views[i], k.ids);
  else
    an_trace_view_ids_destroy(k.ids);
  if (rc == AN_OK && ids_rc != AN_OK) return ids_rc; /* out of memory, said by run_two */
  if (rc == AN_ERR_NOMEM) return fail(r, rc, j->path, "out of memory");
  if (rc == AN_OK) warn_unknown_stage_markers(r, s->traces[i], j->path);
  if (rc != AN_OK) return fail(r, rc, j->path, "rule packs define no \"all\" stage");
  return AN_OK;
}

/* The server_args.json discovery found: used when it loads, a warning when it does not. */
static void load_server_args(run_state *r, side *s) {
  if (!s->set.server_args_path) return;
  tr_error te = {0};
  if (tr_server_args_load(s->set.server_args_path, &s->sa, &te) == 0) {
    s->has_sa = true;
    return;
  }
  an_hint h = {
      AN_HINT_SERVER_ARGS_IGNORED, AN_HINT_WARNING, s->set.server_args_path, 0, 0, te.message};
  add_hint(r, h);
}

/* Whether a path names the same file as another (device and inode: any spelling). */
static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return false;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether the mapping side discovered exactly the formal side's files, in the same order
 * and stages: then the traces and views are the same and are read once (the two-trace
 * mode of one file costs about one read, not two). */
static bool same_files(const side *fm, const side *mp) {
  if (!fm->set.n || fm->set.n != mp->set.n) return false;
  for (size_t i = 0; i < mp->set.n; i++) {
    const tr_input_file *a = &fm->set.files[i], *b = &mp->set.files[i];
    if (strcmp(a->stage_id, b->stage_id) != 0 || !same_file(a->path, b->path)) return false;
  }
  return true;
}

/* The mapping side borrows the formal side's traces and views (released with them);
 * the paths stay its own, as named. Its server args are still loaded: discovery found
 * them for this side. */
static an_status share_side(run_state *r, side *s) {
  s->paths = calloc(s->set.n, sizeof *s->paths);
  if (!s->paths) return fail(r, AN_ERR_NOMEM, s->label, "out of memory");
  for (size_t i = 0; i < s->set.n; i++) s->paths[i] = s->set.files[i].path;
  s->traces = r->formal.traces;
  s->views = r->formal.views;
  s->n = r->formal.n;
  s->shared = true;
  load_server_args(r, s);
  return AN_OK;
}

/* Discovers one side's trace files and sets up its arrays; the mapping side of the same
 * files as the formal side is marked to share them (share_side, after the read). */
static an_status discover_side(run_state *r, const an_input *in, side *s) {
  memset(s, 0, sizeof *s);
  size_t n = 1;
  if (in->path) {
    s->label = in->path;
    tr_error te = {0};
    long rank = r->opt->one_rank ? r->opt->rank : -1;
    if (tr_discover_rank(in->path, r->rules, rank, &s->set, &te) != 0)
      return fail_trace(r, in->path, &te);
    if (!s->set.n) return fail(r, AN_ERR_INPUT, in->path, "no trace files found");
    for (size_t i = 0; i < s->set.n_rank_conflicts; i++) {
      const tr_rank_conflict *c = &s->set.rank_conflicts[i];
      add_hint(r, (an_hint){AN_HINT_RANK_CONFLICT, AN_HINT_WARNING, c->path, (uint64_t)c->name_rank,
                            (uint64_t)c->trace_rank, NULL});
    }
    n = s->set.n;
  } else {
    s->label = an_strtab_cstr(r->strings, in->name ? in->name : "<memory>");
    if (!s->label) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  }
  if (s == &r->mapping && same_files(&r->formal, s)) {
    s->shared = true;
    return AN_OK;
  }
  s->traces = calloc(n, sizeof *s->traces);
  s->views = calloc(n, sizeof *s->views);
  s->paths = calloc(n, sizeof *s->paths);
  if (!s->traces || !s->views || !s->paths) return fail(r, AN_ERR_NOMEM, s->label, "out of memory");
  return AN_OK;
}

/* How many files a discovered side reads itself (0 when it shares the formal side's). */
static size_t side_files(const side *s, const an_input *in) {
  return s->shared ? 0 : in->path ? s->set.n : 1;
}

/* Sets up the read jobs of a discovered side from jobs[0]. */
static void side_jobs(const side *s, const an_input *in, an_read_job *jobs) {
  for (size_t i = 0; i < side_files(s, in); i++) {
    jobs[i].path = in->path ? s->set.files[i].path : s->label;
    jobs[i].data = in->path ? NULL : in->data;
    jobs[i].len = in->path ? 0 : in->len;
  }
}

/* Takes a side's read traces in order (jobs from jobs[0]), then its server args. */
static an_status take_side(run_state *r, const an_input *in, side *s, an_read_job *jobs) {
  if (s->shared) return share_side(r, s);
  for (size_t i = 0; i < side_files(s, in); i++) {
    an_status rc = take_trace(r, s, i, &jobs[i], in->path ? s->set.files[i].stage_id : NULL);
    if (rc != AN_OK) return rc;
  }
  load_server_args(r, s);
  return AN_OK;
}

/* Discovers both sides, reads every trace file they name at once (workers), then takes
 * them side by side in order. A mapping-side discovery failure is reported after the
 * formal side's traces, as when the sides were read one after the other. */
static an_status load_sides(run_state *r) {
  const an_run_options *opt = r->opt;
  an_status rc = discover_side(r, &opt->formal, &r->formal);
  if (rc != AN_OK) return rc;
  an_error formal_err = *r->err;
  an_status map_rc = r->two ? discover_side(r, &opt->mapping, &r->mapping) : AN_OK;
  an_error map_err = *r->err;
  *r->err = formal_err;
  size_t nf = side_files(&r->formal, &opt->formal);
  size_t nm = r->two && map_rc == AN_OK ? side_files(&r->mapping, &opt->mapping) : 0;
  an_read_job *jobs = calloc(nf + nm, sizeof *jobs);
  if (!jobs) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  side_jobs(&r->formal, &opt->formal, jobs);
  if (nm) side_jobs(&r->mapping, &opt->mapping, jobs + nf);
  rc = an_read_jobs(jobs, nf + nm, opt->rank_workers, opt->reader_chunk_size, &opt->progress,
                    r->formal.label);
  if (rc != AN_OK) rc = fail(r, rc, NULL, "out of memory");
  if (rc == AN_OK) rc = take_side(r, &opt->formal, &r->formal, jobs);
  if (rc == AN_OK && map_rc != AN_OK) {
    *r->err = map_err;
    rc = map_rc;
  }
  if (rc == AN_OK && r->two) rc = take_side(r, &opt->mapping, &r->mapping, jobs + nf);
  for (size_t i = 0; i < nf + nm; i++) an_read_job_clear(&jobs[i]);
  free(jobs);
  return rc;
}

static size_t side_kernels(const side *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++)
    for (size_t k = 0; k < s->views[i].n_stages; k++) n += s->views[i].stages[k].n;
  return n;
}

/* Votes of a side's Python frames: one slot per framework the packs define. */
typedef struct frame_votes {
  const te_framework **fw;
  size_t *n_votes;
  size_t n, cap;
} frame_votes;

static void vote(frame_votes *v, const te_framework *f) {
  size_t k = 0;
  while (k < v->n && v->fw[k] != f) k++;
  if (k == v->cap) return; /* not one of the packs' frameworks: cannot happen */
  if (k == v->n) v->fw[v->n++] = f;
  v->n_votes[k]++;
}

/* One trace's first `sample` distinct Python frame names, each a vote for the framework
 * its text rule names. */
static void frame_votes_of(const te_rules *rules, const tr_trace *t, long sample, frame_votes *v) {
  size_t n = 0;
  const tr_str *names = tr_trace_pyframe_names(t, &n);
  for (size_t i = 0; i < n && i < (size_t)sample; i++) {
    const te_framework *f = te_rules_framework_from_text(rules, tr_str_get(t, names[i]));
    if (f) vote(v, f);
  }
}

/* Deviation D8: the framework most distinct Python frame names point to (a count, not the
 * first hit: an SGLang tree may import a vLLM module), or NULL when none does, the packs
 * switch it off (framework.frame_sample 0) or memory runs out. */
static const te_framework *framework_from_frames(const te_rules *rules, const side *s) {
  long sample = te_rules_settings(rules)->framework_frame_sample;
  size_t cap = te_rules_framework_count(rules);
  if (sample <= 0 || cap == 0) return NULL;
  frame_votes v = {calloc(cap, sizeof *v.fw), calloc(cap, sizeof *v.n_votes), 0, cap};
  for (size_t i = 0; v.fw && v.n_votes && i < s->n; i++)
    frame_votes_of(rules, s->traces[i], sample, &v);
  size_t best = 0;
  for (size_t k = 1; k < v.n; k++)
    if (v.n_votes[k] > v.n_votes[best]) best = k;
  const te_framework *f = v.n ? v.fw[best] : NULL;
  free(v.fw);
  free(v.n_votes);
  return f;
}

/* One trace's first `sample` distinct CPU-op, annotation and kernel names, each a vote for
 * the framework its text rule names; ev[k]: the first name that voted for v->fw[k] (in
 * the trace's string table, which outlives the run's report). */
static void name_votes_of(const te_rules *rules, const tr_trace *t, long sample, frame_votes *v,
                          const char **ev) {
  static const tr_kind kinds[] = {TR_KIND_USER_ANNOTATION, TR_KIND_CPU_OP, TR_KIND_KERNEL};
  size_t n_str = tr_trace_string_count(t), seen = 0;
  uint8_t *asked = calloc(n_str ? n_str : 1, 1);
  for (size_t k = 0; asked && k < sizeof kinds / sizeof *kinds; k++) {
    size_t n = 0;
    const tr_event *e = tr_trace_events(t, kinds[k], &n);
    for (size_t i = 0; i < n && seen < (size_t)sample; i++) {
      if (e[i].name >= n_str || asked[e[i].name]) continue;
      asked[e[i].name] = 1;
      seen++;
      const char *name = tr_str_get(t, e[i].name);
      const te_framework *f = te_rules_framework_from_text(rules, name);
      if (!f) continue;
      size_t before = v->n;
      vote(v, f);
      if (v->n > before) ev[before] = name;
    }
  }
  free(asked);
}

/* Deviation D11: after the frames, the framework most distinct CPU-op, annotation and
 * kernel names point to (a training library's own regions: TorchRec's awaitables, DDP's
 * forward), with the first name that voted for it (*evidence); NULL when none does or the
 * packs switch it off (framework.name_sample 0). */
static const te_framework *framework_from_names(const te_rules *rules, const side *s,
                                                const char **evidence) {
  long sample = te_rules_settings(rules)->framework_name_sample;
  size_t cap = te_rules_framework_count(rules);
  *evidence = NULL;
  if (sample <= 0 || cap == 0) return NULL;
  frame_votes v = {calloc(cap, sizeof *v.fw), calloc(cap, sizeof *v.n_votes), 0, cap};
  const char **ev = calloc(cap, sizeof *ev);
  for (size_t i = 0; v.fw && v.n_votes && ev && i < s->n; i++)
    name_votes_of(rules, s->traces[i], sample, &v, ev);
  size_t best = 0;
  for (size_t k = 1; k < v.n; k++)
    if (v.n_votes[k] > v.n_votes[best]) best = k;
  const te_framework *f = v.n && ev ? v.fw[best] : NULL;
  if (f) *evidence = ev[best];
  free(v.fw);
  free(v.n_votes);
  free(ev);
  return f;
}

/* The framework an input path or the side's label names, or NULL. */
static const te_framework *framework_from_paths(const te_rules *rules, const side *s) {
  const te_framework *f = te_rules_framework_from_text(rules, s->label);
  for (size_t i = 0; !f && i < s->n; i++) f = te_rules_framework_from_text(rules, s->paths[i]);
  return f;
}

/* The framework the traces' own content names (their first events, then the Python
 * frames' votes, D8, then their names' votes, D11, which give the deciding name as
 * *evidence), or NULL; *source says which. */
static const te_framework *content_of(const te_rules *rules, const side *s, an_source *source,
                                      const char **evidence) {
  const te_framework *f = NULL;
  size_t sampled = (size_t)te_rules_settings(rules)->framework_sample_traces;
  *source = AN_SOURCE_TRACE_CONTENT;
  *evidence = NULL;
  for (size_t i = 0; !f && i < s->n && i < sampled; i++)
    f = te_rules_framework_from_text(rules, tr_trace_sample_text(s->traces[i]));
  if (f) return f;
  *source = AN_SOURCE_PYTHON_FRAMES;
  if ((f = framework_from_frames(rules, s))) return f;
  *source = AN_SOURCE_TRACE_CONTENT;
  return framework_from_names(rules, s, evidence);
}

/* content_of, asked once per traces: memo (when given) keeps the answer. */
static const te_framework *framework_from_content(const te_rules *rules, const side *s,
                                                  an_source *source, const char **evidence,
                                                  content_memo *memo) {
  if (memo && memo->known) {
    *source = memo->source;
    *evidence = memo->evidence;
    return memo->fw;
  }
  const te_framework *f = content_of(rules, s, source, evidence);
  if (memo) *memo = (content_memo){true, f, *source, *evidence};
  return f;
}

/* Framework detection (docs/reference.md §2.4): server args, then trace content, then path
 * hints (deviation D10: a file name is a weaker witness than what the file holds; the
 * compat pack's framework.content_before_path false restores paths first), then the rules'
 * default. Server-args keys of a non-default framework outrank its text hints (the
 * reference checks TokenSpeed keys before the JSON text). */
static const te_framework *detect_framework(const te_rules *rules, const side *s, an_source *source,
                                            const char **evidence, content_memo *memo) {
  const te_framework *dflt = te_rules_framework_default(rules);
  *source = AN_SOURCE_SERVER_ARGS;
  *evidence = NULL;
  if (s->has_sa) {
    const te_framework *k =
        te_rules_framework_from_keys(rules, (const char *const *)s->sa.keys, s->sa.n_keys);
    const te_framework *t =
        s->sa.json_text ? te_rules_framework_from_text(rules, s->sa.json_text) : NULL;
    if (k && k != dflt) return k;
    if (t) return t;
    if (k) return k;
  }
  bool content_first = te_rules_settings(rules)->framework_content_before_path;
  const te_framework *f =
      content_first ? framework_from_content(rules, s, source, evidence, memo) : NULL;
  if (f) return f;
  *source = AN_SOURCE_DETECTION_RULE;
  *evidence = NULL;
  if ((f = framework_from_paths(rules, s))) return f;
  f = content_first ? NULL : framework_from_content(rules, s, source, evidence, memo);
  if (f) return f;
  *evidence = NULL;
  *source = AN_SOURCE_DEFAULT;
  return dflt;
}

/* The side's framework; its evidence still the trace's name (keep_evidence copies it). */
static void decide_framework(run_state *r, side *s) {
  if (r->opt->framework) {
    s->fw = r->opt->framework;
    s->fw_source = r->opt->framework_source;
  } else {
    /* the formal side first: a mapping side of the same traces finds its answer kept */
    content_memo *memo = s == &r->formal || s->shared ? &r->fw_content : NULL;
    s->fw = detect_framework(r->rules, s, &s->fw_source, &s->fw_evidence, memo);
  }
}

/* Both sides' frameworks, on the second thread beside the step windows (run_two, in lanes:
 * both ask the rules; neither reads what the other writes). The names voted on are streamed
 * from every event of three kinds (hta15: ~30 ms), as the steps stream theirs. */
static an_status decide_frameworks(run_state *r, an_error *err) {
  (void)err;
  decide_framework(r, &r->formal);
  if (r->two) decide_framework(r, &r->mapping);
  return AN_OK;
}

/* A side's evidence, a name of its traces, copied after the join (the strings are the first
 * thread's): the report outlives the traces. */
static void keep_evidence(run_state *r, side *s) {
  if (s->fw_evidence) s->fw_evidence = an_strtab_cstr(r->strings, s->fw_evidence);
}

/* ------------------------------------------------------------------ analyses */

/* The reference samples the mapping pass for every framework but the ones listed in
 * kernel_map.unsampled_frameworks. */
static bool sampled(const te_rules *rules, const te_framework *fw) {
  return !te_string_list_has(&te_rules_settings(rules)->kernel_map_unsampled_frameworks, fw->id);
}

static const side *mapping_side(const run_state *r) { return r->two ? &r->mapping : &r->formal; }

/* The side whose server args the report shows: the formal one's, else the mapping's. */
static const side *server_args_side(const run_state *r) {
  if (r->formal.has_sa) return &r->formal;
  return r->two && r->mapping.has_sa ? &r->mapping : NULL;
}

/* The message of a failed kernel-map or table build: the packs lacking something they
 * must define (every category comes from them), else memory. */
static const char *build_failure(an_status rc) {
  return rc == AN_ERR_RULES ? "rule packs define no 'kernel' classifier" : "out of memory";
}

/* The distinct kernel names from which a map's names are classified on two threads: below
 * it the second thread's start (tens of microseconds) is about what it would take off the
 * first (~1,300 instructions a name), and the real traces' few hundred names stay on one. */
#define KMAP_TWO_THREADS_MIN_NAMES 1024u

/* The map's sites on the first thread, then its names with the second (run_two, in lanes:
 * both ask the rules). */
static an_status kmap_sites_first(run_state *r) {
  an_status rc = an_kernel_map_sites(r->building);
  if (rc == AN_OK) an_kernel_map_classify(r->building);
  return rc;
}

static an_status kmap_classify_second(run_state *r, an_error *err) {
  (void)err; /* classifying allocates nothing */
  an_kernel_map_classify(r->building);
  return AN_OK;
}

/* One side's kernel map: its names classified beside its sites on two threads when they are
 * many (262,145 distinct names: 340 M instructions of the classifier beside the sites' 134 M,
 * which were one after the other on the first thread). */
static an_status build_one_map(run_state *r, const side *s, const an_steps *steps,
                               an_kernel_map **out) {
  an_status rc =
      an_kernel_map_gather(s->views, s->n, r->rules, sampled(r->rules, s->fw), steps, out);
  if (rc != AN_OK) return rc;
  r->building = *out;
  if (an_kernel_map_unclassified(*out) >= KMAP_TWO_THREADS_MIN_NAMES) {
    rc = run_two(r, kmap_sites_first, kmap_classify_second, true);
  } else {
    an_kernel_map_classify(*out);
    rc = an_kernel_map_sites(*out);
  }
  r->building = NULL;
  if (rc == AN_OK) rc = an_kernel_map_finish(*out);
  if (rc != AN_OK) {
    an_kernel_map_destroy(*out);
    *out = NULL;
  }
  return rc;
}

static an_status build_kernel_maps(run_state *r) {
  side *fm = &r->formal, *mp = &r->mapping;
  const side *ms = mapping_side(r);
  /* the formal traces' steps let a site say its launches ran outside them (a warm-up) */
  an_status rc = build_one_map(r, ms, r->two ? NULL : r->steps, r->two ? &mp->kmap : &fm->kmap);
  /* the same files on both sides, sampled alike: the same map (one build, half the memory) */
  bool alike = r->two && mp->shared && sampled(r->rules, mp->fw) == sampled(r->rules, fm->fw);
  if (rc == AN_OK && alike) {
    fm->kmap = mp->kmap;
    fm->kmap_borrowed = true;
  } else if (rc == AN_OK && r->two) {
    rc = build_one_map(r, fm, r->steps, &fm->kmap);
  }
  return rc == AN_OK ? AN_OK : fail(r, rc, fm->label, "%s", build_failure(rc));
}

static bool has_key(const tr_server_args *sa, const char *key);

/* TP size: server args' tp_size when they state it, else the formal traces' TP groups in
 * their process groups (an_rank_tp_size: the world size only when no smaller group of
 * consecutive ranks holds the rank, so DP replicas are not counted as TP), else 1. Only
 * for a serving framework that was detected (fuse.tp_from_world_size_frameworks); on a
 * DDP training trace, where detection falls back to the default framework, the world is
 * the data-parallel size. */
static an_count_fact infer_tp(const run_state *r) {
  const side *fm = &r->formal, *sa = server_args_side(r);
  if (sa && has_key(&sa->sa, "tp_size"))
    return (an_count_fact){sa->sa.tp_size, AN_SOURCE_SERVER_ARGS};
  an_count_fact f = {1, AN_SOURCE_DEFAULT};
  const te_string_list *serving = &te_rules_settings(r->rules)->fuse_tp_from_world_size_frameworks;
  if (fm->fw_source == AN_SOURCE_DEFAULT || !te_string_list_has(serving, fm->fw->id)) return f;
  for (size_t i = 0; i < fm->n; i++) {
    long tp = fm->traces[i] ? an_rank_tp_size(fm->traces[i]) : 0;
    if (tp > f.value) f = (an_count_fact){tp, AN_SOURCE_TRACE_METADATA};
  }
  return f;
}

/* Platform from the device name when no runtime version member says it (HTA's A100
 * traces): the pack matchers gpu_name_rocm / gpu_name_cuda. */
static an_platform_fact platform_from_gpu_name(run_state *r, const char *name) {
  const te_matcher *rocm = te_rules_matcher(r->rules, "gpu_name_rocm");
  const te_matcher *cuda = te_rules_matcher(r->rules, "gpu_name_cuda");
  size_t n = strlen(name);
  if (rocm && te_matcher_match(rocm, name, n))
    return (an_platform_fact){AN_PLATFORM_ROCM, AN_SOURCE_TRACE_METADATA};
  if (cuda && te_matcher_match(cuda, name, n))
    return (an_platform_fact){AN_PLATFORM_CUDA, AN_SOURCE_TRACE_METADATA};
  return (an_platform_fact){AN_PLATFORM_UNKNOWN, AN_SOURCE_UNKNOWN};
}

/* GPU name and platform from the formal traces' metadata (the first trace stating each). */
static void infer_device(run_state *r, an_run_context *c) {
  const side *fm = &r->formal;
  for (size_t i = 0; i < fm->n; i++) {
    const tr_trace_meta *m = fm->traces[i] ? tr_trace_meta_get(fm->traces[i]) : NULL;
    if (!m) continue;
    if (!c->platform.value && m->platform != TR_PLATFORM_UNKNOWN)
      c->platform =
          (an_platform_fact){m->platform == TR_PLATFORM_ROCM ? AN_PLATFORM_ROCM : AN_PLATFORM_CUDA,
                             AN_SOURCE_TRACE_METADATA};
    for (size_t d = 0; !c->gpu.value && d < m->n_devices; d++) {
      const char *name = tr_str_get(fm->traces[i], m->devices[d].name);
      if (*name)
        c->gpu = (an_text_fact){an_strtab_intern(r->strings, name, strlen(name)),
                                AN_SOURCE_TRACE_METADATA};
    }
    for (size_t d = 0; !c->arch.value && d < m->n_devices; d++) {
      const tr_device *dv = &m->devices[d];
      if (dv->compute_major > 0 && dv->compute_major != TR_NO_ID && dv->compute_minor >= 0 &&
          dv->compute_minor < 10 && dv->compute_major < 100)
        c->arch = (an_count_fact){(long)(dv->compute_major * 10 + dv->compute_minor),
                                  AN_SOURCE_TRACE_METADATA};
    }
  }
  if (!c->platform.value && c->gpu.value) c->platform = platform_from_gpu_name(r, c->gpu.value);
}

/* The model package of a stem "DIR/FILE" whose file is named after its directory, as a
 * library keeping one package per model does ("qwen2/modeling_qwen2" -> "qwen2":
 * HF transformers' models/qwen2/modeling_qwen2.py); NULL for any other path under the
 * marker (a helper package's "common/utils"). *len gets its length. */
static const char *model_package(const char *stem, const char *dot, size_t *len) {
  const char *slash = memchr(stem, '/', (size_t)(dot - stem));
  if (!slash || slash == stem || memchr(slash + 1, '/', (size_t)(dot - slash - 1))) return NULL;
  size_t dir = (size_t)(slash - stem), file = (size_t)(dot - slash - 1);
  if (file < dir || strncmp(dot - dir, stem, dir) != 0) return NULL;
  *len = dir;
  return stem;
}

/* The model file stem after a marker in text (NULL when none): "srt/models/qwen3.py" ->
 * "qwen3" (or its package, model_package) unless the packs call it a helper; *len gets its
 * length. */
static const char *model_stem(const te_settings *set, const char *text, const char *mark,
                              size_t *len) {
  for (const char *at = strstr(text, mark); at; at = strstr(at + 1, mark)) {
    const char *stem = at + strlen(mark), *dot = strstr(stem, ".py");
    if (!dot || dot == stem || memchr(stem, ' ', (size_t)(dot - stem))) continue;
    size_t n = (size_t)(dot - stem);
    if (memchr(stem, '/', n) && !model_package(stem, dot, &n)) continue;
    bool helper = false;
    for (size_t k = 0; k < set->fuse_model_frame_ignore.n && !helper; k++) {
      const char *h = set->fuse_model_frame_ignore.items[k];
      helper = strlen(h) == n && strncmp(stem, h, n) == 0;
    }
    if (helper) continue;
    *len = n;
    return stem;
  }
  return NULL;
}

/* Model family from the formal kernel map's launch sites and their stacks: the model file
 * (fuse.model_frame_markers) under which the most GPU time was launched. */
static an_text_fact infer_model(run_state *r) {
  an_text_fact f = {NULL, AN_SOURCE_UNKNOWN};
  const te_settings *set = te_rules_settings(r->rules);
  an_kmap_view v;
  an_kernel_map_view(r->formal.kmap, &v);
  double best = 0;
  for (size_t e = 0; e < v.global.n; e++)
    for (size_t s = 0; s < v.global.entries[e].n_sites; s++) {
      const an_site *site = &v.global.entries[e].sites[s];
      const char *texts[2] = {site->location, site->stack};
      for (size_t t = 0; t < 2; t++)
        for (size_t m = 0; texts[t] && m < set->fuse_model_frame_markers.n; m++) {
          size_t len = 0;
          const char *stem =
              model_stem(set, texts[t], set->fuse_model_frame_markers.items[m], &len);
          if (!stem || site->total_us <= best) continue;
          best = site->total_us;
          f = (an_text_fact){an_strtab_intern(r->strings, stem, len), AN_SOURCE_PYTHON_FRAMES};
        }
    }
  return f;
}

/* The facts asked (families, single) in one pass over the distinct names, each name folded
 * and tokenised once for every matcher (one matcher at a time over all names re-read each
 * name per matcher: a seventh of a run on many distinct names, and the single-node scan
 * another 5 %). A later family is not tried once an earlier one hit; the pass stops when
 * nothing asked can change. Out of memory: as when nothing hits. */
static name_facts scan_kernel_names(run_state *r, bool families, bool single) {
  const te_list_map *fam = &te_rules_settings(r->rules)->fuse_model_kernel_families;
  const te_matcher *one_node = single ? te_rules_matcher(r->rules, "single_node_collective") : NULL;
  name_facts out = {fam->n, false};
  an_kmap_view v;
  an_kernel_map_view(r->formal.kmap, &v);
  size_t n_m = 0;
  for (size_t f = 0; f < fam->n; f++) n_m += fam->values[f].n;
  /* family by family, then the single-node matcher; as a group, a name none of whose
   * literals occur in it costs one pass, not a token form and every matcher */
  const te_matcher **ms = calloc(n_m + 1, sizeof *ms);
  te_subject *subj = te_subject_create();
  size_t best = families ? fam->n : 0;
  for (size_t f = 0, at = 0; ms && f < fam->n; f++)
    for (size_t k = 0; k < fam->values[f].n; k++)
      ms[at++] = te_rules_matcher(r->rules, fam->values[f].items[k]);
  if (ms) ms[n_m] = one_node;
  te_matcher_group *g = ms ? te_matcher_group_create(ms, n_m + 1) : NULL;
  for (size_t e = 0; g && subj && (best > 0 || (one_node && !out.single_node)) && e < v.global.n;
       e++) {
    const char *name = v.global.entries[e].name;
    if (!name) continue;
    te_subject_set(subj, name, strlen(name));
    for (size_t f = 0, at = 0; f < best; at += fam->values[f].n, f++)
      for (size_t k = 0; k < fam->values[f].n && best != f; k++)
        if (te_matcher_group_match(g, at + k, subj)) best = f;
    if (one_node && !out.single_node) out.single_node = te_matcher_group_match(g, n_m, subj);
  }
  if (g && subj && families) out.family = best;
  te_matcher_group_destroy(g);
  free(ms);
  te_subject_destroy(subj);
  return out;
}

/* The model fact of family index f of scan_kernel_names. */
static an_text_fact family_fact(run_state *r, size_t f) {
  const te_list_map *fam = &te_rules_settings(r->rules)->fuse_model_kernel_families;
  if (f >= fam->n) return (an_text_fact){NULL, AN_SOURCE_UNKNOWN};
  return (an_text_fact){an_strtab_intern(r->strings, fam->keys[f], strlen(fam->keys[f])),
                        AN_SOURCE_KERNEL_FAMILY};
}

/* The host_name of rank file f: discovery's probe reads it when the file states it before
 * its events (Kineto's head); else the Ranks section's reading of the whole file found it
 * wherever the top-level member sits (after traceEvents: the probe stops at the list). */
static const char *rank_host(const run_state *r, const tr_input_file *f) {
  if (f->host_name) return f->host_name;
  for (size_t s = 0; s < r->ranks.n_reports; s++)
    for (size_t i = 0; i < r->ranks.reports[s].n_rows; i++)
      if (r->ranks.reports[s].rows[i].rank == f->rank && r->ranks.reports[s].rows[i].host)
        return r->ranks.reports[s].rows[i].host;
  return NULL;
}

/* The node topology from host names (issue 31): the host_name of every rank's file
 * (rank_host), for the ranks of the formal trace's TP group (its process group). Two
 * hosts say multi-node, however many ranks are missing; one host says single-node only
 * when every rank of the group was found with a host name; else unknown. */
static an_topology_fact topology_from_hosts(const run_state *r, long tp) {
  const an_topology_fact unknown = {AN_TOPOLOGY_UNKNOWN, AN_SOURCE_UNKNOWN};
  const side *fm = &r->formal;
  const tr_trace *t = fm->n ? fm->traces[0] : NULL;
  if (!t || tp < 2 || fm->set.n_rank_files < 2) return unknown;
  const char *first = NULL;
  long found = 0; /* ranks of the group with a host name */
  for (size_t i = 0; i < fm->set.n_rank_files; i++) {
    const tr_input_file *f = &fm->set.rank_files[i];
    bool seen = false; /* a rank listed once per stage counts once */
    for (size_t j = 0; j < i && !seen; j++) seen = fm->set.rank_files[j].rank == f->rank;
    const char *host = seen || !an_rank_in_tp_group(t, f->rank) ? NULL : rank_host(r, f);
    if (!host) continue;
    if (first && strcmp(first, host) != 0)
      return (an_topology_fact){AN_TOPOLOGY_MULTI_NODE, AN_SOURCE_RANK_HOSTS};
    first = host;
    found++;
  }
  return found == tp ? (an_topology_fact){AN_TOPOLOGY_SINGLE_NODE, AN_SOURCE_RANK_HOSTS} : unknown;
}

/* Whether the TP group spans nodes (issue 31): one rank (TP 1 from a source that said
 * so); else the host names of the group's ranks in a directory run; else (*names: the
 * kernel names are to say) a collective kernel that only runs inside one node (matcher
 * single_node_collective: custom all-reduce, quick reduce) says one node; else unknown
 * (one rank's trace holds its own host name only). */
static an_topology_fact infer_topology(run_state *r, const an_run_context *c, bool *names) {
  bool stated = c->tp_size.source != AN_SOURCE_DEFAULT && c->tp_size.source != AN_SOURCE_UNKNOWN;
  *names = false;
  if (stated && c->tp_size.value <= 1)
    return (an_topology_fact){AN_TOPOLOGY_SINGLE_NODE, c->tp_size.source};
  an_topology_fact hosts = topology_from_hosts(r, c->tp_size.value);
  *names = hosts.value == AN_TOPOLOGY_UNKNOWN;
  return hosts;
}

/* The run context fusion gates read, each fact with its provenance. What only the kernel
 * names can say is asked here (r->names_family, r->names_single), found beside the time
 * account (build_beside_timeline) and read by infer_context_names. */
static void infer_context(run_state *r) {
  an_run_context *c = &r->report.run.context;
  r->names_family = r->names_single = false;
  const side *sa = server_args_side(r);
  c->model = (an_text_fact){sa ? sa->sa.model_path : NULL, AN_SOURCE_UNKNOWN};
  if (c->model.value) c->model.source = AN_SOURCE_SERVER_ARGS;
  bool from_trace = te_rules_settings(r->rules)->fuse_context_from_trace;
  c->tp_size = from_trace ? infer_tp(r) : (an_count_fact){1, AN_SOURCE_DEFAULT};
  if (!from_trace && sa && has_key(&sa->sa, "tp_size"))
    c->tp_size = (an_count_fact){sa->sa.tp_size, AN_SOURCE_SERVER_ARGS};
  if (from_trace) infer_device(r, c);
  if (from_trace && !c->model.value && r->formal.kmap) c->model = infer_model(r);
  if (!from_trace || !r->formal.kmap) return;
  r->names_family = !c->model.value;
  c->topology = infer_topology(r, c, &r->names_single);
}

/* The run context's facts from the kernel names (scan_kernel_names, beside the time
 * account), as infer_context asked them. */
static void infer_context_names(run_state *r) {
  an_run_context *c = &r->report.run.context;
  if (r->names_family) c->model = family_fact(r, r->names.family);
  if (r->names_single && r->names.single_node)
    c->topology = (an_topology_fact){AN_TOPOLOGY_SINGLE_NODE, AN_SOURCE_KERNEL_FAMILY};
}

static an_status build_tables(run_state *r) {
  const side *fm = &r->formal;
  const an_run_context *c = &r->report.run.context;
  an_tables_options to = {
      .min_share_pct = r->kernel_min_share,
      .kernel_table_limit = r->opt->kernel_table_limit,
      .framework_id = fm->fw->id,
      .framework_repository = fm->fw->repository,
      .framework_label = fm->fw->label,
      .model_path = c->model.value,
      .tp_size = c->tp_size.value,
      .platform = c->platform.value,
      .arch = c->arch.value,
      .component_evidence = te_rules_settings(r->rules)->fuse_component_evidence,
      .steps = r->steps,
      .topology = c->topology.value,
      .workload = r->report.run.workload.value,
      /* beside it build_beside_tables asks no rule */
      .two_threads = an_workers_count(r->opt->rank_workers, 2) > 1,
  };
  an_status rc =
      an_tables_build(fm->views, fm->n, mapping_side(r)->kmap, fm->kmap, r->rules, &to, &r->tables);
  return rc == AN_OK ? AN_OK : fail(r, rc, fm->label, "%s", build_failure(rc));
}

/* The rows' in-step time launched under ops a compiler cannot fuse through (opaque_ops.h):
 * the eager-chain item leaves it out. */
static an_status build_opaque(run_state *r) {
  const side *fm = &r->formal;
  an_opaque_probes *probes = NULL; /* one per view for both: a kernel is asked once */
  an_status rc = an_opaque_probes_create(fm->views, fm->n, r->rules, &probes);
  if (rc == AN_OK)
    rc = an_opaque_steps(fm->views, fm->n, r->steps, fm->kmap, r->rules, probes, &r->tables);
  /* then the chains as runs: a row launched only under opaque ops is no link */
  if (rc == AN_OK)
    rc = an_chain_runs_build(fm->views, fm->n, r->steps, fm->kmap, r->rules, probes, &r->tables);
  an_opaque_probes_destroy(probes);
  return rc == AN_OK ? AN_OK : fail(r, rc, fm->label, "out of memory");
}

/* A device with a blank name (ROCm often writes none) that the device pack placed by its
 * architecture, CU count and memory: the run's GPU is that part, and says it is inferred
 * (review 13: "From: trace metadata" read as if the trace named it). */
static void name_blank_gpu(run_state *r) {
  an_run_context *c = &r->report.run.context;
  const an_roofline_device *d = &r->roofline.device;
  if (c->gpu.value || !d->id || !d->gpu || *d->gpu) return;
  c->gpu_placed = (struct an_gpu_placed){d->label, d->arch, d->sms};
  c->gpu.source = AN_SOURCE_DEVICE_PACK;
}

/* A run whose context names no model takes the one the roofline identified and used: from
 * the trace's content, or from an input path picking among the entries the content fits
 * (roofline_model.h). A model file named in the Python frames (`models/qwen3.py`: a family,
 * "qwen3") gives way to a model the content itself identifies (Qwen3-8B from its vocabulary
 * and layer count), so the header and the roofline's Limits line name the same model. So
 * does a name (server args, an input path) of another model than the one the content's
 * shapes alone identify: the shapes are what the run computed (brief 10 defect 2). */
static void name_model_from_roofline(run_state *r) {
  an_run_context *c = &r->report.run.context;
  const an_roofline_model *m = &r->roofline.model;
  bool family_only = c->model.source == AN_SOURCE_PYTHON_FRAMES && !m->from_hint;
  /* deviation A14; the compat pack (fuse.context_from_trace false) keeps the name */
  bool overruled = te_rules_settings(r->rules)->fuse_context_from_trace &&
                   m->from.kind == AN_IDENT_CONTENT && m->from.named && m->label &&
                   strcmp(m->from.named, m->label) != 0;
  if ((c->model.value && !family_only && !overruled) || !m->label ||
      !(m->used || m->attention_used))
    return;
  c->model =
      (an_text_fact){m->label, m->from_hint ? AN_SOURCE_DETECTION_RULE : AN_SOURCE_TRACE_CONTENT};
}

/* The rooflines of the kernel rows: the formal launches' shapes, else (graph replay) the
 * mapping traces' launches of the same kernel. */
static an_status build_roofline(run_state *r, an_error *err) {
  const side *fm = &r->formal, *sa = server_args_side(r);
  /* the texts a known model may be named by, most trusted first: the server args' model
   * path, the inputs as named and their files, the run context's model (Python frames) */
  const char **texts = calloc(fm->n + 3, sizeof *texts);
  if (!texts) return fail_in(err, AN_ERR_NOMEM, fm->label, "out of memory");
  size_t n = 0;
  if (sa && sa->sa.model_path) texts[n++] = sa->sa.model_path;
  texts[n++] = fm->label;
  for (size_t i = 0; i < fm->n; i++) texts[n++] = fm->paths[i];
  if (r->report.run.context.model.value) texts[n++] = r->report.run.context.model.value;
  an_roofline_side f = {fm->views, fm->n, fm->kmap, texts, n, r->steps, r->scans};
  an_roofline_side m = {
      r->mapping.views, r->two ? r->mapping.n : 0, r->mapping.kmap, NULL, 0, NULL, NULL};
  an_status rc = an_roofline_build(&f, &m, r->rules, r->strings, &r->tables, &r->roofline);
  free(texts);
  if (rc == AN_OK) name_blank_gpu(r);
  if (rc == AN_OK) name_model_from_roofline(r);
  return rc == AN_OK ? AN_OK : fail_in(err, rc, fm->label, "out of memory");
}

/* Whether the run has an overlap table: always with a mapping trace; in single-trace mode
 * (the traces are their own mapping) unless the packs set overlap.single_trace to false
 * (the reference layout, --compat reference: its placeholder row). */
static bool overlap_wanted(const run_state *r) {
  return r->two || te_rules_settings(r->rules)->overlap_single_trace;
}

/* The overlap table: in single-trace mode the traces are their own mapping. */
static an_status build_overlap(run_state *r) {
  const side *fm = &r->formal, *ms = mapping_side(r);
  an_overlap_trace *ofm = calloc(fm->n, sizeof *ofm);
  an_overlap_trace *omp = calloc(ms->n, sizeof *omp);
  if (!ofm || !omp) {
    free(ofm);
    free(omp);
    return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  }
  for (size_t i = 0; i < fm->n; i++)
    ofm[i] = (an_overlap_trace){&fm->views[i], fm->kmap, r->steps ? &r->steps[i] : NULL};
  for (size_t i = 0; i < ms->n; i++) omp[i] = (an_overlap_trace){&ms->views[i], ms->kmap, NULL};
  an_overlap_options oo = {.timeline = r->timeline,
                           .pid_substring = r->opt->pid_substring,
                           .table_limit = r->opt->overlap_table_limit,
                           .single_trace = !r->two};
  an_overlap_status os = an_overlap_analyze(omp, ms->n, ofm, fm->n, r->rules, &oo, &r->overlap);
  free(ofm);
  free(omp);
  if (os == AN_OVERLAP_OK) return AN_OK;
  if (os == AN_OVERLAP_ERR_LIMIT)
    return fail(r, AN_ERR_INPUT, fm->label,
                "more than %u kernels run at once in one stage (AN_MAX_ACTIVE_KERNELS)",
                (unsigned)AN_MAX_ACTIVE_KERNELS);
  return fail(r, os == AN_OVERLAP_ERR_NOMEM ? AN_ERR_NOMEM : AN_ERR_ARGS, fm->label,
              "overlap analysis failed (%s)",
              os == AN_OVERLAP_ERR_NOMEM ? "out of memory" : "bad arguments");
}

/* ------------------------------------------------------------------ ranks */

static void on_rank_warning(void *ctx, const tr_warning *w) { on_trace_warning(ctx, w); }

/* The Ranks section: every rank of the formal directory; the ranks already read for the
 * tables are summarised from their loaded traces, the others are read in parallel. */
/* A one-rank run keeps its rank's data (JSON "rank_data", one entry per stage of each
 * formal trace) for triage merge. The rank is distributedInfo's, else the file name's,
 * else 0. */
static an_status keep_rank_data(run_state *r) {
  const side *fm = &r->formal;
  r->own_ranks = calloc(fm->n ? fm->n : 1, sizeof *r->own_ranks);
  if (!r->own_ranks) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  size_t parts = 0;
  for (size_t i = 0; i < fm->n; i++) {
    long rank = fm->set.files ? fm->set.files[i].rank : -1;
    const char *stage = fm->set.files ? fm->set.files[i].stage_id : "all";
    an_rank_input in = {fm->paths[i], stage, rank >= 0 ? rank : 0};
    r->own_ranks[i] =
        an_rank_summarize(&in, &fm->views[i], r->steps ? &r->steps[i] : NULL, r->rules, fm->kmap);
    if (!r->own_ranks[i]) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
    parts += an_rank_summary_parts(r->own_ranks[i]);
  }
  r->rank_data = calloc(parts ? parts : 1, sizeof *r->rank_data);
  if (!r->rank_data) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  size_t k = 0;
  for (size_t i = 0; i < fm->n; i++)
    for (size_t j = 0; j < an_rank_summary_parts(r->own_ranks[i]); j++)
      an_rank_summary_data(r->own_ranks[i], j, &r->rank_data[k++]);
  r->report.rank_data = r->rank_data;
  r->report.n_rank_data = parts;
  return AN_OK;
}

static an_status build_ranks(run_state *r) {
  const side *fm = &r->formal;
  size_t n = fm->set.n_rank_files;
  if (r->two) return AN_OK;
  if (r->opt->one_rank || n < 2) return r->opt->no_rank_data ? AN_OK : keep_rank_data(r);
  an_rank_input *in = calloc(n, sizeof *in);
  an_rank_summary **pre = calloc(n, sizeof *pre);
  an_status rc = in && pre ? AN_OK : AN_ERR_NOMEM;
  for (size_t i = 0; i < n && rc == AN_OK; i++) {
    const tr_input_file *f = &fm->set.rank_files[i];
    in[i] = (an_rank_input){f->path, f->stage_id, f->rank};
    for (size_t k = 0; k < fm->n && !pre[i]; k++)
      if (strcmp(fm->paths[k], f->path) == 0) {
        pre[i] = an_rank_summarize(&in[i], &fm->views[k], r->steps ? &r->steps[k] : NULL, r->rules,
                                   fm->kmap);
        if (!pre[i]) rc = AN_ERR_NOMEM;
      }
  }
  if (rc != AN_OK) {
    for (size_t i = 0; pre && i < n; i++) an_rank_summary_free(pre[i]);
    free(pre);
    free(in);
    return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  }
  an_ranks_options ro = {.workers = r->opt->rank_workers,
                         .reader_chunk_size = r->opt->reader_chunk_size,
                         .warn = on_rank_warning,
                         .warn_ctx = r};
  an_ranks_failure rf = {0};
  rc = an_ranks_build(in, n, pre, r->rules, &ro, &r->ranks, &rf);
  free(pre);
  free(in);
  if (rc != AN_OK)
    return fail(r, rc, rf.path, "%s", rf.error.message[0] ? rf.error.message : "out of memory");
  for (size_t i = 0; i < r->ranks.n_unread; i++) { /* left out of the section: said so */
    const an_ranks_failure *u = &r->ranks.unread[i];
    add_hint(r, (an_hint){AN_HINT_RANK_UNREAD, AN_HINT_WARNING, u->path, (uint64_t)u->rank,
                          u->error.has_offset ? u->error.offset : 0, u->error.message});
  }
  r->report.ranks = r->ranks.reports;
  r->report.n_ranks = r->ranks.n_reports;
  /* the header lists every trace the run read, not only the tables' rank */
  r->rank_paths = calloc(n, sizeof *r->rank_paths);
  if (!r->rank_paths) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  for (size_t i = 0; i < n; i++) r->rank_paths[i] = fm->set.rank_files[i].path;
  r->report.run.n_rank_inputs = n;
  r->report.run.rank_inputs = r->rank_paths;
  return AN_OK;
}

/* ------------------------------------------------------------------ time account */

/* The step windows of the formal traces (analysis/steps.h), for the tables' per-step time
 * and the time account; released with the traces. */
static an_status build_steps(run_state *r) {
  const side *fm = &r->formal;
  r->steps = calloc(fm->n ? fm->n : 1, sizeof *r->steps);
  an_status rc = r->steps ? AN_OK : AN_ERR_NOMEM;
  for (size_t i = 0; rc == AN_OK && i < fm->n; i++)
    rc = an_steps_build(&fm->views[i], r->rules, &r->steps[i]);
  return rc == AN_OK ? AN_OK : fail(r, rc, NULL, "out of memory");
}

static void free_steps(run_state *r) {
  for (size_t i = 0; r->steps && i < r->formal.n; i++) an_steps_free(&r->steps[i]);
  free(r->steps);
  r->steps = NULL;
}

/* The formal views' model scans (roofline_model.h) for the roofline, which takes them over:
 * they read only the traces' CPU ops and the rules' model entries (no matcher), and keep a
 * few words per model entry, so they run beside the time account on the second thread
 * (run_two), off the roofline's path after the tables (hta15: a third of its work). */
static an_status build_model_scans(run_state *r, an_error *err) {
  const side *fm = &r->formal;
  r->scans = calloc(fm->n ? fm->n : 1, sizeof *r->scans);
  if (!r->scans) return fail_in(err, AN_ERR_NOMEM, fm->label, "out of memory");
  for (size_t i = 0; i < fm->n; i++)
    if (!an_model_scan_build(r->rules, fm->views[i].trace, &r->scans[i]))
      return fail_in(err, AN_ERR_NOMEM, fm->label, "out of memory");
  return AN_OK;
}

/* Beside the time account, which reads neither (run_two, in lanes: the names' scan runs
 * matchers): the model scans, then the kernel names' facts infer_context asked (many
 * distinct names: 316 M instructions, more than the time account's 258 M). */
static an_status build_beside_timeline(run_state *r, an_error *err) {
  an_status rc = build_model_scans(r, err);
  if (rc == AN_OK && (r->names_family || r->names_single))
    r->names = scan_kernel_names(r, r->names_family, r->names_single);
  return rc;
}

static void free_model_scans(run_state *r) {
  for (size_t i = 0; r->scans && i < r->formal.n; i++) an_model_scan_free(&r->scans[i]);
  free(r->scans);
  r->scans = NULL;
}

/* The time account of the formal traces over their step windows (it keeps copies of what
 * it shows: the traces go before the report). */
static an_status build_timeline(run_state *r) {
  const side *fm = &r->formal;
  bool ahead = r->nests_ahead;
  an_timeline_input *in = calloc(fm->n ? fm->n : 1, sizeof *in);
  an_status rc = in ? AN_OK : AN_ERR_NOMEM;
  for (size_t i = 0; rc == AN_OK && i < fm->n; i++)
    in[i] = (an_timeline_input){&fm->views[i], &r->steps[i], fm->paths[i], fm->kmap, i, ahead};
  if (rc == AN_OK) rc = an_timeline_build(in, fm->n, r->rules, r->strings, &r->timeline);
  free(in);
  an_workload_input wi = {fm->traces, r->steps, fm->n, fm->fw->id, fm->fw->label, fm->fw_source};
  if (rc == AN_OK) r->report.run.workload = an_workload_detect(&wi, r->rules, r->strings);
  if (rc == AN_OK) r->report.run.step_shape = an_step_shape_detect(&wi, r->rules, r->strings);
  if (rc == AN_OK) r->report.run.compiled = an_compiled_detect(&wi, r->rules, r->strings);
  return rc == AN_OK ? AN_OK : fail(r, rc, NULL, "out of memory");
}

/* ------------------------------------------------------------------ the model */

static void table_stage(an_stage_report *s, const an_stage_tables *t, const an_roofline_stage *rs) {
  s->id = t->stage->id;
  s->label = t->stage->label;
  s->order = t->stage->order;
  s->has_kernels = true;
  s->kernel_total_us = t->total_us;
  s->n_kernels = t->n_rows;
  s->n_kernels_shown = t->n_shown;
  s->kernels = t->rows;
  s->xpu_launch_rows = t->xpu;
  s->n_fuse = t->n_fuse;
  s->n_fuse_shown = t->n_fuse_shown;
  s->fuse = t->fuse;
  s->exec = t->exec;
  s->chain = t->chain;
  if (!rs) return;
  s->n_rooflines = rs->n;
  s->rooflines = rs->records;
  s->roofline_counts = rs->counts;
}

static void attach_overlap(an_stage_report *s, const an_overlap_stage *o) {
  s->overlap = o;
  s->gpu_busy_us = o->busy_us;
  s->gpu_idle_us = o->span_us > o->busy_us ? o->span_us - o->busy_us : 0;
}

/* A stage whose counted steps all mix prefill and decode requests (matcher mixed_step on
 * their annotations) takes the label of the packs' `mixed` stage: its steps are placed in
 * extend, yet "extend/prefill" would misname them (docs/deviations.md S4). */
static void label_mixed(run_state *r, an_stage_report *s) {
  const an_stage_timeline *tl = s->timeline;
  const te_matcher *m = te_rules_matcher(r->rules, "mixed_step");
  const te_stage *mixed = te_rules_stage_by_id(r->rules, "mixed");
  if (!tl || !tl->n_steps || !m || !mixed) return;
  for (size_t i = 0; i < tl->n_steps; i++) {
    const char *name = tl->steps[i].name;
    if (!name || !te_matcher_match(m, name, strlen(name))) return;
  }
  for (size_t j = 0; j < r->roofline.n_stages; j++) /* rooflines name a sibling's stage */
    for (size_t k = 0; k < r->roofline.stages[j].n; k++)
      if (r->roofline.stages[j].records[k].sibling_stage == s->label)
        r->roofline.stages[j].records[k].sibling_stage = mixed->label;
  s->label = mixed->label;
}

/* One list of stages: the kernel-table stages (in stage order) with the overlap block of
 * the same stage attached, plus overlap-only stages, sorted by stage order (stable). */
static an_status assemble_stages(run_state *r) {
  size_t cap = r->tables.n_stages + r->overlap.n_stages, n = 0;
  r->stages = calloc(cap ? cap : 1, sizeof *r->stages);
  if (!r->stages) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  for (size_t i = 0; i < r->tables.n_stages; i++)
    table_stage(&r->stages[n++], &r->tables.stages[i],
                i < r->roofline.n_stages ? &r->roofline.stages[i] : NULL);
  for (size_t i = 0; i < r->overlap.n_stages; i++) {
    const an_overlap_stage *o = &r->overlap.stages[i];
    size_t k = 0;
    while (k < n && strcmp(r->stages[k].id, o->stage) != 0) k++;
    if (k == n) {
      r->stages[n++] = (an_stage_report){.id = o->stage, .label = o->label, .order = o->order};
    }
    attach_overlap(&r->stages[k], o);
  }
  for (size_t i = 0; i < n; i++) {
    r->stages[i].timeline = an_timeline_stage(r->timeline, r->stages[i].id);
    label_mixed(r, &r->stages[i]);
  }
  for (size_t i = 0; i < r->tables.n_stages; i++) /* the fuse rows' saving per step */
    an_fuse_per_step(&r->tables.stages[i],
                     an_timeline_stage(r->timeline, r->tables.stages[i].stage->id));
  /* "try fusion" only with a partner the fuse table or the eager chain names (review-1
   * defect 3): after the tables, the rooflines and the time account are attached */
  for (size_t i = 0; i < r->overlap.n_stages; i++) {
    size_t k = 0;
    while (k < n && strcmp(r->stages[k].id, r->overlap.stages[i].stage) != 0) k++;
    if (k < n)
      an_overlap_bind_fusion(&r->overlap.stages[i], &r->stages[k], r->rules,
                             r->roofline.device.hbm_tbs);
  }
  for (size_t i = 1; i < n; i++) { /* insertion sort: stable, a handful of stages */
    an_stage_report cur = r->stages[i];
    size_t j = i;
    for (; j > 0 && r->stages[j - 1].order > cur.order; j--) r->stages[j] = r->stages[j - 1];
    r->stages[j] = cur;
  }
  r->report.stages = r->stages;
  r->report.n_stages = n;
  return AN_OK;
}

static bool has_key(const tr_server_args *sa, const char *key) {
  for (size_t i = 0; i < sa->n_keys; i++)
    if (strcmp(sa->keys[i], key) == 0) return true;
  return false;
}

static an_framework_fact framework_fact(const side *s) {
  return (an_framework_fact){s->fw->id, s->fw->label, s->fw_source, s->fw_evidence};
}

static an_status assemble_provenance(run_state *r, double kernel_min_share) {
  an_provenance *p = &r->report.run;
  const side *fm = &r->formal, *ms = mapping_side(r);
  p->mode = r->two ? AN_MODE_MAPPING_FORMAL : AN_MODE_SINGLE;
  p->overlap_off = !overlap_wanted(r);
  p->overlap_plain_lines = te_rules_settings(r->rules)->overlap_plain_lines;
  p->framework = framework_fact(fm);
  p->mapping_framework = framework_fact(ms);
  p->n_formal_inputs = fm->n;
  p->formal_inputs = fm->paths;
  p->n_mapping_inputs = ms->n;
  p->mapping_inputs = ms->paths;
  p->kernel_min_share_pct = kernel_min_share;
  p->overlap_min_share_pct = te_rules_settings(r->rules)->overlap_min_share_pct;
  size_t np = te_rules_pack_count(r->rules);
  r->packs = calloc(np ? np : 1, sizeof *r->packs);
  if (!r->packs) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  for (size_t i = 0; i < np; i++)
    r->packs[i] = (an_pack_ref){te_rules_pack(r->rules, i)->id, te_rules_pack(r->rules, i)->file};
  p->n_packs = np;
  p->packs = r->packs;
  return AN_OK;
}

/* The largest distributedInfo.world_size of the formal traces, 0 when none states it. */
static long world_size(const run_state *r) {
  long w = 0;
  for (size_t i = 0; i < r->formal.n; i++) {
    const tr_trace_meta *m = r->formal.traces[i] ? tr_trace_meta_get(r->formal.traces[i]) : NULL;
    if (m && m->world_size != TR_NO_ID && m->world_size > w) w = (long)m->world_size;
  }
  return w;
}

/* A Kineto kernel's pid is its device index: the chosen pid when it is the id of a device
 * the trace lists (deviceProperties), else -1 (an OS process id, or no device list). */
static long device_of_pid(const tr_trace_meta *m, const char *pid) {
  if (!m || !pid || *pid < '0' || *pid > '9') return -1;
  char *end = NULL;
  long v = strtol(pid, &end, 10);
  for (size_t d = 0; !*end && d < m->n_devices; d++)
    if (m->devices[d].id == (int64_t)v) return v;
  return -1;
}

/* Who the tables' trace is (an_trace_limits.trace_rank, _host, _device): the first formal
 * trace that states a rank, else the first one read. */
static void trace_identity(run_state *r, an_trace_limits *l) {
  l->trace_rank = l->trace_device = -1;
  const side *fm = &r->formal;
  size_t at = fm->n;
  for (size_t i = 0; i < fm->n && at == fm->n; i++) {
    const tr_trace_meta *m = fm->traces[i] ? tr_trace_meta_get(fm->traces[i]) : NULL;
    if (m && m->rank != TR_NO_ID && m->rank >= 0) at = i;
  }
  for (size_t i = 0; i < fm->n && at == fm->n; i++)
    if (fm->traces[i]) at = i;
  if (at == fm->n) return;
  tr_trace *t = fm->traces[at];
  const tr_trace_meta *m = tr_trace_meta_get(t);
  if (m && m->rank != TR_NO_ID && m->rank >= 0) l->trace_rank = (long)m->rank;
  const char *host = m && m->host_name ? tr_str_get(t, m->host_name) : NULL;
  if (host && *host) l->trace_host = an_strtab_intern(r->strings, host, strlen(host));
  if (fm->views[at].pid) l->trace_device = device_of_pid(m, tr_str_get(t, fm->views[at].pid));
}

/* Whether the formal traces were filtered to GPU work (analysis/trace_filter.h): the
 * Limits then say the host time nothing recorded was dropped by the filter. */
static an_status trace_filter_limits(run_state *r) {
  an_trace_filter f = {0};
  for (size_t i = 0; i < r->formal.n; i++) {
    if (!r->formal.traces[i]) continue;
    /* the view's counts: the Ranks summary counted them already */
    const an_trace_filter *g = an_trace_view_filter(&r->formal.views[i]);
    if (!g) return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
    an_trace_filter_merge(&f, g);
  }
  an_trace_limits *l = &r->report.limits;
  l->filtered =
      an_trace_filter_says(&f, te_rules_settings(r->rules)->report_filtered_min_runtime_calls,
                           te_rules_settings(r->rules)->report_filtered_min_op_pct);
  l->filtered_calls = l->filtered ? f.runtime_calls : 0;
  l->filtered_ops = l->filtered ? f.cpu_ops : 0;
  l->filtered_holding_ops = l->filtered ? f.launching_ops : 0;
  if (l->filtered) an_timeline_mark_filtered(r->timeline);
  /* every rank of a directory run, each counted once (a rank has a row per stage) */
  for (size_t s = 0; s < r->ranks.n_reports; s++)
    for (size_t i = 0; i < r->ranks.reports[s].n_rows; i++) {
      const an_rank_row *w = &r->ranks.reports[s].rows[i];
      bool seen = false;
      for (size_t t = 0; t < s && !seen; t++)
        for (size_t k = 0; k < r->ranks.reports[t].n_rows && !seen; k++)
          seen = r->ranks.reports[t].rows[k].rank == w->rank;
      if (seen) continue;
      l->ranks_read++;
      l->filtered_ranks += w->filtered;
    }
  for (size_t i = 0; i < r->report.n_stages; i++) {
    r->stages[i].host_filtered = l->filtered;
    r->stages[i].graph_staging = r->staging.keys.n ? &r->staging : NULL;
  }
  return AN_OK;
}

static an_status assemble(run_state *r, double kernel_min_share) {
  an_status rc = assemble_provenance(r, kernel_min_share);
  if (rc == AN_OK) rc = assemble_stages(r);
  if (rc != AN_OK) return rc;
  an_kernel_map_view(mapping_side(r)->kmap, &r->report.kernel_map);
  r->report.roofline_device = r->roofline.device;
  r->report.roofline_model = r->roofline.model;
  r->report.hints = r->hints;
  r->report.n_hints = r->n_hints;
  r->report.limits.world_size = world_size(r);
  trace_identity(r, &r->report.limits);
  if (trace_filter_limits(r) != AN_OK) return AN_ERR_NOMEM;
  an_summary_limits(&r->report, te_rules_settings(r->rules));
  /* a host copy's rate against the link: the summary's copy items read it */
  for (size_t i = 0; i < r->overlap.n_stages; i++)
    an_overlap_copy_rates(&r->overlap.stages[i], r->roofline.device.host_link_gbs, r->rules);
  if (an_summary_build(&r->report, r->stages, r->rules, &r->summary) != AN_OK)
    return fail(r, AN_ERR_NOMEM, NULL, "out of memory");
  /* the overlap rows' priorities agree with the summary's banner (review 3), and their wait
   * words with its wait item (O22) */
  for (size_t i = 0; i < r->overlap.n_stages; i++) {
    an_overlap_follow_bottleneck(&r->overlap.stages[i], &r->report.bottleneck, r->rules);
    for (size_t k = 0; k < r->report.n_stages; k++)
      if (r->stages[k].overlap == &r->overlap.stages[i])
        an_overlap_follow_waits(&r->overlap.stages[i], r->stages[k].wait_story, r->rules);
  }
  return AN_OK;
}

/* ------------------------------------------------------------------ entry point */

void an_report_destroy(an_report *rep) {
  if (!rep) return;
  run_state *r = (run_state *)rep;
  an_overlap_result_free(&r->overlap);
  an_ranks_result_free(&r->ranks);
  for (size_t i = 0; r->own_ranks && i < r->formal.n; i++) an_rank_summary_free(r->own_ranks[i]);
  free(r->own_ranks);
  free(r->rank_data);
  free(r->rank_paths);
  an_roofline_free(&r->roofline);
  an_tables_free(&r->tables);
  side_free(&r->formal);
  side_free(&r->mapping);
  free(r->stages);
  free(r->hints);
  free(r->packs);
  an_summary_free(&r->summary);
  an_timeline_destroy(r->timeline);
  an_graph_staging_free(&r->staging);
  an_strtab_destroy(r->strings);
  free(r);
}

/* ------------------------------------------------------------------ two at once */

/* A step run on a second thread (run_two): its failure goes to a record of its own. */
typedef struct second_step {
  run_state *r;
  an_status (*fn)(run_state *r, an_error *err);
  unsigned lane; /* the rules' lane it asks in (te_lane_enter); 0: outside lanes */
  an_status rc;
  an_error err;
} second_step;

static void *run_second(void *arg) {
  second_step *s = arg;
  if (s->lane && te_lane_enter(s->lane) != 0) {
    s->rc = fail_in(&s->err, AN_ERR_NOMEM, NULL, "out of memory");
    return NULL;
  }
  s->rc = s->fn(s->r, &s->err);
  if (s->lane) te_lane_leave();
  return NULL;
}

/* Runs first(r) on this thread and second(r) on another at once, joined before it returns
 * (issue 32: after the read the inflate thread's core had nothing to do). With one thread
 * (--workers 1, one online CPU, no thread to be had) second runs after first, as it did
 * before, for the same report. The two read what both read only; what either would build
 * on first use is built before. lanes: both ask the rules, each in a lane of its own
 * (rules.h). first's failure comes before second's, as one after the other. */
static an_status run_two(run_state *r, an_status (*first)(run_state *),
                         an_status (*second)(run_state *, an_error *), bool lanes) {
  second_step s = {.r = r, .fn = second, .lane = lanes ? 2 : 0, .rc = AN_OK};
  pthread_t th;
  bool two = an_workers_count(r->opt->rank_workers, 2) > 1 && (!lanes || te_lane_enter(1) == 0);
  if (two && !(two = pthread_create(&th, NULL, run_second, &s) == 0) && lanes) te_lane_leave();
  an_status rc = first(r);
  if (two) {
    pthread_join(th, NULL);
    if (lanes) te_lane_leave();
    if (lanes) te_rules_lanes_fold(r->rules);
  } else if (rc == AN_OK) {
    s.lane = 0;
    r->one_thread = true;
    run_second(&s);
    r->one_thread = false;
  }
  if (rc == AN_OK && s.rc != AN_OK) *r->err = s.err;
  return rc == AN_OK ? s.rc : rc;
}

/* The formal views' op nests (an_trace_view_ops_ahead), off the first thread: from the
 * read's end to the time account's (nests_start), which may ask them for its untraced host
 * stretches and its collectives' host messages (hta15: ~22 ms of the first thread), and
 * beside the tables, for the opaque-op split and the roofline after them. A nest reads the
 * trace only and is built under the view's lock, so a pass asking it meanwhile waits for
 * it. A failure is left to build_after_tables, which asks again and says it. */
static void nests_ahead(run_state *r) {
  for (size_t i = 0; i < r->formal.n; i++)
    if (r->formal.traces[i]) an_trace_view_ops_ahead(&r->formal.views[i]);
}

static void *nests_main(void *arg) {
  nests_ahead(arg);
  return NULL;
}

/* Starts the nests on a thread of their own, joined after the time account: the steps and
 * the frameworks' detection beside them (run_two), the kernel maps and the ranks leave the
 * second core room for one (hta x 2: steps 19.1 M instructions beside the detection's
 * 10.2 M, the kernel maps 13.0 M alone, the nests 15.5 M), and a nest ready when the time
 * account asks spares it an index of its own. A thread for one step only, beside the
 * kernel maps or the time account, was held or came late. False: no thread (one CPU,
 * --workers 1, or none to be had); the nests are built when asked. */
static bool nests_start(run_state *r, pthread_t *th) {
  return an_workers_count(r->opt->rank_workers, 2) > 1 &&
         pthread_create(th, NULL, nests_main, r) == 0;
}

/* Beside the tables, whose core was idle: the formal views' launching ops of their kernels
 * (an_trace_view_stage_ops: the trace and its id indexes only), which the fusion table's
 * shape gate asks early in its first stage (hta15: ~25 ms of the first thread), then the
 * nests for the passes after the tables, then the filter counts the Limits read at the
 * model's assembly (an_trace_view_filter: the trace and the nest; HF x 5: 2.2 M). No
 * pass of the tables asks the counts; a failure is met again at the assembly. */
static an_status build_beside_tables(run_state *r, an_error *err) {
  (void)err; /* nothing here fails: a pass that needs one of these asks again and says it */
  if (r->one_thread) return AN_OK; /* one thread: each is built when asked */
  for (size_t i = 0; i < r->formal.n; i++)
    if (r->formal.traces[i]) an_trace_view_stage_ops(&r->formal.views[i], 0);
  nests_ahead(r);
  for (size_t i = 0; i < r->formal.n; i++)
    if (r->formal.traces[i]) an_trace_view_filter(&r->formal.views[i]);
  return AN_OK;
}

/* The nests the time account did not ask go until the tables (build_beside_tables builds them
 * again beside them): held through the overlap's transient, the run's peak on most shapes,
 * a nest raised hf50's (session 16: +0.7-0.9 MB). Costs one more nest of CPU, on the
 * second thread, on such traces. */
static void drop_unasked_nests(run_state *r) {
  for (size_t i = 0; i < r->formal.n; i++)
    if (r->formal.traces[i]) an_trace_view_ops_drop_unasked(&r->formal.views[i]);
}

/* After the tables: the opaque-op split and chain runs here, the roofline beside them.
 * They write different fields of the rows; of the views they read the op nests, built
 * beside the tables (build_beside_tables; the roofline alone asks the stage ops and the
 * mapping views' nests); their transient memory is small next to the overlap's, the run's
 * peak. The time account, the overlap and the tables stay one after the other: two of
 * them at once, or the tables' rows before the overlap, raised the peak (hta15 +4.3 MB,
 * hf50 +6 MB). */
static an_status build_after_tables(run_state *r) {
  for (size_t i = 0; i < r->formal.n; i++)
    if (r->formal.traces[i] && !an_trace_view_ops(&r->formal.views[i]))
      return fail(r, AN_ERR_NOMEM, r->formal.label, "out of memory");
  an_status rc = run_two(r, build_opaque, build_roofline, true);
  for (size_t i = 0; rc == AN_OK && i < r->formal.n; i++)
    if (r->formal.traces[i]) rc = an_graph_staging_add(&r->staging, &r->formal.views[i], r->rules);
  return rc;
}

/* Reads both sides, then analyses: every step before the model is assembled. */
static an_status analyse(run_state *r) {
  an_status rc = load_sides(r);
  if (rc != AN_OK) return rc;
  if (!side_kernels(&r->formal))
    return fail(r, AN_ERR_INPUT, r->formal.label, "no GPU kernel events to analyse");
  pthread_t nests;
  r->nests_ahead = nests_start(r, &nests);
  rc = run_two(r, build_steps, decide_frameworks, true);
  keep_evidence(r, &r->formal);
  if (r->two) keep_evidence(r, &r->mapping);
  if (rc == AN_OK) rc = build_kernel_maps(r);
  /* the ranks before the run context: the topology gate reads the host names the rank
   * files state after their events, which only reading them finds */
  if (rc == AN_OK) rc = build_ranks(r);
  if (rc == AN_OK) infer_context(r);
  /* The overlap before the tables: neither reads the other, and the overlap sweep's
   * per-kernel and per-name state (its peak) is freed before the kernel table's rows are
   * allocated, so the two never coexist (many distinct names: 220 -> 192 MB). */
  /* the time account first: its per-instance collective waits decide the overlap's wait
   * rows (issue 31) */
  if (rc == AN_OK) rc = run_two(r, build_timeline, build_beside_timeline, true);
  if (rc == AN_OK) infer_context_names(r);
  if (r->nests_ahead) pthread_join(nests, NULL);
  r->nests_ahead = false;
  if (rc == AN_OK) drop_unasked_nests(r);
  if (rc == AN_OK && overlap_wanted(r)) rc = build_overlap(r);
  if (rc == AN_OK) rc = run_two(r, build_tables, build_beside_tables, false);
  return rc == AN_OK ? build_after_tables(r) : rc;
}

an_status an_run(const an_run_options *opt, const te_rules *rules, an_report **out, an_error *err) {
  *out = NULL;
  memset(err, 0, sizeof *err);
  run_state *r = calloc(1, sizeof *r);
  if (!r || !(r->strings = an_strtab_create())) {
    free(r);
    snprintf(err->message, sizeof err->message, "out of memory");
    return AN_ERR_NOMEM;
  }
  r->opt = opt;
  r->rules = rules;
  r->err = err;
  r->two = opt->mapping.path || opt->mapping.data;
  an_status rc = AN_OK;
  const char *missing = te_rules_settings_missing(rules);
  if (!te_rules_settings(rules))
    rc = fail(r, AN_ERR_RULES, NULL, "the rule packs are not finalized");
  else if (missing)
    rc = fail(r, AN_ERR_RULES, NULL, "the rule packs set no value for setting '%s'", missing);
  /* The kernel table's bar, decided once: --min-share, else the packs' setting. */
  double kernel_min_share = rc == AN_OK && opt->min_share_pct < 0
                                ? te_rules_settings(rules)->kernel_table_min_share_pct
                                : opt->min_share_pct;
  r->kernel_min_share = kernel_min_share;
  if (rc == AN_OK) rc = analyse(r);
  if (rc == AN_OK) rc = assemble(r, kernel_min_share);
  free_steps(r);
  free_model_scans(r);
  side_release_traces(&r->formal);
  side_release_traces(&r->mapping);
  r->opt = NULL;
  r->err = NULL;
  if (rc != AN_OK) {
    an_report_destroy(&r->report);
    return rc;
  }
  *out = &r->report;
  return AN_OK;
}
