"""Text from data, file names or users, made safe to put in a Markdown or HTML pane.

Panel's Markdown panes render raw HTML, so a data value ``<img src=x onerror=...>`` or a file named
so would run in the viewer's browser (stored XSS). Every such text goes through ``shown``
before it reaches a pane: HTML is escaped and Markdown punctuation is backslash-escaped, so the
value reads exactly as it is in the data (``9413*`` stays ``9413*``, not an emphasis).
"""

from __future__ import annotations

import html

MARKDOWN_PUNCTUATION = "\\`*_{}[]()#+-.!|~"
HTML_SPECIAL = "<>&\"'"


def shown(value: object) -> str:
    """``value`` as literal text inside Markdown (HTML escaped, Markdown punctuation escaped)."""
    # One pass, character by character: an entity made for <, >, &, " or ' must not get its own
    # "#" backslash-escaped (Markdown would then show "&#x27;" literally).
    return "".join(html.escape(ch, quote=True) if ch in HTML_SPECIAL
                   else "\\" + ch if ch in MARKDOWN_PUNCTUATION else ch for ch in str(value))


def shown_html(value: object) -> str:
    """``value`` as literal text inside HTML (not Markdown): HTML escaped only."""
    return html.escape(str(value), quote=True)


def tabulator_titles(frame) -> dict[str, str]:
    """Column titles of ``frame`` for a Tabulator, which renders a title as HTML (empty without a frame)."""
    return {} if frame is None else {c: shown_html(c) for c in frame.columns}


def plural(n: int, word: str, many: str | None = None, *, spec: str = "") -> str:
    """``n`` and ``word``, in the plural unless ``n`` is 1 (``spec``: the format of ``n``): plural(1, "row")
    -> '1 row', plural(4092, "row", spec=",") -> '4,092 rows', plural(2, "class", "classes") -> '2 classes'."""
    return f"{n:{spec}} {word if n == 1 else many or word + 's'}"
