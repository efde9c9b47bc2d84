"""The documentation's text, for the tests that check what it says: the README and the pages of docs/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

RUN_BY = re.compile(r"<!-- run by (tests/[\w/]+\.py)::(\w+) -->")
NOT_RUN = "<!-- not run -->"


def readme() -> str:
    return (ROOT / "README.md").read_text()


def page(name: str) -> str:
    """The Markdown of ``docs/<name>`` (``page("how-to/risk-and-k-map.md")``)."""
    return (DOCS / name).read_text()


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def section(text: str, heading: str) -> str:
    """The text under ``heading`` (a whole ``#…`` line), up to the next heading of that level or above (a
    ``#`` line inside a fenced code block is code, not a heading)."""
    level = len(heading.split(" ")[0])
    lines = text[text.index(f"\n{heading}\n") + 1:].splitlines(keepends=True)
    fenced = False
    for i, line in enumerate(lines[1:], start=1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#") and len(line.split(" ")[0]) <= level and set(line.split(" ")[0]) == {"#"}:
            return "".join(lines[:i])
    return "".join(lines)


def python_blocks(text: str) -> list[tuple[str, str]]:
    """Each ```python block of ``text`` as (the line before it, its code)."""
    found = []
    for match in re.finditer(r"```python\n(.*?)```", text, re.S):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        found.append((before, match.group(1)))
    return found
