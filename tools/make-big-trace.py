#!/usr/bin/env python3
"""make-big-trace.py - build a large, realistic Kineto trace by repeating a real one.

The input trace (gzip or plain JSON) is repeated end to end. In every repetition r the
timestamps and the ids that link events are shifted so that repetitions follow each
other in time and every link (cpu_op <-> kernel by External id, launch <-> kernel by
correlation, flow start <-> flow end by "id", Python frame <-> parent) stays valid and
points inside its own repetition:

  ts                      += r * T   (T = time span of the input plus a small gap, whole us)
  id-like values          += r * U   (U = largest id-like value of the input + 1)

id-like values are: top-level "id" (flow events) and the args "External id",
"correlation", "Python id", "Python parent id", "Ev Idx", "Profiler Event Index",
"Record function id", "Sequence number", "wait_on_cuda_event_record_corr_id".
Negative values (sentinels such as -1) are never shifted; 0 is shifted only for the
index-like keys ("Ev Idx", "Profiler Event Index", "Python id"), since elsewhere it
means "none". Metadata events (ph "M") are written once, in repetition 0, at their
original places. Top-level keys other than traceEvents are copied once, in order.

Speed: the input is parsed once and serialised once into a %-template whose slots are
the shifted numbers; each repetition is then a single C-level string format plus a
write. The output is streamed: at most one repetition's text is held in memory.

Usage:
  make-big-trace.py INPUT OUTPUT (--repeat N | --target-mb MB) [--level L]
  make-big-trace.py --verify INPUT OUTPUT      check OUTPUT against INPUT (small outputs)
OUTPUT ending in .gz is gzip (level 6 unless --level); anything else, or "-", is plain.
Standard library only.
"""

import argparse
import gzip
import io
import json
import math
import os
import sys
import time
from decimal import Decimal

SLOT = "@@make-big-trace-slot@@"
SLOT_JSON = json.dumps(SLOT)
EVENTS_MARK = "@@make-big-trace-events@@"

ID_ARG_KEYS = (
    "External id",
    "correlation",
    "Python id",
    "Python parent id",
    "Ev Idx",
    "Profiler Event Index",
    "Record function id",
    "Sequence number",
    "wait_on_cuda_event_record_corr_id",
)
# keys whose value 0 is a real index rather than "none"
ZERO_IS_VALUE = frozenset(("Ev Idx", "Profiler Event Index", "Python id"))
TIME_GAP_FRACTION = 0.01  # gap between repetitions, as a share of the input's span


def open_input(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


def load(path, exact=False):
    with open_input(path) as f:
        return json.load(f, parse_float=Decimal) if exact else json.load(f)


def events_of(doc):
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        return doc["traceEvents"]
    raise SystemExit("make-big-trace: input is not a trace (no traceEvents list)")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def shiftable_id(key, v):
    if not is_int(v) or v < 0:
        return False
    return v > 0 or key in ZERO_IS_VALUE


def ts_base(v):
    """(base, suffix) with str(base + k) + suffix == text of v + k for whole k."""
    if is_int(v):
        return v, ""
    text = repr(v)
    if v >= 0 and "e" not in text and "n" not in text and "." in text:
        whole, frac = text.split(".", 1)
        return int(whole), "." + frac
    return Decimal(text), ""  # negative or exponent form: exact decimal arithmetic


def dumps(obj, ascii_only):
    return json.dumps(obj, ensure_ascii=ascii_only, allow_nan=True)


class Template:
    """The input's traceEvents as %-templates plus the numbers that fill their slots."""

    def __init__(self, doc):
        events = events_of(doc)
        self.bases = []   # per slot: int or Decimal
        self.suffix = []  # per slot: text appended after the number
        self.kind = []    # per slot: 0 = time, 1 = id
        t_min, t_max, id_max = None, None, 0
        slotted = []
        n_meta = 0
        for ev in events:
            if not isinstance(ev, dict) or ev.get("ph") == "M":
                n_meta += isinstance(ev, dict)
                slotted.append((True, ev))
                continue
            ev = dict(ev)
            for k, v in list(ev.items()):
                if k == "ts" and is_num(v):
                    b, s = ts_base(v)
                    self.bases.append(b)
                    self.suffix.append(s)
                    self.kind.append(0)
                    ev[k] = SLOT
                    end = v + (ev.get("dur") if is_num(ev.get("dur")) else 0)
                    t_min = v if t_min is None or v < t_min else t_min
                    t_max = end if t_max is None or end > t_max else t_max
                elif k == "id" and shiftable_id(k, v):
                    self.bases.append(v)
                    self.suffix.append("")
                    self.kind.append(1)
                    ev[k] = SLOT
                    id_max = max(id_max, v)
                elif k == "args" and isinstance(v, dict):
                    args = dict(v)
                    for ak, av in v.items():
                        if ak in ID_ARG_KEYS and shiftable_id(ak, av):
                            self.bases.append(av)
                            self.suffix.append("")
                            self.kind.append(1)
                            args[ak] = SLOT
                            id_max = max(id_max, av)
                    ev[k] = args
            slotted.append((False, ev))
        self.n_meta = n_meta
        self.n_events = len(events) - n_meta
        span = (t_max - t_min) if t_min is not None else 0
        self.time_unit = int(math.ceil(span + max(1.0, span * TIME_GAP_FRACTION)))
        self.id_unit = id_max + 1

        ascii_only = False
        try:
            parts_all = [dumps(ev, False) for _, ev in slotted]
            for p in parts_all:
                p.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: keep them as \u escapes
            ascii_only = True
            parts_all = [dumps(ev, True) for _, ev in slotted]
        for p in parts_all:
            if p.count(SLOT) != p.count(SLOT_JSON):
                raise SystemExit("make-big-trace: input contains the slot marker text")
        # repetition 0 keeps metadata events in place; later ones drop them
        first = ", ".join(parts_all)
        rest = ", ".join(p for (meta, _), p in zip(slotted, parts_all) if not meta)
        self.first = self._fmt(first)
        self.rest = self._fmt(rest)
        self.has_rest = any(not meta for meta, _ in slotted)

        header_doc = doc
        if isinstance(doc, dict):
            header_doc = dict(doc)
            header_doc["traceEvents"] = EVENTS_MARK
            whole = dumps(header_doc, ascii_only)
            head, tail = whole.split(json.dumps(EVENTS_MARK), 1)
            self.head, self.tail = head + "[", "]" + tail
        else:
            self.head, self.tail = "[", "]"

    @staticmethod
    def _fmt(text):
        text = text.replace("%", "%%")
        n = text.count(SLOT_JSON)
        return text.replace(SLOT_JSON, "%s"), n

    def values(self, r):
        tu, iu = r * self.time_unit, r * self.id_unit
        units = (tu, iu)
        return tuple(
            [str(b + units[k]) + s for b, s, k in zip(self.bases, self.suffix, self.kind)]
        )

    def repetition(self, r):
        fmt, n = self.first if r == 0 else self.rest
        assert n == len(self.bases)
        return fmt % self.values(r) if n else fmt.replace("%%", "%")


class Sink:
    def __init__(self, path, level):
        self.raw = sys.stdout.buffer if path == "-" else open(path, "wb")
        self.gz = None
        if path != "-" and path.endswith(".gz"):
            self.gz = gzip.GzipFile(fileobj=self.raw, mode="wb", compresslevel=level, mtime=0)
        self.out = self.gz or self.raw
        self.bytes = 0

    def write(self, text):
        data = text.encode("utf-8")
        self.bytes += len(data)
        self.out.write(data)

    def close(self):
        if self.gz:
            self.gz.close()
        if self.raw is not sys.stdout.buffer:
            self.raw.close()
        else:
            self.raw.flush()


def build(args):
    t0 = time.monotonic()
    doc = load(args.input)
    tpl = Template(doc)
    del doc
    if args.repeat is not None:
        reps = args.repeat
    else:
        one = len(tpl.repetition(1).encode("utf-8")) if tpl.has_rest else 1
        reps = max(1, math.ceil(args.target_mb * 1e6 / max(1, one)))
    sink = Sink(args.output, args.level)
    sink.write(tpl.head)
    wrote_any = False
    for r in range(reps):
        text = tpl.repetition(r)
        if not text:
            continue
        if wrote_any:
            sink.write(", ")
        sink.write(text)
        wrote_any = True
        if not args.quiet and sys.stderr.isatty():
            sys.stderr.write("\rmake-big-trace: repetition %d/%d, %.0f MB" %
                             (r + 1, reps, sink.bytes / 1e6))
    sink.write(tpl.tail)
    sink.close()
    if not args.quiet:
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        size = os.path.getsize(args.output) if args.output != "-" else sink.bytes
        sys.stderr.write(
            "make-big-trace: %d repetitions of %d events (+%d metadata), %.1f MB JSON, "
            "%.1f MB on disk, time unit %d us, id unit %d, %.1f s\n"
            % (reps, tpl.n_events, tpl.n_meta, sink.bytes / 1e6, size / 1e6,
               tpl.time_unit, tpl.id_unit, time.monotonic() - t0))


# ---------------------------------------------------------------------------- verify

def verify(args):
    """Independent checks that OUTPUT is INPUT repeated with valid links."""
    orig = load(args.input)
    out = load(args.output)
    oev, nev = events_of(orig), events_of(out)
    problems = []

    def check(cond, msg):
        if not cond:
            problems.append(msg)

    if isinstance(orig, dict):
        check(isinstance(out, dict) and list(out) == list(orig), "top-level keys differ")
        for k in orig:
            if k != "traceEvents":
                check(out.get(k) == orig[k], "top-level %r differs" % k)
    ometa = [e for e in oev if isinstance(e, dict) and e.get("ph") == "M"]
    nmeta = [e for e in nev if isinstance(e, dict) and e.get("ph") == "M"]
    check(ometa == nmeta, "metadata events not copied exactly once")
    obody = [e for e in oev if not (isinstance(e, dict) and e.get("ph") == "M")]
    nbody = [e for e in nev if not (isinstance(e, dict) and e.get("ph") == "M")]
    if not obody:
        check(not nbody, "events appeared from nowhere")
        return report(problems, 0)
    reps = len(nbody) // len(obody)
    check(reps >= 1 and reps * len(obody) == len(nbody),
          "event count %d is not a multiple of %d" % (len(nbody), len(obody)))

    # 1. every repetition is the input with only ts / id-like values changed, by one
    #    time shift and one id shift per repetition
    # timestamps compared as exact decimals of the file's text
    ots = exact_ts(args.input)
    nts = exact_ts(args.output)
    t_shift, i_shift = [], []
    max_spread = [Decimal(0)]
    for r in range(reps):
        seg = nbody[r * len(obody):(r + 1) * len(obody)]
        ts_d, id_d = [], set()
        seg_ts = nts[r * len(obody):(r + 1) * len(obody)]
        for a, b in zip(ots, seg_ts):
            if a is not None:
                ts_d.append(b - a)
        for a, b in zip(obody, seg):
            if not isinstance(a, dict):
                check(a == b, "non-object event changed")
                continue
            check(list(a) == list(b), "event keys changed")
            for k in a:
                va, vb = a[k], b.get(k)
                if k == "ts" and is_num(va):
                    pass
                elif k == "id" and shiftable_id(k, va):
                    id_d.add(vb - va)
                elif k == "args" and isinstance(va, dict):
                    check(list(va) == list(vb), "args keys changed")
                    for ak in va:
                        if ak in ID_ARG_KEYS and shiftable_id(ak, va[ak]):
                            id_d.add(vb[ak] - va[ak])
                        else:
                            check(va[ak] == vb[ak], "arg %r changed" % ak)
                else:
                    check(va == vb, "field %r changed" % k)
        if ts_d:
            spread = max(ts_d) - min(ts_d)
            # exact unless the input wrote more digits than a double holds
            check(spread <= Decimal("0.002"),
                  "repetition %d: ts shifted by different amounts (spread %s)" % (r, spread))
            max_spread[0] = max(max_spread[0], spread)
        check(len(id_d) <= 1, "repetition %d: ids shifted by %d different amounts" % (r, len(id_d)))
        t_shift.append(min(ts_d) if ts_d else 0)
        i_shift.append(next(iter(id_d), 0))
    check(t_shift[0] == 0 and i_shift[0] == 0, "repetition 0 is not the input")

    # 2. repetitions do not overlap in time and follow each other
    def span(seg):
        ts = [e["ts"] for e in seg if isinstance(e, dict) and is_num(e.get("ts"))]
        ends = [e["ts"] + (e.get("dur") if is_num(e.get("dur")) else 0)
                for e in seg if isinstance(e, dict) and is_num(e.get("ts"))]
        return (min(ts), max(ends)) if ts else (0, 0)
    prev_end = None
    for r in range(reps):
        lo, hi = span(nbody[r * len(obody):(r + 1) * len(obody)])
        if prev_end is not None:
            check(lo > prev_end, "repetition %d overlaps the previous one in time" % r)
        prev_end = hi

    # 3. id-like values: distinct counts multiply by reps (no collisions between
    #    repetitions) and every cross-reference keeps its hit count times reps
    def id_values(evs):
        vals = {}
        for e in evs:
            if not isinstance(e, dict):
                continue
            if "id" in e and shiftable_id("id", e["id"]):
                vals.setdefault("id:" + str(e.get("ph")), []).append(e["id"])
            a = e.get("args")
            if isinstance(a, dict):
                for k in ID_ARG_KEYS:
                    if k in a and shiftable_id(k, a[k]):
                        vals.setdefault(k, []).append(a[k])
        return vals
    ov, nv = id_values(obody), id_values(nbody)
    check(sorted(ov) == sorted(nv), "id-like keys differ")
    links = 0
    for k in ov:
        check(len(set(nv.get(k, []))) == reps * len(set(ov[k])),
              "%r: %d distinct values, expected %d" %
              (k, len(set(nv.get(k, []))), reps * len(set(ov[k]))))
        for k2 in ov:
            if k2 == k:
                continue
            oset, nset = set(ov[k2]), set(nv[k2])
            ohits = sum(1 for v in ov[k] if v in oset)
            nhits = sum(1 for v in nv[k] if v in nset)
            if ohits:
                links += 1
            check(nhits == reps * ohits,
                  "links %r -> %r: %d hits, expected %d" % (k, k2, nhits, reps * ohits))
    # same-repetition check for the links themselves: a value found in another key
    # must come from the same repetition (ids never cross repetitions)
    if reps > 1:
        unit = i_shift[1]
        check(all(i_shift[r] == r * unit for r in range(reps)), "id shifts not linear")
        omax = max((max(v) for v in ov.values()), default=0)
        check(unit > omax, "id unit %d does not exceed input's largest id %d" % (unit, omax))
    sys.stderr.write("make-big-trace --verify: %d repetitions, %d events, %d metadata, "
                     "%d id keys, %d cross-key links checked, ts shift spread %s us\n"
                     % (reps, len(nbody), len(nmeta), len(ov), links, max_spread[0]))
    return report(problems, reps)


def exact_ts(path):
    """ts of every non-metadata event as Decimal (None when absent)."""
    doc = load(path, exact=True)
    return [e.get("ts") if isinstance(e, dict) and isinstance(e.get("ts"), (int, Decimal))
            else None
            for e in events_of(doc) if not (isinstance(e, dict) and e.get("ph") == "M")]


def report(problems, reps):
    if problems:
        for p in sorted(set(problems))[:50]:
            sys.stderr.write("FAIL: %s\n" % p)
        return 1
    sys.stderr.write("make-big-trace --verify: OK\n")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--repeat", type=int, help="number of repetitions")
    g.add_argument("--target-mb", type=float,
                   help="repeat until the uncompressed JSON reaches about MB (1e6 bytes)")
    ap.add_argument("--level", type=int, default=6, choices=range(0, 10),
                    help="gzip level for .gz output (default 6)")
    ap.add_argument("--verify", action="store_true",
                    help="check OUTPUT against INPUT instead of writing")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if args.verify:
        return verify(args)
    if args.repeat is None and args.target_mb is None:
        ap.error("give --repeat N or --target-mb MB")
    if args.repeat is not None and args.repeat < 1:
        ap.error("--repeat must be at least 1")
    build(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
