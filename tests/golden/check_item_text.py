#!/usr/bin/env python3
"""check_item_text.py - one wording per "What to try first" item in every format (review 8
defect 7: an item's JSON wording differed from its Markdown and HTML one).

usage: check_item_text.py --triage BIN --source DIR [--shared DIR]

On every input the other invariant checks read (golden_cli.inputs: every fixture of
tests/data, single traces and profile directories, and, when the shared tree exists, its
traces), runs triage with --full-names in Markdown, HTML and JSON, and checks, item by
item:
- the Markdown line, the HTML list item and the JSON item's "text" say the same words
  (formatting aside: bold, code spans, links by their label, tags, escapes);
- the JSON item's "evidence" is the anchors the Markdown line links, in order;
- the three formats list the same number of items;
- the smaller leads alike: the Markdown bullets after the list, the HTML `<li class="lead">`
  items and the JSON "leads".
Exit 0 when every check holds, 1 otherwise (each failure printed), 77 when no input.
Standard library only.
"""
import html
import json
import re
import sys

import golden_cli

LINK = re.compile(r"\[([^\]]*)\]\(#([a-z0-9-]+)\)")


def words(s):
    """The words of a line, formatting aside."""
    s = s.replace("`` ", "").replace(" ``", "").replace("`", "").replace("**", "")
    s = s.replace("\\|", "|")
    return " ".join(s.split())


def md_items(text, marker=r"\d+\.\s+"):
    """The numbered lines of "What to try first" (marker "- ": the smaller leads' bullets)."""
    m = re.search(r"^## What to try first\n(.*?)(?=^## )", text, re.S | re.M)
    out = []
    for line in re.findall(r"^%s(.*)$" % marker, m.group(1), re.M) if m else []:
        anchors = [a for _, a in LINK.findall(line)]
        out.append((words(LINK.sub(lambda x: x.group(1), line)), anchors))
    return out


def html_leads(text):
    out = []
    for li in re.findall(r'<li class="lead">(.*?)</li>', text, re.S):
        out.append(words(html.unescape(re.sub(r"<[^>]+>", "", li))))
    return out


def html_items(text):
    m = re.search(r'<section id="[a-z0-9-]*summary" class="summary">(.*?)</section>', text, re.S)
    out = []
    for li in re.findall(r"<li data-kind=[^>]*>(.*?)</li>", m.group(1), re.S) if m else []:
        li = re.sub(r'<span class="kind">[^<]*</span>', "", li)
        out.append(words(html.unescape(re.sub(r"<[^>]+>", "", li))))
    return out


def check(tri, path, label, fail):
    md, page, js = (golden_cli.run_report(tri, path, label, fail, "--full-names", "--format", f)
                    for f in ("markdown", "html", "json"))
    if md is None or page is None or js is None:
        return False
    rep = json.loads(js)
    compare(label, "item", md_items(md), html_items(page), rep.get("summary", []), fail)
    compare(label, "lead", md_items(md, "- "), html_leads(page), rep.get("leads", []), fail)
    return True


def compare(label, what, m, h, j, fail):
    if not (len(m) == len(h) == len(j)):
        fail(f"{label}: {len(m)} Markdown {what}s, {len(h)} HTML, {len(j)} JSON")
        return
    for i, ((mw, anchors), hw, it) in enumerate(zip(m, h, j), 1):
        jw = words(it.get("text", ""))
        if mw != hw:
            fail(f"{label} {what} {i}: Markdown and HTML differ\n  md:   {mw}\n  html: {hw}")
        if mw != jw:
            fail(f"{label} {what} {i}: Markdown and JSON differ\n  md:   {mw}\n  json: {jw}")
        linked = list(dict.fromkeys(anchors))  # a row linked twice is one evidence row
        if linked != it.get("evidence"):
            fail(f"{label} {what} {i}: Markdown links {anchors}, JSON evidence {it.get('evidence')}")


def main():
    a = golden_cli.parse_args(__doc__.split("\n\n")[0])
    failures = []
    checked = sum(check(a.triage, path, label, failures.append)
                  for path, label in golden_cli.present(a.source, a.shared, failures.append))
    return golden_cli.finish(checked, failures)


if __name__ == "__main__":
    sys.exit(main())
