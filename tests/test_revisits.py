"""Which pages the history knows a recrawl fetches whole for their render decision (render/revisits.py)."""

from __future__ import annotations

from sitemap_spider.history.record import RENDER_UNDECIDED
from sitemap_spider.render.revisits import Revisits, history_mark, script_set_key

MENU = script_set_key(("https://site.test/js/menu.js",))
TREE = script_set_key(("https://site.test/js/menu.js", "https://site.test/js/tree.js"))


def test_a_record_keeps_what_the_render_decision_depended_on() -> None:
    assert history_mark(True, False, None) is None  # the static HTML decided alone
    assert history_mark(True, True, None) == "browser"
    assert history_mark(True, False, MENU) == MENU
    assert history_mark(True, True, MENU) == f"browser {MENU}"
    # A crawl that cannot render decides nothing: the next one that renders reads the page whole.
    assert history_mark(False, True, MENU) == RENDER_UNDECIDED
    assert MENU != TREE and script_set_key(("https://site.test/js/menu.js",)) == MENU


def test_one_page_of_each_script_set_and_every_rendered_page_are_fetched_whole() -> None:
    revisits = Revisits()
    assert revisits.why(None) is None
    assert revisits.why(MENU) == "scripts"  # the first page of the set
    assert revisits.why(MENU) is None  # the others answer 304
    assert revisits.why(TREE) == "scripts"  # another set
    assert revisits.why(f"browser {MENU}") == "rendered"  # in every crawl
    assert revisits.why("browser") == "rendered"
    assert revisits.why(RENDER_UNDECIDED) == "undecided"


def test_a_rendered_page_claims_its_script_set() -> None:
    revisits = Revisits()
    assert revisits.why(f"browser {MENU}") == "rendered"
    assert revisits.why(MENU) is None  # the rendered page read the set's scripts again already
