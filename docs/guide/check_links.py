#!/usr/bin/env python3
"""Checks the relative links of the user guide's pages and of README.md.

Every `[text](target)` outside code blocks whose target has no scheme must name a file that
exists, relative to the page; an `#anchor` into a guide page must be one of its headings'
ids (as mdBook makes them) or an explicit `<a id="...">`. Exits 1 naming each broken link.
Run from anywhere: python3 docs/guide/check_links.py
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "docs" / "guide" / "src"


def ids(text: str) -> set:
    out = set(re.findall(r'<a id="([^"]+)"', text))
    for heading in re.findall(r"^#+ (.+)$", strip_code(text), re.M):
        out.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return out


def strip_code(text: str) -> str:
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def main() -> None:
    bad = []
    pages = sorted(SRC.glob("*.md")) + [ROOT / "README.md"]
    for page in pages:
        for m in re.finditer(r"\]\(([^)\s]+)\)", strip_code(page.read_text())):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            f = (page.parent / path).resolve() if path else page
            name = page.relative_to(ROOT)
            if not f.exists():
                bad.append(f"{name}: {target}: no such file")
            elif anchor and f.suffix == ".md" and f.parent == SRC and anchor not in ids(f.read_text()):
                bad.append(f"{name}: {target}: no such anchor")
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"links: {len(pages)} pages checked, no broken link")


if __name__ == "__main__":
    main()
