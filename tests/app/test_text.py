"""Text from data reads exactly as it is once rendered as Markdown, and never becomes markup."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from microrelease.app.text import shown, shown_html


class Visible(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def rendered(markdown: str) -> Visible:
    page = Visible()
    page.feed(MarkdownIt("gfm-like").render(markdown))
    return page


TRICKY = ["<img src=x onerror=alert(1)>", "O'Brien", "9413*", "a_b_c", "[x](javascript:y)", "# title", "1. item",
          "&amp; &lt;", "\\*", "| a | b |", "`code`", "~~gone~~", '"quoted"', "<script>alert(1)</script>", "- item"]


def test_tricky_values_read_as_themselves_and_add_no_tag():
    for value in TRICKY:
        page = rendered(f"value {shown(value)} end")
        assert "".join(page.text).strip() == f"value {value} end", value
        assert page.tags == ["p"], (value, page.tags)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40))
def test_any_single_line_reads_as_itself(value):
    page = rendered(f"x {shown(value)} y")
    assert " ".join("".join(page.text).split()) == " ".join(f"x {value} y".split())
    assert set(page.tags) <= {"p"}


def test_shown_html_escapes_markup():
    assert shown_html("<b a='1'>&") == "&lt;b a=&#x27;1&#x27;&gt;&amp;"
