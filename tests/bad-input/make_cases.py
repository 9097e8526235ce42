#!/usr/bin/env python3
"""The bad-input corpus of triage: every case, its input, and the outcome it must have.

Standard library only. Two kinds of input:

* small cases are committed under tests/bad-input/cases/ (this script wrote them:
  `python3 tests/bad-input/make_cases.py --write`; `--check` verifies they are current);
* big cases (every limit of engine/include/triage/limits.h and src/util/limits.h just
  over, deep nesting, many files) are written at test time into a scratch directory by
  `--big DIR`, so nothing huge is committed and the bytes are still reproducible.

run_bad_input.py imports CASES from here. A case's outcome is either an error (exit code
plus a regex the one-line stderr message must match) or "report" (odd but valid input:
exit 0, a report on stdout, only warning lines on stderr).

Placeholders in args and regexes: <C> committed cases dir, <G> generated dir, <T> the
case's scratch dir, <GOOD> a small valid trace, <URL> the stand-in server of the case,
<RULES> the default rule-pack dir, <BROKEN> tests/rules/broken. In regexes they stand for
the escaped path.
"""
import gzip
import io
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")

MiB = 1024 * 1024
# Mirrors of engine/include/triage/limits.h and src/util/limits.h (run_bad_input.py checks
# they still agree).
LIMITS = {
    "TE_MAX_YAML_DEPTH": 64, "TE_MAX_YAML_ALIASES": 64, "TE_MAX_YAML_NODES": 200000,
    "TE_MAX_PACK_BYTES": 8 * MiB, "TE_MAX_PATTERN_LEN": 4096, "TE_MAX_PACKS": 256,
    "TE_MAX_DIAGNOSTICS": 1000, "TE_PCRE2_MATCH_LIMIT": 1000000, "TE_PCRE2_DEPTH_LIMIT": 10000,
    "TE_MATCH_CACHE_MAX": 262144, "TR_MAX_JSON_DEPTH": 512, "TR_MAX_STRING_BYTES": 1 * MiB,
    "TR_MAX_EVENTS": 500000000, "TR_MAX_NUMBER_CHARS": 4096, "TR_MAX_SMALL_JSON_BYTES": 64 * MiB,
    "TR_MAX_SAMPLE_BYTES": 4 * MiB, "TR_MAX_ARG_BYTES": 64 * 1024, "TR_MAX_DIR_FILES": 100000, "TR_MAX_DIR_DEPTH": 32,
    "LV_MAX_REPLY_BYTES": 16 * MiB, "LV_MAX_STEP_TIMEOUT_S": 86400,
    "LV_MAX_REQUESTS_PER_STAGE": 100000, "LV_MAX_PROMPT_WORDS": 1000000,
    "LV_ERROR_SNIPPET_BYTES": 200, "AN_MAX_ACTIVE_KERNELS": 4096,
    "CLI_MAX_RANK_REPORT_BYTES": 1024 * MiB,
    "TE_MAX_CHAIN_BETWEEN": 64, "TE_MAX_CHAIN_PIECES": 8, "TE_MAX_LAYER_CYCLE": 64,
}
# Limits with no just-over case here, and where they are tested instead.
LIMITS_ELSEWHERE = {
    "TE_PREFILTER_MAX_STATES": "a shortcut's size, not an input limit: past it the classifier runs "
                               "every rule (tests/unit/test_engine.c "
                               "past_the_state_limit_every_rule_runs)",
    "TE_LITERAL_SET_MAX": "a shortcut's size, not an input limit: past it the regex has no "
                          "literal set and runs on every name (tests/unit/test_engine.c "
                          "engine_regex_literals past_the_limits_the_regex_always_runs)",
    "TE_LITERAL_MAX_LEN": "a shortcut's size, not an input limit: a longer literal run requires "
                          "its prefix (tests/unit/test_engine.c engine_regex_literals "
                          "past_the_limits_the_regex_always_runs)",
    "TE_LITERAL_MAX_DEPTH": "a shortcut's size, not an input limit: past it the regex has no "
                            "literal set and runs on every name (tests/unit/test_engine.c "
                            "engine_regex_literals past_the_limits_the_regex_always_runs)",
    "TE_LOCAL_RULE_WORDS": "a buffer's size, not an input limit: past it the answer is on the "
                           "heap (tests/unit/test_engine.c engine_defaults "
                           "a_later_group_never_reads_a_destroyed_groups_bits: a group past it)",
    "TE_SUBJECT_LOCAL_HITS": "a buffer's size, not an input limit: a rule set with more token "
                             "slots keeps a subject's hits on the heap (the shipped packs use 42 "
                             "of the 512; no test crosses it)",
    "TE_SUBJECT_LOCAL_TEXT": "a buffer's size, not an input limit: a longer name's texts are on the "
                             "heap (tests/unit/test_engine.c engine_defaults "
                             "classifier_prefilter_never_changes_a_decision: 132 zoo names are "
                             "longer)",
    "AN_MAX_WORKERS": "an environment value (TRIAGE_WORKERS=257): tests/ranks/run_ranks.py workers",
    "AN_MAX_STAGES": "the stages the rule packs define, kept in 16 bits by the trace view, not a "
                     "trace's input: past it the view refuses the rules (AN_ERR_RULES); a pack of "
                     "65,535 stages is not a case here",
    "LV_CONNECT_TIMEOUT_S": "a timeout, not an input size: tests/live (unreachable server)",
    "LV_POLL_INTERVAL_MS": "a polling period, not an input limit",
    "LV_MAX_DIR_ENTRIES": "needs a capture that writes 100,001 files: tests/live",
    "LV_MAX_SCAN_DEPTH": "needs a capture that nests output: tests/live",
    "TR_MAX_META_ITEMS": "extra metadata entries are skipped, not refused: tests/unit/test_trace_reader.c run_metadata_lists_are_capped",
    "RP_MAX_DEMANGLE_BYTES": "no report prints display names yet: tests/unit/test_names.c",
    "RP_MAX_DEMANGLED_BYTES": "no report prints display names yet: tests/unit/test_names.c",
    "RP_JSON_STREAM_DEPTH": "the code's own nesting, not the input's: tests/unit/test_report.c "
                            "json_stream nesting_past_the_limit_fails",
    "RP_TIMELINE_STEP_CAUSES": "rows a report lists, not an input limit: tests/unit/test_timeline.c "
                               "report causes_past_the_limits",
    "RP_TIMELINE_CAUSES_SHOWN": "rows a report lists, not an input limit: tests/unit/test_timeline.c "
                                "report causes_past_the_limits",
    "RP_PRINT_US_BELOW_US": "a print switch, not an input limit: tests/unit/test_timeline.c "
                            "summary a_microsecond_step_headline_prints_microseconds",
    "RP_ITEM_ROWS_SHOWN": "rows a report lists, not an input limit: tests/unit/test_timeline.c "
                          "summary pooled_item_links_every_row",
    "AN_ITEM_MORE": "evidence rows an item links, not an input limit: a merged row past it "
                    "is merged and counted on the line (tests/unit/test_report.c "
                    "evidence_past_the_link_limit_is_counted); tests/golden/check_bounds.py "
                    "check_context_row "
                    "(hta_multistream5_a100: the gradient reduce's item links its W row)",
    "AN_ITEM_FRAMES": "Python locations a chain item names, not an input limit: the rest stay "
                      "in the kernel rows' sites; tests/golden/check_item_text.py (hf item 1)",
    "AN_FOLD_TENSORS_MAX": "tensors of one op's Input Dims a fold item compares, not an input "
                           "limit: a tensor past it is not compared (the fold names no GEMM); "
                           "tests/roofline/run_roofline.py check_fold (sglang prefill's "
                           "act-and-mul folds into the gate_up GEMM)",
    "AN_TEMPLATE_ARGS_MAX": "a name past it is not split (its kernel is never paired by its "
                            "arguments), not an error: tests/unit/test_analysis.c "
                            "template_split_reads_top_level_arguments",
    "TR_MAX_HOST_NAME": "a rank file's host_name past it is cut when the directory is "
                        "probed (two hosts equal over that prefix read as one node), not an "
                        "error: tests/unit/test_verdicts.c topology tests",
    "AN_MAX_STAGING_OP_BYTES": "a staging copy's buffer-op name past it is cut on its overlap row "
                               "(the lever matcher reads the prefix), not an error: "
                               "tests/roofline/run_roofline.py bases (DDP's reducer op)",
    "AN_MAX_OP_INPUTS": "an op past it gets no roofline, not an error: tests/unit/test_roofline.c "
                        "shapes_past_the_limits",
    "AN_MAX_SHAPE_RANK": "a tensor past it gets no roofline, not an error: tests/unit/test_roofline.c "
                         "shapes_past_the_limits",
    "AN_MAX_TENSOR_ELEMENTS": "absurd sizes get no roofline, not an error: tests/unit/test_roofline.c "
                              "shapes_past_the_limits",
    "AN_MAX_CHAIN_CANDIDATES": "candidates past the cap are not weighed, not refused: "
                               "tests/unit/test_analysis.c fuse chain_candidates_are_capped",
    "AN_MAX_COLLECTIVE_WORD": "a longer collective name is cut, not refused: tests/unit/test_verdicts.c "
                              "names generic_collectives_split_by_their_collective",
    "AN_MAX_COLLECTIVE_OPS": "collective ops past the cap among a row's sampled launches are not "
                             "weighed, not refused (one kernel name serves a handful): "
                             "tests/unit/test_overlap.c overlap_dependency "
                             "collective_classified_by_its_launching_op",
    "AN_MAX_CHAIN_RIDERS": "distinct rider rows past the cap ride along uncounted, not refused (a "
                           "layer's chain has one or two): tests/unit/test_verdicts.c fuse "
                           "the_layer_chain_is_one_fusion_by_launch_order",
    "AN_MAX_MERGE_SIBLINGS": "a run of sibling GEMMs ends at the cap, not refused: "
                             "tests/unit/test_fusion.c merge caps_end_runs_and_count_shapes",
    "AN_MAX_MERGE_SHAPES": "sibling shapes past the cap are counted, not listed, not refused: "
                           "tests/unit/test_fusion.c merge caps_end_runs_and_count_shapes",
    "AN_MAX_READBACKS": "reads back past the cap are left unexamined, not refused (a capture "
                        "holds a few a step); the examined ones: tests/unit/test_timeline.c "
                        "summary a_host_blocked_in_a_read_back_is_named_and_bounded_by_the_idle_inside",
}

# ------------------------------------------------------------------ building blocks


def gz(data):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def ev(cat, name, pid, tid, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts,
            "dur": dur, "args": args}


def kernel(name, ts, dur, corr, stream=7):
    return ev("kernel", name, 0, stream, ts, dur, correlation=corr, stream=stream,
              device=0, **{"External id": corr})


def launch(ts, corr):
    return ev("cuda_runtime", "cudaLaunchKernel", 100, 100, ts, 2, correlation=corr,
              **{"External id": corr})


def good_events():
    """A small, valid single-GPU trace: three kernels with their launches."""
    evs = [{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3"}},
           {"ph": "M", "name": "thread_name", "pid": 100, "tid": 100, "args": {"name": "scheduler"}}]
    names = ["nvjet_tst_64x8_64x16_2x1_v_bz_TNT",
             "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
             "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >"]
    ts = 1000.0
    for i in range(12):
        corr = 1000 + i
        evs.append(ev("python_function",
                      "/sgl-workspace/sglang/python/sglang/srt/layers/linear.py(450): forward",
                      100, 100, ts, 8, **{"Python id": i + 1, "Python parent id": 0}))
        evs.append(ev("cpu_op", "aten::mm", 100, 100, ts + 1, 5, **{"External id": corr}))
        evs.append(launch(ts + 2, corr))
        evs.append(kernel(names[i % 3], ts + 5, 20 + (i % 3) * 10, corr))
        ts += 50
    return evs


def trace(events, **extra):
    doc = {"schemaVersion": 1, "traceEvents": events}
    doc.update(extra)
    return json.dumps(doc).encode()


GOOD = trace(good_events())


def with_kernel_named(name_json, extra=b""):
    """A good trace plus one kernel whose "name" is the raw JSON text name_json."""
    base = trace(good_events())
    assert base.endswith(b"]}")
    k = (b',{"ph":"X","cat":"kernel","name":' + name_json +
         b',"pid":0,"tid":7,"ts":5000,"dur":400,"args":{"correlation":9999,"stream":7}' + extra + b'}')
    return base[:-2] + k + b"]}"


def only_kernel_named(name_json):
    return (b'{"traceEvents":[{"ph":"X","cat":"kernel","name":' + name_json +
            b',"pid":0,"tid":7,"ts":1,"dur":100,"args":{"correlation":1,"stream":7}}]}')


def deep_args(levels):
    """A good trace whose last kernel's args hold `levels` nested arrays. Depth counts
    root object 1, traceEvents 2, event 3, args 4, so the total is 4 + levels."""
    base = trace(good_events())
    k = (b',{"ph":"X","cat":"kernel","name":"deep","pid":0,"tid":7,"ts":9000,"dur":1,'
         b'"args":{"correlation":7777,"x":' + b"[" * levels + b"]" * levels + b"}}")
    return base[:-2] + k + b"]}"


def pack(body):
    return ("pack: bad-input-case\nversion: 1\n" + body).encode()


# ------------------------------------------------------------------ cases


class Case:
    def __init__(self, name, args, exit, message=None, report=False, files=None, gen=None,
                 limit=None, timeout=10, stdin=None, server=None, stdout=None, warning=None,
                 warnings=None, max_lines=1, diag_pack=None, note=""):
        self.name = name
        self.args = args              # argv after the binary, with placeholders
        self.exit = exit
        self.message = message        # regex for the one stderr line (error cases)
        self.report = report          # True: exit 0 with a report
        self.files = files or {}      # committed: path under cases/ -> bytes
        self.gen = gen                # big: function(gdir) writing its files
        self.limit = limit            # name of the limits.h limit this case is just over
        self.timeout = timeout
        self.stdin = stdin            # bytes for standard input, or None (empty)
        self.server = server          # stand-in HTTP server: dict(code, body, size)
        self.stdout = stdout          # regex the report must contain (report cases)
        self.warning = warning        # regex some stderr warning line must match
        self.warnings = warnings      # exact number of stderr lines (report cases)
        self.max_lines = max_lines    # stderr lines allowed for error cases
        self.diag_pack = diag_pack    # rule-pack case: every line is a diagnostic
        self.note = note


def trace_error(path, what):
    """One line: triage: FILE: offset N: MESSAGE (what: regex for MESSAGE)."""
    return r"^triage: " + path + r": offset \d+: " + what + "$"


def plain_error(path, what):
    return r"^triage: " + path + r": " + what + "$"


REPORT_WARN = r"^triage: .*warning: .+$"
SKIP_WARN = r"^triage: .*: warning: skipped \d+ events? .*$"
UTF8_WARN = r"^triage: .*: warning: replaced \d+ invalid UTF-8 .*$"

CASES = []


def add(*a, **k):
    CASES.append(Case(*a, **k))


# ---- traces: malformed input (exit 1, one line with the offset)
add("empty-file", ["<C>/empty.json"], 1, trace_error("<C>/empty\\.json", r"(?i).*empty.*"),
    files={"empty.json": b""})
add("truncated-json", ["<C>/truncated.json"], 1,
    trace_error("<C>/truncated\\.json", r"(?i).*(end of input|unterminated|truncated|expected).*"),
    files={"truncated.json": GOOD[: len(GOOD) // 2]})
add("truncated-gzip", ["<C>/truncated.json.gz"], 1,
    trace_error("<C>/truncated\\.json\\.gz", r"(?i).*(gzip|truncated|unexpected end).*"),
    files={"truncated.json.gz": gz(GOOD)[:-100]})
add("gzip-bad-crc", ["<C>/bad-crc.json.gz"], 1,
    trace_error("<C>/bad-crc\\.json\\.gz", r"(?i).*(gzip|crc|check).*"),
    files={"bad-crc.json.gz": (lambda b: b[:-8] + bytes([b[-8] ^ 0xFF]) + b[-7:])(gz(GOOD))})
add("not-json", ["<C>/not-json.json"], 1, trace_error("<C>/not-json\\.json", r".+"),
    files={"not-json.json": b"hello, this is not JSON\n"})
add("random-garbage", ["<C>/garbage.bin"], 1, trace_error("<C>/garbage\\.bin", r".+"),
    files={"garbage.bin": b"\x93" + random.Random(7).randbytes(4095)})
add("top-level-scalar", ["<C>/scalar.json"], 1,
    trace_error("<C>/scalar\\.json", r"(?i).*not a trace.*"), files={"scalar.json": b"42\n"})
add("no-trace-events", ["<C>/no-trace-events.json"], 1,
    trace_error("<C>/no-trace-events\\.json", r"(?i).*traceEvents.*"),
    files={"no-trace-events.json": b'{"schemaVersion": 1, "events": []}'})
add("trace-events-not-list", ["<C>/events-object.json"], 1,
    trace_error("<C>/events-object\\.json", r"(?i).*traceEvents.* not a list.*"),
    files={"events-object.json": b'{"traceEvents": {"ph": "X"}}'})
add("trace-events-twice", ["<C>/events-twice.json"], 1,
    trace_error("<C>/events-twice\\.json", r"(?i).*traceEvents.*twice.*"),
    files={"events-twice.json": b'{"traceEvents": [], "traceEvents": []}'})
add("unterminated-string", ["<C>/unterminated-string.json"], 1,
    trace_error("<C>/unterminated-string\\.json", r"(?i).*unterminated string.*"),
    files={"unterminated-string.json": b'{"traceEvents": [{"ph": "X", "name": "ncclKernel'})
add("invalid-escape", ["<C>/invalid-escape.json"], 1,
    trace_error("<C>/invalid-escape\\.json", r"(?i).*escape.*"),
    files={"invalid-escape.json": b'{"traceEvents": [{"ph": "X", "name": "a\\qb"}]}'})
add("trailing-garbage", ["<C>/trailing.json"], 1,
    trace_error("<C>/trailing\\.json", r"(?i).*(end of input|trailing|after).*"),
    files={"trailing.json": GOOD + b"\n}{ garbage"})
add("nul-between-tokens", ["<C>/nul-token.json"], 1,
    trace_error("<C>/nul-token\\.json", r"(?i).*(0x00|nul).*"),
    files={"nul-token.json": GOOD[:20] + b"\x00" + GOOD[20:]})
add("missing-comma", ["<C>/missing-comma.json"], 1,
    trace_error("<C>/missing-comma\\.json", r"(?i).*expected.*"),
    files={"missing-comma.json": b'{"traceEvents": [{"ph": "X"} {"ph": "X"}]}'})
add("nesting-200000", ["<G>/nesting-200000.json"], 1,
    trace_error("<G>/nesting-200000\\.json", r"(?i).*(nest|deep|depth).*"),
    gen=lambda g: write(g, "nesting-200000.json",
                        b'{"traceEvents": [{"args": ' + b"[" * 200000 + b"]" * 200000 + b"}]}"))
add("nesting-200000-top", ["<G>/nesting-200000-top.json"], 1,
    trace_error("<G>/nesting-200000-top\\.json", r"(?i).*(nest|deep|depth|expected).*"),
    gen=lambda g: write(g, "nesting-200000-top.json", b"[" * 200000))

# ---- traces: odd but valid input (exit 0, report)
add("invalid-utf8-name", ["<C>/invalid-utf8.json"], 0, report=True,
    stdout="\ufffd", warning=UTF8_WARN,
    files={"invalid-utf8.json": only_kernel_named(b'"bad_kernel_\xff\xfe\xc3(_name"')},
    note="the kernel name is shown with U+FFFD for each bad sequence")
add("nul-in-string", ["<C>/nul-in-string.json"], 0, report=True, warning=UTF8_WARN,
    files={"nul-in-string.json": only_kernel_named(b'"nul\x00kernel"')})
add("escaped-nul-and-surrogate", ["<C>/escapes.json"], 0, report=True,
    files={"escapes.json": only_kernel_named(b'"k\\u0000\\ud800\\udc00\\ud800x\\u00e9"')})
add("utf8-bom", ["<C>/bom.json"], 0, report=True, files={"bom.json": b"\xef\xbb\xbf" + GOOD})
add("bare-event-list", ["<C>/bare-list.json"], 0, report=True,
    files={"bare-list.json": json.dumps(good_events()).encode()})
add("multi-member-gzip", ["<C>/multi-member.json.gz"], 0, report=True,
    files={"multi-member.json.gz": gz(GOOD[:500]) + gz(GOOD[500:])})
add("number-beyond-double", ["<C>/huge-double.json"], 0, report=True,
    files={"huge-double.json": with_kernel_named(b'"huge_ts"', b',"flops":1e400,"x":-1e400')
           .replace(b'"ts":5000,"dur":400', b'"ts":1e400,"dur":1e400')},
    note="1e400 overflows double: the event is unusable, skipped with a warning")
add("kernel-end-rounds-to-start", ["<C>/ts-1e17.json"], 0, report=True,
    files={"ts-1e17.json": trace(good_events() + [
        kernel("late_kernel", 99999999999991355, 3, 77777)])},
    note="ts + dur == ts in double: a zero-length kernel (was a heap overflow in the overlap sweep)")
add("ids-beyond-int64", ["<C>/huge-ids.json"], 0, report=True,
    files={"huge-ids.json": with_kernel_named(b'"huge_ids"').replace(
        b'"correlation":9999', b'"correlation":99999999999999999999,'
        b'"External id":-99999999999999999999')})
add("wrong-field-types", ["<C>/wrong-types.json"], 0, report=True, warning=SKIP_WARN,
    files={"wrong-types.json": trace(good_events() + [
        {"ph": "X", "cat": "kernel", "name": 12345, "pid": 0, "tid": 7, "ts": 10, "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "ts_object", "pid": 0, "tid": 7,
         "ts": {"us": 10}, "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "dur_string", "pid": 0, "tid": 7, "ts": 10,
         "dur": "5"},
        {"ph": "X", "cat": ["kernel"], "name": "cat_list", "pid": 0, "tid": 7, "ts": 10,
         "dur": 5},
        {"ph": "X", "cat": "kernel", "name": "args_list", "pid": 0, "tid": 7, "ts": 10,
         "dur": 5, "args": [1, 2]},
        None, 7, "string event", []])})
add("negative-duration", ["<C>/negative-dur.json"], 0, report=True, warnings=1,
    warning=r"^triage: <C>/negative-dur\.json: warning: skipped 1 event.*$",
    files={"negative-dur.json": trace(good_events() + [kernel("negative_kernel", 4000, -25, 4242)])},
    note="skipped with exactly one warning line")
add("unknown-phases-and-fields", ["<C>/unknown-fields.json"], 0, report=True,
    files={"unknown-fields.json": trace(good_events() + [
        {"ph": "B", "name": "begin", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "i", "name": "instant", "s": "g", "ts": 3},
        {"ph": "f", "id": 1, "bp": "e", "ts": 4},
        {"ph": "X", "cat": "kernel", "name": "extra_fields", "pid": 0, "tid": 7, "ts": 5,
         "dur": 1, "args": {"correlation": 1, "nested": {"deep": [1, {"x": None}]}},
         "unknown": {"a": [True, False, None]}}], displayTimeUnit="ns", traceName="x")})

add("server-args-malformed", ["<C>/server-args-malformed"], 0, report=True, warnings=1,
    warning=r"^triage: (warning: )?<C>/server-args-malformed/server_args\.json: (warning: )?.*$",
    files={"server-args-malformed/run.trace.json": GOOD,
           "server-args-malformed/server_args.json": b'{"tp_size": 2,'},
    note="an optional side file: ignored with one warning")
add("server-args-not-object", ["<C>/server-args-list"], 0, report=True, warnings=1,
    warning=r"^triage: (warning: )?<C>/server-args-list/server_args\.json: (warning: )?.*object.*$",
    files={"server-args-list/run.trace.json": GOOD,
           "server-args-list/server_args.json": b"[1, 2]\n"})

# ---- inputs that name nothing to analyse (exit 1, one line, no offset)
add("missing-path", ["<C>/does-not-exist.json"], 1,
    plain_error("<C>/does-not-exist\\.json", r"(?i).*no such file.*"))
add("dir-without-traces", ["<C>/no-traces-dir"], 1,
    plain_error("<C>/no-traces-dir", r"(?i).*no trace files.*"),
    files={"no-traces-dir/notes.txt": b"not a trace\n", "no-traces-dir/data.csv": b"a,b\n"})
add("no-kernels", ["<C>/no-kernels.json"], 1,
    plain_error("<C>/no-kernels\\.json", r"(?i).*(no (gpu )?kernel|nothing to analy[sz]e).*"),
    files={"no-kernels.json": trace([e for e in good_events() if e.get("cat") != "kernel"])})
add("empty-event-list", ["<C>/empty-events.json"], 1,
    plain_error("<C>/empty-events\\.json", r"(?i).*(no (gpu )?kernel|nothing to analy[sz]e|no events).*"),
    files={"empty-events.json": b'{"traceEvents": []}'})
add("stdin-empty", ["-"], 1,
    r"^triage: (-|<stdin>|\(stdin\)|standard input): offset 0: (?i).*empty.*$", stdin=b"")
add("stdin-garbage", ["-"], 1,
    r"^triage: (-|<stdin>|\(stdin\)|standard input): offset \d+: .+$", stdin=b"{]")

# ---- outputs that cannot be written (exit 1, one line naming the file): the report and
# the kernel map open and close through one opener (cli_file_open / cli_file_close)
add("output-no-directory", ["-o", "<C>/no-such-dir/report.md", "<GOOD>"], 1,
    plain_error("<C>/no-such-dir/report\\.md", r"(?i)cannot open for writing: .+"))
add("output-device-full", ["-o", "/dev/full", "<GOOD>"], 1, plain_error("/dev/full", "write error"))
add("kernel-map-no-directory", ["--kernel-map", "<C>/no-such-dir/kmap.json", "<GOOD>"], 1,
    plain_error("<C>/no-such-dir/kmap\\.json", r"(?i)cannot open for writing: .+"))
add("kernel-map-device-full", ["--kernel-map", "/dev/full", "<GOOD>"], 1,
    plain_error("/dev/full", "write error"))

# ---- command line (exit 2, one line)
USAGE = r"^triage: .+$"
add("usage-no-arguments", [], 2, USAGE)
add("usage-unknown-option", ["--no-such-option", "<GOOD>"], 2, r"^triage: .*no-such-option.*$")
add("usage-missing-value", ["<GOOD>", "--min-share"], 2, r"^triage: .*min-share.*$")
add("usage-bad-number", ["--min-share", "lots", "<GOOD>"], 2, r"^triage: .*(min-share|lots).*$")
add("usage-bad-format", ["--format", "xml", "<GOOD>"], 2, r"^triage: .*(format|xml).*$")
for _i, (_opt, _val) in enumerate([("--min-share", "nan"), ("--min-share", "inf"),
                                    ("--min-share", "1e309"), ("--min-share", "101"),
                                    ("--kernel-table-limit", "99999999999999999999"),
                                    ("--kernel-table-limit", "-1"),
                                    ("--overlap-table-limit", "1.5")]):
    add("usage-bad-value-%d" % _i, [_opt, _val, "<GOOD>"], 2, r"^triage: .*" + _opt + ".*$",
        note="%s %s: out of range or not a number" % (_opt, _val))
add("usage-two-modes", ["--url", "http://127.0.0.1:9", "<GOOD>"], 2, USAGE)
add("usage-mapping-without-formal", ["--mapping-input", "<GOOD>"], 2, USAGE)

# ---- rule packs given with --rules (exit 1, FILE:LINE:COL: error: MESSAGE)
DIAG = r"^<C>/{f}:\d+:\d+: error: .*{what}.*$"
add("pack-yaml-syntax", ["--rules", "<C>/pack-syntax.yaml", "<GOOD>"], 1,
    DIAG.format(f=r"pack-syntax\.yaml", what="(?i)yaml"), diag_pack=True,
    files={"pack-syntax.yaml": pack("matchers:\n  a: {keywords: [x\n")})
add("pack-unknown-key", ["--rules", "<C>/pack-unknown-key.yaml", "<GOOD>"], 1,
    DIAG.format(f=r"pack-unknown-key\.yaml", what="unknown key"), diag_pack=True,
    files={"pack-unknown-key.yaml": pack("matchers:\n  a: {keyword: [x]}\n")})
add("pack-bad-regex", ["--rules", "<C>/pack-bad-regex.yaml", "<GOOD>"], 1,
    DIAG.format(f=r"pack-bad-regex\.yaml", what="(?i)regex"), diag_pack=True,
    files={"pack-bad-regex.yaml": pack("matchers:\n  a: {regex: ['(unclosed']}\n")})
add("pack-missing", ["--rules", "<C>/no-such-pack.yaml", "<GOOD>"], 1,
    r"^(triage: )?<C>/no-such-pack\.yaml(:\d+:\d+: error)?: (?i).*(no such file|cannot|not found).*$")
# tests/rules/broken/*.yaml are added by run_bad_input.py from broken/expected.tsv.


# ---- limits, just over (generated at test time)
def write(g, rel, data):
    path = os.path.join(g, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def gen_deep_pack(g):
    d = LIMITS["TE_MAX_YAML_DEPTH"] + 1  # the document's mapping is level 1
    body = "settings:\n  x: " + "[" * (d - 2) + "1" + "]" * (d - 2) + "\n"
    write(g, "pack-depth.yaml", pack(body))


def gen_alias_pack(g):
    n = LIMITS["TE_MAX_YAML_ALIASES"] + 1  # anchors plus aliases
    lines = ["matchers:", "  base: &a {keywords: [x]}"]
    for i in range(n - 1):
        lines.append(f"  m{i}: *a")
    write(g, "pack-aliases.yaml", pack("\n".join(lines) + "\n"))


def gen_nodes_pack(g):
    n = LIMITS["TE_MAX_YAML_NODES"] + 1
    items = ", ".join("k%d" % i for i in range(n))
    write(g, "pack-nodes.yaml", pack("matchers:\n  big: {keywords: [" + items + "]}\n"))


def gen_bytes_pack(g):
    body = "# " + "x" * (LIMITS["TE_MAX_PACK_BYTES"] + 1) + "\n"
    write(g, "pack-bytes.yaml", pack(body))


def gen_pattern_pack(g):
    kw = "k" * (LIMITS["TE_MAX_PATTERN_LEN"] + 1)
    write(g, "pack-pattern.yaml", pack("matchers:\n  long: {keywords: [" + kw + "]}\n"))


def gen_many_packs(g):
    for i in range(LIMITS["TE_MAX_PACKS"] + 1):
        write(g, "packs/p%03d.yaml" % i, ("pack: many-%03d\nversion: 1\n" % i).encode())


def gen_many_diags(g):
    n = LIMITS["TE_MAX_DIAGNOSTICS"] + 5
    lines = ["matchers:"] + ["  m%d: {no_such_key_%d: [x]}" % (i, i) for i in range(n)]
    write(g, "pack-diags.yaml", pack("\n".join(lines) + "\n"))


def chain_pattern(body, groups=2):
    split = "".join("      - {keywords: [k%d]}\n" % i for i in range(groups))
    return pack("fusion_patterns:\n  - id: chain-case\n    name: chain case\n"
                "    candidate_paths: [x.py]\n    split_groups:\n" + split + body)


def gen_chain_between(g):
    n = LIMITS["TE_MAX_CHAIN_BETWEEN"] + 1
    write(g, "pack-chain.yaml", chain_pattern("    chain: {max_between: %d}\n" % n))


def gen_chain_pieces(g):
    n = LIMITS["TE_MAX_CHAIN_PIECES"] + 1
    write(g, "pack-pieces.yaml", chain_pattern("    chain: {max_between: 2}\n", groups=n))


def gen_layer_cycle(g):
    n = LIMITS["TE_MAX_LAYER_CYCLE"] + 1
    types = ", ".join(["sliding", "full"] * (n // 2) + ["full"] * (n % 2))
    write(g, "pack-layers.yaml", pack(
        "models:\n  - id: my-model\n    label: My model\n    match: {keywords: [my-model]}\n"
        "    hidden: 2048\n    intermediate: 8192\n    layers: 16\n    heads: 16\n"
        "    kv_heads: 4\n    head_dim: 128\n    vocab: 32000\n    weight_dtype: bf16\n"
        "    sliding_window: 128\n    layer_types: [" + types + "]\n"
        "    source: config.json\n"))


def regex_pack(rx):
    return pack("classifiers:\n  - id: kernel\n    default: other\n"
                "    categories: [{id: slow, meaning: a regex that runs into a PCRE2 limit}]\n"
                "    rules:\n"
                "      - id: slow\n        category: slow\n        match: {regex: ['" + rx + "']}\n"
                "        before: communication-strong\n")


def gen_match_limit(g):
    # (a+)+$ on a run of 'a' that ends in '!' backtracks 2^n steps: far over 1e6.
    write(g, "pack-backtrack.yaml", regex_pack("^(a+)+$"))
    write(g, "backtrack.json", only_kernel_named(b'"' + b"a" * 40 + b'!"'))


def gen_depth_limit(g):
    # Each repetition of a capturing group with alternatives needs a backtracking frame.
    n = LIMITS["TE_PCRE2_DEPTH_LIMIT"] * 2
    write(g, "pack-depth-limit.yaml", regex_pack("^(a|b)*c$"))
    write(g, "depth-limit.json", only_kernel_named(b'"' + b"ab" * n + b'"'))


def write_distinct(path, n, cat, name, tail=b""):
    """n events of category cat named name % i (1 us long, 2 us apart, stream 7), then
    tail (events, each after a comma), gzipped: the many-distinct-names cases."""
    with open(path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=1) as f:
            f.write(b'{"traceEvents":[')
            for i in range(n):
                f.write(b'%s{"ph":"X","cat":"%s","name":"%s","pid":0,'
                        b'"tid":7,"ts":%d,"dur":1,"args":{"correlation":%d,"stream":7}}'
                        % (b"," if i else b"", cat, name % i, i * 2, i))
            f.write(tail + b"]}")


def gen_cache(g):
    n = LIMITS["TE_MATCH_CACHE_MAX"] + 1
    write_distinct(os.path.join(g, "many-names.json.gz"), n, b"kernel", b"distinct_kernel_%d")


def gen_copy_names(g):
    # Copy-engine names are asked, each, how much of their time comes before the first
    # compute kernel: a pass over the stage per name was quadratic (60,000 names: 7 s).
    n = LIMITS["TE_MATCH_CACHE_MAX"] + 1
    gemm = (b',{"ph":"X","cat":"kernel","name":"nvjet_tst_64x8_64x16_2x1_v_bz_TNT",'
            b'"pid":0,"tid":7,"ts":%d,"dur":5,"args":{"correlation":%d,"stream":7}}'
            % (n * 2 + 5, n))
    write_distinct(os.path.join(g, "many-copy-names.json.gz"), n, b"gpu_memcpy",
                   b"Memcpy HtoD copy_%d", gemm)


def gen_active(g):
    # Kernels on their own streams, all running at once: the overlap sweep's work per
    # kernel grows with how many run, so past the limit the run stops instead of taking
    # hours; at the limit it is a report.
    lim = LIMITS["AN_MAX_ACTIVE_KERNELS"]
    def all_at_once(n):
        return trace([kernel("k%d" % (i % 7), i, 2 * n, stream=i, corr=i) for i in range(n)])
    write(g, "active-at-limit.json", all_at_once(lim))
    write(g, "active-over-limit.json", all_at_once(lim + 1))


def gen_json_depth(g):
    lim = LIMITS["TR_MAX_JSON_DEPTH"]
    write(g, "depth-at-limit.json", deep_args(lim - 4))
    write(g, "depth-over-limit.json", deep_args(lim - 4 + 1))


def gen_string(g):
    # The limit applies to strings triage reads into memory (here an event's "cat", which
    # every event's classification reads); skipped values may be of any length (issue
    # 15): 5 MB in a cpu_op's "Input Dims" and in an unknown arg.
    lim = LIMITS["TR_MAX_STRING_BYTES"]
    base = trace(good_events())
    def with_cat(n):
        return base[:-2] + b',{"ph":"i","cat":"' + b"c" * n + b'","name":"mark","ts":900}]}'
    write(g, "string-at-limit.json", with_cat(lim))
    write(g, "string-over-limit.json", with_cat(lim + 1))
    big = 5 * MiB
    op = (b',{"ph":"X","cat":"cpu_op","name":"aten::cat","pid":100,"tid":100,"ts":700,"dur":5,'
          b'"args":{"External id":4242,"Input Dims":"[' + b"[1, 2048], " * (big // 11) + b']",'
          b'"x":"' + b"s" * big + b'"}}')
    write(g, "skipped-long-string.json", base[:-2] + op + b"]}")


def gen_arg(g):
    # A kept arg (trace.h tr_arg) whose compact JSON is exactly TR_MAX_ARG_BYTES, and one
    # byte over: the first kept, the second dropped and counted, both traces read. The
    # file writes it spread over lines; the stored text is "[[1, 2048], [1, 2048], ...]"
    # (11 bytes a shape), its first dimension padded with zeros to the exact length.
    lim = LIMITS["TR_MAX_ARG_BYTES"]
    base = trace(good_events())
    def with_dims(n_bytes):
        k = n_bytes // 11
        first = b"[1" + b"0" * (n_bytes - 11 * k) + b", 2048]"
        compact = b"[" + b", ".join([first] + [b"[1, 2048]"] * (k - 1)) + b"]"
        assert len(compact) == n_bytes
        op = (b',{"ph":"X","cat":"cpu_op","name":"aten::cat","pid":100,"tid":100,"ts":700,'
              b'"dur":5,"args":{"External id":4242,"Input Dims":\n '
              + compact.replace(b", ", b",\n  ") + b"}}")
        return base[:-2] + op + b"]}"
    write(g, "arg-at-limit.json", with_dims(lim))
    write(g, "arg-over-limit.json", with_dims(lim + 1))


def gen_number(g):
    lim = LIMITS["TR_MAX_NUMBER_CHARS"]
    write(g, "number-at-limit.json", with_kernel_named(b'"at_limit"', b',"n":1' + b"0" * (lim - 1)))
    write(g, "number-over-limit.json", with_kernel_named(b'"over_limit"', b',"n":1' + b"0" * lim))


def gen_events(g):
    # TR_MAX_EVENTS + 1 empty events as concatenated gzip members (1.5 GB of JSON, a few
    # MB of gzip): the same compressed block repeated.
    n = LIMITS["TR_MAX_EVENTS"] + 1
    per = 4 * MiB
    block = gz(b"{}," * per)
    full, rest = divmod(n - 1, per)
    with open(os.path.join(g, "events-over-limit.json.gz"), "wb") as f:
        f.write(gz(b'{"traceEvents":['))
        for _ in range(full):
            f.write(block)
        f.write(gz(b"{}," * rest + b"{}]}"))


def gen_small_json(g):
    lim = LIMITS["TR_MAX_SMALL_JSON_BYTES"]
    d = os.path.join(g, "server-args-big")
    write(g, "server-args-big/run.trace.json", GOOD)
    with open(os.path.join(d, "server_args.json"), "wb") as f:
        f.write(b"{")
        f.write(b" " * (lim - 1))
        f.write(b"}")
        f.write(b" ")


def gen_rank_report(g):
    # A JSON report one byte over the limit, sparse: refused by its size, never read.
    with open(os.path.join(g, "rank-report-big.json"), "wb") as f:
        f.write(b'{"mode": "single"')
        f.seek(LIMITS["CLI_MAX_RANK_REPORT_BYTES"])
        f.write(b"}")


def gen_sample(g):
    # 256 events with a 20 KB string argument: a 5 MB sample text, cut to
    # TR_MAX_SAMPLE_BYTES. (Not kernel names: those would only test matching speed.)
    evs = good_events()
    big = [{"ph": "X", "cat": "misc", "name": "sample_%d" % i, "pid": 100, "tid": 100,
            "ts": 10 + i, "dur": 1, "args": {"note": "n" * 20000}} for i in range(256)]
    write(g, "sample-big.json", trace(big + evs))


def gen_dir_files(g):
    d = os.path.join(g, "many-files")
    os.makedirs(d, exist_ok=True)
    for i in range(LIMITS["TR_MAX_DIR_FILES"] + 1):
        open(os.path.join(d, "r%06d.trace.json" % i), "wb").close()


def gen_dir_depth(g):
    parts = ["d%02d" % i for i in range(LIMITS["TR_MAX_DIR_DEPTH"] + 1)]
    write(g, os.path.join("deep-dirs", *parts, "run.trace.json"), GOOD)


TRACE_LIMIT = lambda f, what: trace_error("<G>/" + f, what)
add("limit-yaml-depth", ["--rules", "<G>/pack-depth.yaml", "<GOOD>"], 1,
    r"^<G>/pack-depth\.yaml:\d+:\d+: error: .*(deeper|depth|nest).*$", diag_pack=True,
    gen=gen_deep_pack, limit="TE_MAX_YAML_DEPTH")
add("limit-yaml-aliases", ["--rules", "<G>/pack-aliases.yaml", "<GOOD>"], 1,
    r"^<G>/pack-aliases\.yaml:\d+:\d+: error: .*(alias|anchor).*$", diag_pack=True,
    gen=gen_alias_pack, limit="TE_MAX_YAML_ALIASES")
add("limit-yaml-nodes", ["--rules", "<G>/pack-nodes.yaml", "<GOOD>"], 1,
    r"^<G>/pack-nodes\.yaml:\d+:\d+: error: .*(node|more than|too many).*$", diag_pack=True,
    gen=gen_nodes_pack, limit="TE_MAX_YAML_NODES")
add("limit-pack-bytes", ["--rules", "<G>/pack-bytes.yaml", "<GOOD>"], 1,
    r"^<G>/pack-bytes\.yaml:\d+:\d+: error: .*(bytes|large|size).*$", diag_pack=True,
    gen=gen_bytes_pack, limit="TE_MAX_PACK_BYTES")
add("limit-pattern-len", ["--rules", "<G>/pack-pattern.yaml", "<GOOD>"], 1,
    r"^<G>/pack-pattern\.yaml:\d+:\d+: error: .*(long|length|4096).*$", diag_pack=True,
    gen=gen_pattern_pack, limit="TE_MAX_PATTERN_LEN")
add("limit-chain-between", ["--rules", "<G>/pack-chain.yaml", "<GOOD>"], 1,
    r"^<G>/pack-chain\.yaml:\d+:\d+: error: chain\.max_between must be between 0 and 64.*$",
    diag_pack=True, gen=gen_chain_between, limit="TE_MAX_CHAIN_BETWEEN")
add("limit-layer-cycle", ["--rules", "<G>/pack-layers.yaml", "<GOOD>"], 1,
    r"^<G>/pack-layers\.yaml:\d+:\d+: error: .*layer_types needs 1 to 64 entries, has 65.*$",
    diag_pack=True, gen=gen_layer_cycle, limit="TE_MAX_LAYER_CYCLE")
add("limit-chain-pieces", ["--rules", "<G>/pack-pieces.yaml", "<GOOD>"], 0, report=True,
    gen=gen_chain_pieces, limit="TE_MAX_CHAIN_PIECES",
    note="a pattern of 9 split groups is matched without the chain gate, not refused")
add("limit-packs", ["--no-default-rules", "--rules", "<G>/packs", "<GOOD>"], 1,
    r"^(triage: )?<G>/packs(/p256\.yaml)?(:\d+:\d+)?: error: .*more than 256 .*TE_MAX_PACKS.*$",
    gen=gen_many_packs, limit="TE_MAX_PACKS")
add("limit-diagnostics", ["--rules", "<G>/pack-diags.yaml", "<GOOD>"], 1,
    r"^<G>/pack-diags\.yaml:\d+:\d+: error: .*$", diag_pack=True, max_lines=1001,
    gen=gen_many_diags, limit="TE_MAX_DIAGNOSTICS",
    note="1005 errors: at most 1000 lines are printed, the rest counted")
add("limit-pcre2-match", ["--rules", "<G>/pack-backtrack.yaml", "<G>/backtrack.json"], 0,
    report=True, gen=gen_match_limit, limit="TE_PCRE2_MATCH_LIMIT",
    note="the regex gives up (no match) instead of running for hours")
add("limit-pcre2-depth", ["--rules", "<G>/pack-depth-limit.yaml", "<G>/depth-limit.json"], 0,
    report=True, gen=gen_depth_limit, limit="TE_PCRE2_DEPTH_LIMIT")
add("limit-match-cache", ["<G>/many-names.json.gz"], 0, report=True, gen=gen_cache,
    limit="TE_MATCH_CACHE_MAX", timeout=60,
    note="262,145 distinct kernel names: the cache stops growing, results stay right")
add("many-copy-names", ["<G>/many-copy-names.json.gz"], 0, report=True, gen=gen_copy_names,
    timeout=60, stdout=r"memory 262\.14 \(100\.0%\)",
    note="262,145 distinct copy-engine names: each name's one-time share in one pass")
add("limit-active-kernels-at", ["<G>/active-at-limit.json"], 0, report=True, gen=gen_active,
    note="exactly AN_MAX_ACTIVE_KERNELS kernels at once is a report")
add("limit-active-kernels", ["<G>/active-over-limit.json"], 1,
    plain_error(r"<G>/active-over-limit\.json",
                r"more than 4096 kernels run at once in one stage \(AN_MAX_ACTIVE_KERNELS\)"),
    gen=gen_active, limit="AN_MAX_ACTIVE_KERNELS", timeout=30)
add("limit-json-depth-at", ["<G>/depth-at-limit.json"], 0, report=True, gen=gen_json_depth,
    note="exactly TR_MAX_JSON_DEPTH levels is accepted")
add("limit-json-depth", ["<G>/depth-over-limit.json"], 1,
    TRACE_LIMIT(r"depth-over-limit\.json", r"(?i).*(nest|deep|depth).*512.*"),
    gen=gen_json_depth, limit="TR_MAX_JSON_DEPTH")
add("limit-string-at", ["<G>/string-at-limit.json"], 0, report=True, gen=gen_string)
add("limit-string-bytes", ["<G>/string-over-limit.json"], 1,
    TRACE_LIMIT(r"string-over-limit\.json", r"(?i).*string.*(longer|large|bytes).*"),
    gen=gen_string, limit="TR_MAX_STRING_BYTES")
add("skipped-long-string", ["<G>/skipped-long-string.json"], 0, report=True, gen=gen_string,
    stdout=r"nvjet[_ ]tst[_ ]64x8",  # full name (JSON, --full-names) or display name
    note="5 MB strings in skipped args (Input Dims): read past, the trace gets its report")
add("limit-arg-at", ["<G>/arg-at-limit.json"], 0, report=True, gen=gen_arg,
    note="a kept arg of exactly TR_MAX_ARG_BYTES (as stored) is kept")
add("limit-arg-bytes", ["<G>/arg-over-limit.json"], 0, report=True, gen=gen_arg,
    limit="TR_MAX_ARG_BYTES",
    note="a kept arg (Input Dims) past TR_MAX_ARG_BYTES is dropped and counted; the trace "
         "gets its report (tests/unit/test_trace_reader.c kept_args_past_the_limit)")
add("limit-number-at", ["<G>/number-at-limit.json"], 0, report=True, gen=gen_number)
add("limit-number-chars", ["<G>/number-over-limit.json"], 1,
    TRACE_LIMIT(r"number-over-limit\.json", r"(?i).*number.*(longer|long|characters).*"),
    gen=gen_number, limit="TR_MAX_NUMBER_CHARS")
add("limit-events", ["<G>/events-over-limit.json.gz"], 1,
    TRACE_LIMIT(r"events-over-limit\.json\.gz", r"(?i).*more than 500000000 events.*"),
    gen=gen_events, limit="TR_MAX_EVENTS", timeout=600,
    note="1.5 GB of JSON to scan: the one slow case")
add("limit-small-json-server-args", ["<G>/server-args-big"], 0, report=True, warnings=1,
    warning=r"^triage: (warning: )?<G>/server-args-big/server_args\.json: (warning: )?.*larger than.*$",
    gen=gen_small_json, limit="TR_MAX_SMALL_JSON_BYTES",
    note="server_args.json is an optional side file: ignored with one warning")
add("limit-rank-report-bytes", ["merge", "<G>/rank-report-big.json", "<G>/rank-report-big.json"],
    1, plain_error(r"<G>/rank-report-big\.json",
                   r"a JSON report larger than 1073741824 bytes \(CLI_MAX_RANK_REPORT_BYTES\)"),
    gen=gen_rank_report, limit="CLI_MAX_RANK_REPORT_BYTES",
    note="triage merge reads a one-rank report whole; the file is sparse")
add("limit-sample-bytes", ["<G>/sample-big.json"], 0, report=True, gen=gen_sample,
    limit="TR_MAX_SAMPLE_BYTES", note="the detection sample is cut; the report is unaffected")
add("limit-dir-files", ["<G>/many-files"], 1,
    plain_error(r"<G>/many-files", r"(?i).*more than 100000 trace files.*"),
    gen=gen_dir_files, limit="TR_MAX_DIR_FILES", timeout=60)
add("limit-dir-depth", ["<G>/deep-dirs"], 1,
    plain_error(r"<G>/deep-dirs", r"(?i).*(nested|deeper|depth).*"),
    gen=gen_dir_depth, limit="TR_MAX_DIR_DEPTH")

# ---- live capture limits (a stand-in server run by run_bad_input.py)
LIVE = ["--url", "<URL>", "--output-dir", "<T>/capture", "--quiet"]
add("limit-reply-bytes", LIVE + ["--framework", "sglang"], 1,
    r"^triage: (?i).*(too (large|big)|larger than|more than|exceeds).*$",
    server={"code": 200, "size": LIMITS["LV_MAX_REPLY_BYTES"] + 1}, limit="LV_MAX_REPLY_BYTES",
    timeout=30)
add("limit-error-snippet", LIVE, 1,
    r"^triage: .{1,600}$",
    server={"code": 500, "body": b"E" * 5000 + b"\nsecond line\n"},
    limit="LV_ERROR_SNIPPET_BYTES", timeout=30,
    note="a 5 KB error body is quoted as one short line")
# --http-timeout is capped at LV_MAX_STEP_TIMEOUT_S (docs/live.md), not refused: just over
# the cap and absurdly over it must both run (no overflow converting to milliseconds) and
# fail only because the stand-in answers 404 to everything.
add("limit-step-timeout", LIVE[:2] + ["--http-timeout", "86401"] + LIVE[2:], 1,
    r"^triage: .+$", server={"code": 404, "body": b"{}"}, limit="LV_MAX_STEP_TIMEOUT_S",
    timeout=30)
add("usage-step-timeout-huge", LIVE[:2] + ["--http-timeout", "1e300"] + LIVE[2:], 2,
    r"^triage: .*http-timeout.*$", server={"code": 404, "body": b"{}"}, timeout=30)
add("limit-requests-per-stage", LIVE[:2] + ["--warmup-steps", "100001"] + LIVE[2:], 2,
    r"^triage: .*warmup-steps.*$", server={"code": 404, "body": b"{}"},
    limit="LV_MAX_REQUESTS_PER_STAGE")
add("limit-prompt-words", LIVE[:2] + ["--prefill-input-len", "1000001"] + LIVE[2:], 2,
    r"^triage: .*prefill-input-len.*$", server={"code": 404, "body": b"{}"},
    limit="LV_MAX_PROMPT_WORDS")
add("live-not-json", LIVE, 1, r"^triage: .+$",
    server={"code": 200, "body": b"\x00\xff<html>not json"}, timeout=30)


# ------------------------------------------------------------------ writing


def committed_files():
    out = {"good.trace.json": GOOD}
    for c in CASES:
        for rel, data in c.files.items():
            assert rel not in out or out[rel] == data, rel
            out[rel] = data
    return out


def write_small(check=False):
    stale = []
    for rel, data in sorted(committed_files().items()):
        path = os.path.join(CASES_DIR, rel)
        if check:
            try:
                with open(path, "rb") as f:
                    if f.read() != data:
                        stale.append(rel)
            except OSError:
                stale.append(rel)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return stale


def write_big(gdir, only=None):
    os.makedirs(gdir, exist_ok=True)
    done = set()
    for c in CASES:
        if c.gen and c.gen not in done and (only is None or c.name in only):
            c.gen(gdir)
            done.add(c.gen)


def main(argv):
    if argv[1:2] == ["--write"]:
        write_small()
    elif argv[1:2] == ["--check"]:
        stale = write_small(check=True)
        for s in stale:
            print("stale: tests/bad-input/cases/" + s)
        return 1 if stale else 0
    elif argv[1:2] == ["--big"] and len(argv) == 3:
        write_big(argv[2])
    else:
        print("usage: make_cases.py --write | --check | --big DIR", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
