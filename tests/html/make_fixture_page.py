#!/usr/bin/env python3
"""TEST FIXTURE BUILDER for the HTML browser test (python3 stdlib only).

This is not a renderer and not an analysis path. Until `triage --format html` exists,
it fills the page templates (src/report/html/) from `triage --format json` reports so
that the browser harness (browser_check.mjs) has pages in the markup the C renderer
will write (docs/html.md). Anything the JSON does not hold yet (summary ranking,
provenance, rank wait, per-component fusion evidence, diff status) is filled with
simple stand-ins marked as such on the page. When the renderer lands, the test calls
`triage --format html` instead and this file goes.

usage:
  make_fixture_page.py report REPORT.json -o PAGE [--ranks R.json ...] [--pad-kernels N]
  make_fixture_page.py diff BEFORE.json AFTER.json -o PAGE
  make_fixture_page.py bundle REPORT.json ... -o PAGE
common: --templates DIR  --command TEXT  --version TEXT  --rules-dir DIR
        --broken-for-selfcheck  (an UNSAFE page on purpose: no CSP, one unescaped name,
                                 a console error; the harness must flag it)
"""
import argparse
import base64
import hashlib
import html
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SHORT_MAX = 72
BROKEN = False  # --broken-for-selfcheck


def esc(s):
    """Text and quoted-attribute escaping (what rp_html_text does in C)."""
    return CONTROLS.sub("\ufffd", html.escape("" if s is None else str(s), quote=True))


def token(s):
    return re.sub(r"[^A-Za-z0-9_-]", "_", s or "") or "_"


def short(name):
    """Stand-in for the names work (issue 11): collapse nested template arguments, cut."""
    s = name
    while True:
        t = re.sub(r"<[^<>]*>", "<\u2026>", s)
        t = t.replace("<\u2026<\u2026>\u2026>", "<\u2026>")
        if t == s:
            break
        s = t
    return s if len(s) <= SHORT_MAX else s[: SHORT_MAX - 1] + "\u2026"


def name_span(full):
    if BROKEN and "<" in full:  # the self-check page carries one raw payload
        return f'<span class="name" title="{full}">{full}</span>'
    return f'<span class="name" title="{esc(full)}">{esc(short(full))}</span>'


def ms(us, digits=2):
    v = us / 1000.0
    while digits < 6 and us > 0 and round(v, digits) == 0:
        digits += 1  # a non-zero time never prints as zero
    return f"{v:.{digits}f}"


def num_td(value, text):
    return f'<td data-value="{value:.6g}">{esc(text)}</td>' if value is not None else "<td></td>"


def lines(cell):
    """JSON cells of today's model still carry Markdown <br> separators."""
    return "<br>".join(esc(x) for x in cell.split("<br>"))


def pct_td(pct):
    return num_td(pct, f"{pct:.1f}")


def cat_span(cat):
    return f'<span class="cat cat-{token(cat)}">{esc(cat)}</span>'


def stack_svg(parts, height=24, scale=None, label="GPU time by category"):
    """parts: [(category, us)] -> the stacked bar the C renderer will draw."""
    total = sum(us for _, us in parts)
    scale = scale or total or 1.0
    x, rects, words = 0.0, [], []
    for cat, us in parts:
        w = 1000.0 * us / scale
        pct = 100.0 * us / total if total else 0.0
        tip = f"{cat}: {ms(us)} ms ({pct:.1f}%)"
        rects.append(f'<rect class="cat-{token(cat)}" x="{x:.2f}" y="0" width="{w:.2f}" '
                     f'height="{height}"><title>{esc(tip)}</title></rect>')
        words.append(f"{cat} {pct:.1f}%")
        x += w
    return (f'<svg class="stack" viewBox="0 0 1000 {height}" preserveAspectRatio="none" '
            f'role="img" aria-label="{esc(label + ": " + ", ".join(words))}">' + "".join(rects) + "</svg>")


def by_category(kernels):
    acc = {}
    for k in kernels:
        acc[k["category"]] = acc.get(k["category"], 0.0) + k["total_us"]
    return sorted(acc.items(), key=lambda kv: -kv[1])


def catbar(stage_tok, kernels, table_id, p):
    parts = by_category(kernels)
    total = sum(us for _, us in parts) or 1.0
    legend = "".join(
        f'<li class="cat-{token(c)}" data-cat="{esc(c)}"><span class="sw"></span>{esc(c)} '
        f'<b>{100.0 * us / total:.1f}%</b> <span class="t">{ms(us)} ms</span></li>' for c, us in parts)
    return (f'<figure class="catbar" id="{p}bar-{stage_tok}" data-table="{table_id}">{stack_svg(parts)}'
            f'<figcaption><ul class="legend">{legend}</ul></figcaption></figure>')


def table(cls, tid, heads, rows, extra=""):
    th = "".join(heads)
    body = "".join(rows) if rows else f'<tr class="empty"><td colspan="{len(heads)}">no rows</td></tr>'
    return (f'<div class="table-wrap"><table class="data sortable {cls}" id="{tid}"{extra}>'
            f"<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>")


def kernel_table(stage_tok, st, min_share, p):
    heads = ['<th>Kernel</th>', '<th>Category</th>',
             '<th class="num" aria-sort="descending" title="sum of kernel durations">GPU time (ms)</th>',
             '<th class="num" title="of the stage\'s kernel time">Share (%)</th>',
             '<th class="num">Launches</th>', '<th class="num">Max (ms)</th>',
             '<th>Python location (site share)</th>', '<th>CPU op</th>']
    rows = []
    for i, k in enumerate(st["kernels"]):
        minor = "" if k["shown"] else ' class="minor"'
        rows.append(
            f'<tr id="{p}k-{stage_tok}-{i}"{minor} data-cat="{esc(k["category"])}">'
            f'<td>{name_span(k["name"])}</td><td>{cat_span(k["category"])}</td>'
            f'{num_td(k["total_us"], ms(k["total_us"]))}{pct_td(k["share_pct"])}'
            f'{num_td(k["launches"], str(k["launches"]))}{num_td(k["max_us"], ms(k["max_us"]))}'
            f'<td class="loc">{lines(k["location"])}</td><td><code>{esc(k["cpu_op"])}</code></td></tr>')
    note = f' data-minor-note="under {min_share:.1f}% share"'
    return table("kernels", f"{p}kt-{stage_tok}", heads, rows, note)


def overlap_table(stage_tok, ost, p):
    heads = ['<th class="num">Priority</th>', '<th>Verdict</th>', '<th>Kernel</th>', '<th>Category</th>',
             '<th>Python scope</th>', '<th class="num">Launches</th>',
             '<th class="num" aria-sort="descending">GPU time (ms)</th>', '<th class="num">Exclusive (ms)</th>',
             '<th class="num">Hidden (ms)</th>', '<th class="num">Share (%)</th>', '<th>Dep risk</th>',
             '<th>Recommendation</th>']
    rows = []
    for i, r in enumerate(ost["rows"] if ost else []):
        prio = int(re.sub(r"\D", "", r["priority"]) or 0)
        rows.append(
            f'<tr id="{p}o-{stage_tok}-{i}" data-cat="{esc(r["category"])}">'
            f'{num_td(prio, r["priority"])}<td>{esc(r["verdict"])}</td><td>{name_span(r["kernel"])}</td>'
            f'<td>{cat_span(r["category"])}</td><td class="loc">{esc(r["python_scope"])}</td>'
            f'{num_td(r["launches"], str(r["launches"]))}{num_td(r["total_us"], ms(r["total_us"]))}'
            f'{num_td(r["exclusive_us"], ms(r["exclusive_us"]))}{num_td(r["hidden_us"], ms(r["hidden_us"]))}'
            f'{pct_td(r["share_pct"])}<td>{esc(r["dep_risk"])}</td>'
            f'<td>{esc(r["recommendation"])}</td></tr>')
    return table("overlap", f"{p}ot-{stage_tok}", heads, rows)


def evidence(f, kernels_by_name):
    """The expandable evidence cell: per component its kernel, then where the pieces are
    launched today and where the fused path lives."""
    rows = []
    for kname in f["related_kernels"]:
        k = kernels_by_name.get(kname)
        us = k["total_us"] if k else None
        rows.append(f'<tr><td>{esc(k["category"] if k else "-")}</td><td>{name_span(kname)}</td>'
                    f'{num_td(us, ms(us) if us is not None else "")}</tr>')
    locs = "".join(f"<li>{esc(x)}</li>" for x in f["current_locations"].split("<br>") if x)
    paths = "".join(f"<li>{esc(x)}</li>" for x in f["candidate_paths"])
    return ('<details class="evidence"><summary>'
            f'{len(f["related_kernels"])} evidence kernels</summary><table class="components">'
            '<thead><tr><th title="fixture: the kernel\'s category">Component</th><th>Evidence kernel</th>'
            f'<th>GPU time (ms)</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'<p>Launched today from:</p><ul class="loc">{locs}</ul>'
            f'<p>Fused path:</p><ul class="loc">{paths}</ul></details>')


def fusion_table(stage_tok, st, p):
    heads = ['<th>Pattern</th>', '<th>Confidence</th>', '<th>Status</th>',
             '<th class="num" aria-sort="descending">Related GPU time (ms)</th>', '<th class="num">Share (%)</th>',
             '<th>Rationale</th>', '<th data-sort="none">Evidence per component</th>']
    by_name = {k["name"]: k for k in st["kernels"]}
    rows = []
    for i, f in enumerate(st["fuse"]):
        minor = "" if f["shown"] else ' class="minor"'
        rows.append(
            f'<tr id="{p}f-{stage_tok}-{i}"{minor} data-cat="{esc(f["origin"])}"><td>{esc(f["pattern"])}</td>'
            f'<td><span class="conf-{token(f["confidence"].lower())}">{esc(f["confidence"])}</span></td>'
            f'<td>{esc(f["status"])}</td>{num_td(f["related_us"], ms(f["related_us"]))}'
            f'{pct_td(f["share_pct"])}<td class="text">{esc(f["rationale"])}</td>'
            f'<td class="evidence">{evidence(f, by_name)}</td></tr>')
    return table("fusion", f"{p}ft-{stage_tok}", heads, rows)


def summary(rep, toks, p):
    """Stand-in ranking (the real one is the rule packs'): per stage the top kernel, the
    top overlap row by exclusive time and the top shown fusion, ordered by time."""
    items = []
    ov = {s["stage"]: s for s in rep["overlap"]["stages"]}
    for st in rep["stages"]:
        t = toks[st["stage"]]
        if st["kernels"]:
            k = max(st["kernels"], key=lambda x: x["total_us"])
            items.append((k["total_us"], "kernel", "Look at the dominant kernel", k["name"], k["location"],
                          f"{p}k-{t}-{st['kernels'].index(k)}", f"{st['stage']} kernel table"))
        rows = ov.get(st["stage"], {}).get("rows", [])
        if rows:
            i, r = max(enumerate(rows), key=lambda x: x[1]["exclusive_us"])
            items.append((r["exclusive_us"], "overlap", f"{r['recommendation'].capitalize()}", r["kernel"],
                          r["python_scope"], f"{p}o-{t}-{i}", f"{st['stage']} overlap table"))
        shown = [(i, f) for i, f in enumerate(st["fuse"]) if f["shown"]]
        if shown:
            i, f = max(shown, key=lambda x: x[1]["related_us"])
            items.append((f["related_us"], "fusion", f"Fuse: {f['pattern']}", f["related_kernels"][0]
                          if f["related_kernels"] else f["pattern"], f["current_locations"].split("<br>")[0],
                          f"{p}f-{t}-{i}", f"{st['stage']} fusion table"))
    items.sort(key=lambda x: -x[0])
    lis = "".join(
        f'<li data-kind="{kind}"><span class="kind">{kind}</span><span class="action">{esc(act)}</span>: '
        f'{name_span(name)} at <code class="loc">{esc(loc)}</code> \u2014 '
        f'<span class="stake" data-value="{us:.6g}">{ms(us)} ms</span> '
        f'<a class="ev" href="#{rid}">{esc(where)}</a></li>'
        for us, kind, act, name, loc, rid, where in items[:8])
    return (f'<section id="{p}summary" class="summary"><h2>What to try first</h2>'
            '<p class="muted">Fixture ranking (largest time first); the real ranking comes from the rule packs.</p>'
            f"<ol>{lis}</ol></section>")


def header(rep, title, p, level="h1"):
    ins = rep["inputs"]["formal"] or rep["inputs"]["mapping"]
    busy = sum(s["kernel_total_us"] for s in rep["stages"])
    model = rep["model"]
    fw_prov = ("detection rule", "detection-rule") if rep["framework_id"] else ("default", "default")
    facts = [("Framework", esc(rep["framework"]), fw_prov),
             ("Model", esc(model) if model else "not known", ("server args", "server-args") if model
              else ("none", "none")),
             ("Mode", esc(rep["mode"]), None),
             ("Stages", esc(", ".join(s["label"] for s in rep["stages"])), None),
             ("GPU kernel time", f"{ms(busy)} ms", None)]
    dl = "".join(f"<div><dt>{k}</dt><dd>{v}" + (f' <span class="prov prov-{pc}">{pt}</span>' if prov else "")
                 + "</dd></div>" for k, v, prov in facts for pt, pc in [prov or (None, None)])
    inputs = ", ".join(f"<code>{esc(x)}</code>" for x in ins)
    return (f'<header class="report-head" id="{p}top"><{level}>{esc(title)}</{level}>'
            f'<p class="subtitle">Inputs: {inputs}</p><dl class="facts">{dl}</dl></header>')


def hints(rep, p):
    out = ['<li class="hint hint-info">Fixture page: built by tests/html/make_fixture_page.py from '
           '<code>--format json</code>, not by triage.</li>']
    locs = [k["location"] for s in rep["stages"] for k in s["kernels"]]
    if locs and all(x in ("", "unresolved", "-") for x in locs):
        out.append('<li class="hint hint-warn">No Python stacks in this trace: record with '
                   '<code>with_stack=True</code> to map kernels to code.</li>')
    return f'<section id="{p}hints" class="hints"><h2>Notes on this trace</h2><ul>{"".join(out)}</ul></section>'


def stage_tokens(rep):
    toks, seen = {}, set()
    for i, s in enumerate(rep["stages"]):
        t = token(s["stage"])
        if t in seen:
            t = f"{t}-{i}"
        seen.add(t)
        toks[s["stage"]] = t
    return toks


def report_body(rep, title, p="", level="h1", ranks=None):
    toks = stage_tokens(rep)
    ov = {s["stage"]: s for s in rep["overlap"]["stages"]}
    h2 = "h2" if level == "h1" else "h3"
    h3 = "h3" if level == "h1" else "h4"
    parts = [header(rep, title, p, level), summary(rep, toks, p), hints(rep, p)]
    for st in rep["stages"]:
        t = toks[st["stage"]]
        parts.append(
            f'<section class="stage" id="{p}stage-{t}" data-stage="{esc(st["stage"])}">'
            f'<{h2}>Stage: {esc(st["label"])}</{h2}>'
            f'<p class="stage-totals">Kernel time {ms(st["kernel_total_us"])} ms in {len(st["kernels"])} kernels.</p>'
            f'{catbar(t, st["kernels"], p + "kt-" + t, p)}'
            f'<{h3} id="{p}kernels-{t}">Kernels</{h3}>{kernel_table(t, st, rep["kernel_min_share_pct"], p)}'
            f'<{h3} id="{p}overlap-{t}">Overlap opportunities</{h3}>{overlap_table(t, ov.get(st["stage"]), p)}'
            f'<{h3} id="{p}fusion-{t}">Fusion opportunities</{h3}>{fusion_table(t, st, p)}</section>')
    if ranks:
        parts.append(ranks_section(ranks, p))
    parts.append(legend_section(p))
    return "".join(parts)


COMPUTE_EXCLUDED = {"communication", "memory"}


def rank_split(rep):
    acc = {"compute": 0.0, "communication": 0.0, "memory": 0.0}
    for st in rep["stages"]:
        if st["stage"] != rep["stages"][0]["stage"]:
            continue  # one stage, so kernels are not counted twice ("all" repeats them)
        for k in st["kernels"]:
            c = k["category"] if k["category"] in COMPUTE_EXCLUDED else "compute"
            acc[c] += k["total_us"]
    return acc


def ranks_section(ranks, p):
    """ranks: [(label, report)]. Fixture straggler: the rank with the least communication
    time (a rank that waits less in collectives is the one the others wait for)."""
    splits = [(lab, rank_split(r), r) for lab, r in ranks]
    widest = max(sum(s.values()) for _, s, _ in splits) or 1.0
    strag = min(splits, key=lambda x: x[1]["communication"])[0]
    rows = []
    for i, (lab, s, r) in enumerate(splits):
        busy = sum(s.values())
        top = max(r["stages"][0]["kernels"], key=lambda k: k["total_us"])
        cls = ' class="straggler"' if lab == strag else ""
        badge = ' <span class="badge badge-straggler">straggler</span>' if lab == strag else ""
        rows.append(
            f'<tr id="{p}rank-{i}"{cls}><th scope="row" data-value="{i}">{esc(lab)}{badge}</th>'
            f'<td class="bar">{stack_svg(list(s.items()), 16, widest, "time split")}</td>'
            f'{num_td(busy, ms(busy))}{num_td(s["compute"], ms(s["compute"]))}'
            f'{num_td(s["communication"], ms(s["communication"]))}{num_td(s["memory"], ms(s["memory"]))}'
            f'<td>{name_span(top["name"])} <span class="muted">{top["share_pct"]:.1f}%</span></td></tr>')
    heads = ['<th>Rank</th>', '<th data-sort="none">Time split</th>',
             '<th class="num">GPU busy (ms)</th>', '<th class="num">Compute (ms)</th>',
             '<th class="num">Communication (ms)</th>', '<th class="num">Memory (ms)</th>',
             '<th>Top kernel</th>']
    legend = "".join(f'<li class="cat-{c}"><span class="sw"></span>{c}</li>'
                     for c in ("compute", "communication", "memory"))
    return (f'<section id="{p}ranks" class="ranks"><h2>Ranks</h2>'
            f'<p class="verdict">{esc(strag)} is the rank the others wait for (fixture rule: least '
            f'communication time).</p><ul class="legend">{legend}</ul>'
            f'{table("ranks", p + "rt", heads, rows)}</section>')


def legend_section(p):
    words = [("GPU time", "sum of the kernel's durations in the stage, in ms"),
             ("Share", "of the stage's kernel time (one denominator for every table of a stage)"),
             ("Exclusive / Hidden", "time with no other stream busy / time overlapped by other work"),
             ("Confidence", "Confirmed: each component has its own evidence kernel; Candidate: partial"),
             ("straggler", "the rank the others wait for in collectives")]
    dl = "".join(f"<dt>{esc(a)}</dt><dd>{esc(b)}</dd>" for a, b in words)
    return f'<section id="{p}legend" class="legend-key"><h2>Legend</h2><dl class="key">{dl}</dl></section>'


def footer(args):
    packs = sorted(f for f in os.listdir(args.rules_dir) if f.endswith(".yaml")) if args.rules_dir else []
    lis = "".join(f"<li><code>{esc(os.path.join(args.rules_dir, f))}</code></li>" for f in packs)
    return (f'<footer id="footer" class="page-foot"><dl><dt>triage</dt><dd id="triage-version">'
            f'{esc(args.version)}</dd><dt>Rule packs</dt><dd><ul class="packs">{lis}</ul></dd>'
            f'<dt>Command</dt><dd><code class="cmdline">{esc(args.command)}</code></dd></dl></footer>')


# --- diff -------------------------------------------------------------------------------

def diff_status(before, after, floor_us):
    if before is None:
        return "new"
    if after is None:
        return "gone"
    d = after - before
    if abs(d) < floor_us:
        return "noise"
    return "regress" if d > 0 else "improve"


def diff_stage(sb, sa, t):
    kb = {k["name"]: k for k in sb["kernels"]}
    ka = {k["name"]: k for k in sa["kernels"]}
    floor = 0.01 * max(sb["kernel_total_us"], sa["kernel_total_us"])  # fixture noise floor: 1%
    rows = []
    for i, name in enumerate(sorted(set(kb) | set(ka), key=lambda n: -max(
            kb.get(n, {}).get("total_us", 0), ka.get(n, {}).get("total_us", 0)))):
        b, a = kb.get(name), ka.get(name)
        bu, au = (b["total_us"] if b else None), (a["total_us"] if a else None)
        d = (au or 0.0) - (bu or 0.0)
        status = diff_status(bu, au, floor)
        cat = (a or b)["category"]
        sign = "up" if d > 0 else "down" if d < 0 else ""
        rows.append(
            f'<tr id="d-{t}-{i}" data-cat="{esc(cat)}" data-status="{status}"><td>{name_span(name)}</td>'
            f'<td>{cat_span(cat)}</td>{num_td(bu, ms(bu) if bu is not None else "")}'
            f'{num_td(au, ms(au) if au is not None else "")}'
            f'<td data-value="{d:.6g}" class="delta {sign}">{"+" if d > 0 else ""}{ms(d) if d else "0"}</td>'
            f'<td><span class="status status-{status}">{status}</span></td></tr>')
    heads = ['<th>Kernel</th>', '<th>Category</th>', '<th class="num">Before (ms)</th>',
             '<th class="num">After (ms)</th>', '<th class="num">\u0394 (ms)</th>', '<th>Status</th>']
    return table("diff kernels", f"dk-{t}", heads, rows, ' data-facets="cat status"')


def diff_body(rb, ra, nb, na):
    parts = [f'<header class="report-head" id="top"><h1>triage diff</h1><p class="subtitle">'
             f'Before: <code>{esc(nb)}</code> \u2192 After: <code>{esc(na)}</code></p></header>']
    sa_by = {s["stage"]: s for s in ra["stages"]}
    items = []
    for sb in rb["stages"]:
        sa = sa_by.get(sb["stage"])
        if not sa:
            continue
        t = token(sb["stage"])
        tb, ta = sb["kernel_total_us"], sa["kernel_total_us"]
        pct = 100.0 * (ta - tb) / tb if tb else 0.0
        cls = "up" if ta > tb else "down"
        items.append(f'<li><a class="ev" href="#stage-{t}">{esc(sb["label"])}: {pct:+.1f}%</a></li>')
        bars = (f'<figure class="catbar diffbars"><span class="side">before</span>{stack_svg(by_category(sb["kernels"]), 20, max(tb, ta))}'
                f'<span class="side">after</span>{stack_svg(by_category(sa["kernels"]), 20, max(tb, ta))}</figure>')
        parts.append(
            f'<section class="stage diff" id="stage-{t}"><h2>Stage: {esc(sb["label"])} \u2014 {ms(tb)} ms \u2192 '
            f'{ms(ta)} ms <span class="delta {cls}">{pct:+.1f}%</span></h2>{bars}'
            f'<h3>Kernel changes</h3>{diff_stage(sb, sa, t)}</section>')
    parts.insert(1, f'<section id="summary" class="summary"><h2>Changes by stage</h2><ol>{"".join(items)}</ol></section>')
    return "".join(parts)


# --- bundle and page --------------------------------------------------------------------

def bundle_body(reports):
    groups = {}
    for i, (path, rep) in enumerate(reports):
        groups.setdefault((rep["model"] or "model not known", rep["framework"]), []).append((i, path, rep))
    toc, arts = [], []
    for (model, fw), members in sorted(groups.items()):
        lis = "".join(f'<li><a href="#r{i}">{esc(os.path.basename(path))}</a> <span class="meta">'
                      f'{len(rep["stages"])} stage(s)</span></li>' for i, path, rep in members)
        toc.append(f'<li><span class="group">{esc(model)} \u00b7 {esc(fw)}</span><ol>{lis}</ol></li>')
        for i, path, rep in members:
            arts.append(f'<article class="report" id="r{i}">{report_body(rep, os.path.basename(path), f"r{i}-", "h2")}</article>')
    head = f'<header class="page-head" id="top"><h1>triage bundle: {len(reports)} reports</h1></header>'
    return head + f'<nav class="toc" id="toc" aria-label="Contents"><h2>Contents</h2><ol>{"".join(toc)}</ol></nav>' + "".join(arts)


def csp_hash(data):
    return "'sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode() + "'"


def fill_page(tdir, title, body, version):
    read = lambda n: open(os.path.join(tdir, n), "rb").read()
    page, css, js = read("page.html").decode(), read("report.css"), read("report.js")
    csp = (f"default-src 'none'; script-src {csp_hash(js)}; style-src {csp_hash(css)}; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    if BROKEN:  # no policy, and a script that reports an error, so every net must catch it
        page = page.replace('<meta http-equiv="Content-Security-Policy" content="<!--triage:csp-->">\n', "")
        body += '<script>console.error("self-check: this page is broken on purpose")</script>'
    slots = {"csp": csp, "version": esc(version), "title": esc(title), "css": css.decode(),
             "body": body, "js": js.decode()}
    return re.sub(r"<!--triage:([a-z]+)-->", lambda m: slots[m.group(1)], page)


def pad_kernels(rep, n):
    """Repeats the first stage's kernel rows up to n rows (distinct names and times)."""
    ks = rep["stages"][0]["kernels"]
    base = list(ks)
    for i in range(len(ks), n):
        k = dict(base[i % len(base)])
        k["name"] = f'{k["name"]} #{i}'
        k["total_us"] = k["total_us"] * (1 + (i * 7919 % 1000) / 1000.0)
        k["launches"] = k["launches"] + i % 97
        k["shown"] = i % 5 != 0
        ks.append(k)


def main():
    global BROKEN
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["report", "diff", "bundle"])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--ranks", nargs="*", default=[])
    ap.add_argument("--pad-kernels", type=int, default=0)
    ap.add_argument("--templates", default=os.path.join(ROOT, "src", "report", "html"))
    ap.add_argument("--command", default="triage --format json (fixture)")
    ap.add_argument("--version", default="fixture")
    ap.add_argument("--rules-dir", default=os.path.join(ROOT, "rules"))
    ap.add_argument("--title")
    ap.add_argument("--broken-for-selfcheck", action="store_true")
    args = ap.parse_args()
    BROKEN = args.broken_for_selfcheck
    load = lambda p: json.load(open(p, encoding="utf-8"))
    if args.mode == "report":
        rep = load(args.inputs[0])
        if args.pad_kernels:
            pad_kernels(rep, args.pad_kernels)
        ranks = [(f"rank {i}", load(p)) for i, p in enumerate(args.ranks)]
        title = args.title or f"triage report: {rep['model'] or os.path.basename(args.inputs[0])}"
        body = f"<main>{report_body(rep, title, ranks=ranks)}</main>"
    elif args.mode == "diff":
        title = args.title or "triage diff"
        body = f"<main>{diff_body(load(args.inputs[0]), load(args.inputs[1]), *args.inputs[:2])}</main>"
    else:
        title = args.title or "triage bundle"
        body = f"<main>{bundle_body([(p, load(p)) for p in args.inputs])}</main>"
    with open(args.output, "w", encoding="utf-8") as fh:
        fh.write(fill_page(args.templates, title, body + footer(args), args.version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
