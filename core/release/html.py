"""A small, safe HTML builder for release reports: escaping, tables, inline SVG and the page.

Every value is escaped unless it is ``Safe``, and only the builders here make ``Safe`` text,
so a value from the data (a column name, a level label, a file name) can never become markup. The
page is one self-contained file: inline CSS (with a print layout), inline SVG, no script, and a
Content-Security-Policy that forbids every request, should anything slip through.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence

# Nothing may be fetched: no script, no font, no image but inline data, no form target.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'"

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1a1a1a;margin:2rem auto;max-width:60rem;
padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;border-bottom:1px solid #ccc;margin-top:2rem}
.sub{color:#555;margin-top:0}table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.num{text-align:right;font-variant-numeric:tabular-nums}.pass{color:#1b7a1b}.fail{color:#b00020;font-weight:bold}
.note{background:#fff7e0;border-left:4px solid #e0a800;padding:.4rem .8rem}code{font-size:.9em}
svg{display:block;max-width:100%;height:auto}svg text{font:12px system-ui,sans-serif;fill:#333}
.bar{fill:#3b6ea5}.level{fill:#e8e8e8;stroke:#999}.level.on{fill:#3b6ea5;stroke:#1d3d5e}
@media print{body{margin:0;max-width:none;font-size:11pt}h2{break-after:avoid}
table,svg{break-inside:avoid}}
"""


VOID = {"meta", "br", "hr"}  # elements without a closing tag


class Safe(str):
    """Markup made by this module's builders: inserted as is."""


def esc(value: object) -> Safe:
    """``value`` as text: escaped (quotes too), numbers written for a reader, None as a dash."""
    if isinstance(value, Safe):
        return value
    return Safe(html.escape(number(value) if isinstance(value, float | int) else
                            "—" if value is None else str(value), quote=True))


def number(value: float | int | bool) -> str:
    """A figure as a person reads it: integers with thousands separators, floats to 4 significant digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.0f}" if value == int(value) and abs(value) < 1e15 else f"{value:.4g}"


def tag(name: str, /, *children: object, **attrs: object) -> Safe:
    """``<name attrs>children</name>``; attribute names use ``_`` for ``-`` (``data_size`` -> data-size),
    a trailing ``_`` is dropped (``class_``); an attribute set to None is left out."""
    parts = [name]
    for key, value in attrs.items():
        if value is not None:  # numbers as written (a coordinate or a count, no thousands separator)
            text = str(value) if isinstance(value, int | float) else value
            parts.append(f'{key.rstrip("_").replace("_", "-")}="{esc(text)}"')
    opening = f"<{' '.join(parts)}>"
    return Safe(opening if name in VOID else f"{opening}{''.join(esc(c) for c in children)}</{name}>")


def join(items: Iterable[object], sep: str = "") -> Safe:
    return Safe(esc(sep).join(esc(i) for i in items))


def cell(value: object) -> Safe:
    return tag("td", value, class_="num" if isinstance(value, int | float) and not isinstance(value, bool) else None)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], **attrs: object) -> Safe:
    head = tag("tr", join(tag("th", h, scope="col") for h in headers))
    body = join(tag("tr", join(cell(v) for v in row)) for row in rows)
    return tag("table", tag("thead", head), tag("tbody", body), **attrs)


def pairs(rows: Mapping[str, object] | Iterable[tuple[str, object]], **attrs: object) -> Safe:
    """A two-column table: a label (row header) and its value."""
    items = rows.items() if isinstance(rows, Mapping) else rows
    return tag("table", tag("tbody", join(tag("tr", tag("th", k, scope="row"), cell(v)) for k, v in items)), **attrs)


def section(id_: str, heading: str, *body: object) -> Safe:
    return tag("section", tag("h2", heading), *body, id=id_)


def histogram_svg(bars: Sequence[tuple[int, int]], *, width: int = 720, height: int = 220) -> Safe:
    """Bars of (class size, number of classes), one per size present, in size order. Each bar carries
    its figures (``data-size``, ``data-count``) and a tooltip title."""
    if not bars:
        return tag("p", "No class was released.")
    left, bottom, top = 48, 34, 10
    top_count = max(c for _, c in bars)
    slot = min((width - left - 8) / len(bars), 60)  # a few sizes: bars of a readable width, not a wall
    drawn = []
    for i, (size, count) in enumerate(bars):
        h = (height - bottom - top) * count / top_count
        x = left + i * slot
        label = f"{count} class{'es' if count != 1 else ''} of {size} row{'s' if size != 1 else ''}"
        drawn.append(tag("rect", tag("title", label), class_="bar", x=f"{x + slot * .1:.1f}", y=f"{height - bottom - h:.1f}",
                         width=f"{max(slot * .8, 1):.1f}", height=f"{h:.1f}", data_size=size, data_count=count))
        if len(bars) <= 30 or i % math.ceil(len(bars) / 30) == 0:
            drawn.append(tag("text", size, x=f"{x + slot / 2:.1f}", y=height - bottom + 14, text_anchor="middle"))
    axes = [tag("text", top_count, x=left - 6, y=top + 10, text_anchor="end"),
            tag("text", 0, x=left - 6, y=height - bottom, text_anchor="end"),
            tag("text", "class size (rows)", x=f"{left + slot * len(bars) / 2:.1f}", y=height - 4, text_anchor="middle"),
            tag("line", x1=left, y1=height - bottom, x2=width - 8, y2=height - bottom, stroke="#999")]
    return tag("svg", tag("title", "Number of equivalence classes by class size"), join(drawn), join(axes),
               viewBox=f"0 0 {width} {height}", role="img",
               class_="histogram", width=width, height=height)


def levels_svg(rows: Sequence[tuple[str, int, int, str]], *, width: int = 720) -> Safe:
    """One line per QI: its levels 0..h as boxes, the released level filled, named on the right.
    ``rows``: (QI, level, height, level name)."""
    line, box, left = 30, 22, 150
    most = max((h for _, _, h, _ in rows), default=0) + 1
    step = min(40, (width - left - 230) / most)
    drawn = []
    for r, (qi, level, height, name) in enumerate(rows):
        y = 8 + r * line
        drawn.append(tag("text", qi, x=left - 10, y=y + 15, text_anchor="end"))
        for d in range(height + 1):
            drawn.append(tag("rect", tag("title", f"{qi}: level {d} of {height}"), class_="level on" if d == level else "level",
                             x=f"{left + d * step:.1f}", y=y, width=f"{step - 4:.1f}", height=box))
        drawn.append(tag("text", f"{level}/{height}: {name}", x=f"{left + most * step + 6:.1f}", y=y + 15))
    total = 16 + len(rows) * line
    return tag("svg", tag("title", "The released level of each quasi-identifier"), join(drawn),
               viewBox=f"0 0 {width} {total}", role="img", class_="levels",
               width=width, height=total)


def height_svg(height: int, max_height: int, *, width: int = 720) -> Safe:
    """The node's height on the scale bottom (original table, 0) .. top (fully generalized, H)."""
    left, right, y = 20, width - 20, 30
    x = left + (right - left) * (height / max_height if max_height else 0)
    return tag("svg", tag("title", f"Height {height} of {max_height}"),
               tag("line", x1=left, y1=y, x2=right, y2=y, stroke="#999", stroke_width=4),
               tag("circle", cx=f"{x:.1f}", cy=y, r=8, class_="bar"),
               tag("text", "0: original", x=left, y=y + 24), tag("text", f"{max_height}: fully generalized", x=right,
                                                                y=y + 24, text_anchor="end"),
               tag("text", f"height {height}", x=f"{x:.1f}", y=y - 14, text_anchor="middle"),
               viewBox=f"0 0 {width} 64", role="img", class_="height",
               width=width, height=64)


def page(title: str, subtitle: object, sections: Iterable[Safe]) -> str:
    """The whole document."""
    head = join([tag("meta", charset="utf-8"), tag("meta", name="viewport", content="width=device-width, initial-scale=1"),
                 tag("meta", http_equiv="Content-Security-Policy", content=CSP), tag("title", title),
                 tag("style", Safe(STYLE))])
    body = join([tag("header", tag("h1", title), tag("p", subtitle, class_="sub")), *sections])
    return "<!DOCTYPE html>\n" + tag("html", tag("head", head), tag("body", body), lang="en") + "\n"
