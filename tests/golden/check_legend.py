#!/usr/bin/env python3
"""Every word a report's tables use as a verdict is defined in its Legend (issue 28: "every
verdict word is defined"; audit 12 found nothing held the reports to it), stdlib only.

usage: check_legend.py --triage BIN --source DIR [--shared DIR]

On every input the golden checks read (golden_cli.inputs: fixtures, and the shared traces
when present) the Markdown report's tables are read by column head; each cell of a vocabulary column
(Priority, Verdict, Dep risk, Dependency, Recommendation, Idle cause, Confidence, Origin,
% of bound's term, the stragglers' Verdict) must be defined in the Legend entry that
explains that column, as a `code` word (Priority: its P-number). The HTML report's Legend
must say what the Markdown one says, entry for entry (one list, report/legend.c).
Exit 0 when all hold, 1 with one line per failure, 77 when no input.
"""
import html
import re
import sys

import golden_cli

# column head -> Legend entry that defines its words; a table is told apart by a head only
# it has (the stragglers' Verdict is not the overlap table's)
COLUMNS = {"Priority": "Priority", "Verdict": "Verdict", "Dep risk": "Dep risk",
           "Dependency (evidence)": "Dependency (evidence)",
           "Recommendation": "Recommendation", "Idle cause": "Idle cause",
           "Confidence": "Confidence", "Origin": "Origin", "% of bound": "% of bound"}
STRAGGLER_HEAD = "Waits for rank"
MARKS = re.compile(r"\*\*|\*|`")


def md_legend(text):
    """{term: text} from the Markdown report's '## Legend' list, in order."""
    tail = text[text.find("\n## Legend\n"):]
    return dict(re.findall(r"^- \*\*(.+?)\*\*: (.*)$", tail, re.M))


def html_legend(page):
    sec = page[page.find('<section id="legend"'):]
    sec = sec[:sec.find("</section>")]
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", sec, re.S)
    return {html.unescape(t): html.unescape(re.sub(r"<[^>]+>", "", d)) for t, d in pairs}


def words(head, cell):
    """The vocabulary words of one cell ([] when the cell holds none)."""
    cell = cell.replace("\\|", "|").strip("` ")
    if cell in ("", "-"):
        return []
    if head == "Recommendation":
        return [re.sub(r" \(item \d+\)$", "", cell)]
    if head == "Dependency (evidence)":
        return [cell.split(" (")[0]]
    if head == "% of bound":
        return re.findall(r"\b(mem|comp)\b", cell) + (["(latency)"] if "(latency)" in cell else [])
    return [cell]


def defined(head, word, text):
    if head == "Priority":
        return re.search(r"\b" + re.escape(word) + r"\b", text) is not None
    return f"`{word}`" in text


def tables(text):
    """(head row, body rows) of every pipe table before the Legend."""
    head, rows = None, []
    for line in text[:text.find("\n## Legend\n")].splitlines():
        if not line.startswith("| "):
            if head:
                yield head, rows
            head, rows = None, []
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if head is None:
            head = cells
        elif not cells[0].startswith("---"):
            rows.append(cells)
    if head:
        yield head, rows


def cell_failures(name, text, legend):
    out = set()
    for head, rows in tables(text):
        straggler = STRAGGLER_HEAD in head
        for col, h in enumerate(head):
            entry = "Stragglers verdict" if straggler and h == "Verdict" else COLUMNS.get(h)
            if not entry:
                continue
            if entry not in legend:
                out.add(f"{name}: the Legend has no entry '{entry}' for column '{h}'")
                continue
            for r in rows:
                for w in words(h, r[col] if col < len(r) else ""):
                    if not defined(h, w, legend[entry]):
                        out.add(f"{name}: '{w}' in column '{h}' is not defined in the "
                                f"Legend's '{entry}' entry")
    return sorted(out)


def html_failures(name, legend, page):
    plain = {t: MARKS.sub("", x) for t, x in legend.items()}
    got = html_legend(page)
    if list(got) != list(plain):
        return [f"{name}: the HTML Legend's entries {list(got)} are not the Markdown's {list(plain)}"]
    return [f"{name}: the HTML Legend's '{t}' says other words than the Markdown's"
            for t in plain if got[t] != plain[t]]


def main():
    a = golden_cli.parse_args(__doc__.split("\n\n")[0])
    failures, n = [], 0
    for path, _ in golden_cli.inputs(a.source, a.shared):
        name = path.rstrip("/").split("/")[-1]
        text = golden_cli.run_report(a.triage, path, name, failures.append)
        if text is None:
            continue
        legend = md_legend(text)
        if not legend:
            failures.append(f"{name}: no Legend")
            continue
        failures += cell_failures(name, text, legend)
        if n == 0:
            page = golden_cli.run_report(a.triage, path, name, failures.append, "--format", "html")
            failures += html_failures(name, legend, page or "")
        n += 1
    return golden_cli.finish(n, failures)


if __name__ == "__main__":
    sys.exit(main())
