#!/usr/bin/env python3
"""Writes the user guide's "Reproducing the papers" summary from the committed reports.

For each scenarios/reproduce/PAPER/report.md (ofan, pgft, opera, ... in that order when
present), the paper's title, its counts line and its per-figure table are copied between the
`<!-- reproduce-summary:start -->` and `<!-- reproduce-summary:end -->` markers of the guide's
chapter docs/guide/src/reproducing.md (an mdBook page: links to the reports are relative to
that page), followed by the text of scenarios/reproduce/summary_notes.md if it exists. (The
name is historical: the summary used to live in README.md.) Run from anywhere:

    python3 scenarios/reproduce/readme_summary.py
"""
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
ORDER = ["ofan", "psp", "opera", "pgft"]
TARGET = ROOT / "docs" / "guide" / "src" / "reproducing.md"
START, END = "<!-- reproduce-summary:start -->", "<!-- reproduce-summary:end -->"


def section(paper: str, report: pathlib.Path) -> str:
    text = report.read_text()
    commit = re.search(r"at weft commit ([0-9a-f]+)", text)
    size = re.search(r"^# weft reproduce, size (\w+)", text, re.M)
    title = re.search(r"^## (.+) \(" + re.escape(paper) + r"\)$", text, re.M)
    if not (commit and title and size):
        sys.exit(f"{report}: not a weft reproduce report (no commit or paper heading)")
    body = text[title.end():]
    counts = next(l for l in body.splitlines() if l.strip())
    table = []
    for line in body.splitlines()[body.splitlines().index(counts) + 1:]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    rel = report.relative_to(ROOT)
    link = pathlib.Path(os.path.relpath(report, TARGET.parent)).as_posix()
    head = (
        f"**{title.group(1)}** (`weft reproduce {paper} --size {size.group(1)}`, report in "
        f"[`{rel}`]({link}), evaluated at commit {commit.group(1)}): {counts}"
    )
    return head + "\n\n" + "\n".join(table) + "\n"


def main() -> None:
    reports = ROOT / "scenarios" / "reproduce"
    papers = [p for p in ORDER if (reports / p / "report.md").exists()]
    parts = [section(p, reports / p / "report.md") for p in papers]
    notes = reports / "summary_notes.md"
    if notes.exists():
        parts.append(notes.read_text())
    text = TARGET.read_text()
    if START not in text or END not in text:
        sys.exit(f"{TARGET}: the summary markers {START} and {END} are missing")
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    TARGET.write_text(before + START + "\n" + "\n".join(parts) + END + after)
    print(f"{TARGET.relative_to(ROOT)}: summary of {', '.join(papers)}")


if __name__ == "__main__":
    main()
