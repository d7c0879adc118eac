"""An entry as it crosses processes (sitemaps/entry_form.py): the row and its JSON text give it back."""

from __future__ import annotations

import pytest

from sitemap_spider.sitemaps.entry import Alternate, News, PageSummary, RichEntry, SitemapEntry, SummarizedEntry, Video
from sitemap_spider.sitemaps.entry_form import (
    ROW_COLUMNS,
    candidate_from_json,
    entry_from_json,
    entry_of_row,
    entry_row,
    entry_to_json,
)

ENTRIES = [
    SitemapEntry("https://example.com/"),
    SitemapEntry("https://example.com/a?x=1&y=2", "2024-05-01T10:20:30+02:00", "daily", 0.5, "digest"),
    SitemapEntry("https://example.com/ü", priority=0.1 + 0.2),  # a float must come back as it was
    RichEntry(
        "https://example.com/rich",
        "2024-05-01",
        alternates=(Alternate("fr", "https://example.com/fr"),),
        images=("https://example.com/a.png",),
        videos=(Video("https://example.com/t.jpg", "A title", "A – description", content_loc="https://example.com/v.mp4"),),
        news=News("The Daily", "en", "2024-05-01T10:00:00Z", "Title"),
    ),
    # llms.txt's summary (SITEMAP_LLMS_TXT), alone and with extensions: it crosses processes too.
    SummarizedEntry("https://example.com/p", page=PageSummary("A \"title\"", "Its description", "Site")),
    SummarizedEntry("https://example.com/q", images=("https://example.com/b.png",), page=PageSummary("", "")),
]


def test_an_entry_without_a_summary_keeps_the_row_it_had() -> None:
    rich = ENTRIES[3]
    assert type(rich) is RichEntry
    assert '"page"' not in (entry_row(rich)[5] or "")


@pytest.mark.parametrize("entry", ENTRIES)
def test_an_entry_comes_back_from_its_row_and_its_json(entry: SitemapEntry) -> None:
    row = entry_row(entry)
    assert len(row) == len(ROW_COLUMNS)
    assert entry_of_row(row) == entry
    assert entry_from_json(entry_to_json(entry)) == entry
    assert entry_from_json(entry_to_json(entry).encode()) == entry  # as Redis gives it back
    assert type(entry_from_json(entry_to_json(entry))) is type(entry)


def test_only_an_entry_with_a_summary_exports_a_page_field() -> None:
    """A feed (``-o entries.jl``) of rich entries keeps its columns; llms.txt's summary is a field
    of SummarizedEntry only."""
    from itemadapter import ItemAdapter

    assert "page" not in ItemAdapter(ENTRIES[3]).field_names()
    assert "page" in ItemAdapter(ENTRIES[4]).field_names()


@pytest.mark.parametrize("entry", ENTRIES)
def test_an_entry_waiting_on_its_canonical_url_keeps_it_across_processes(entry: SitemapEntry) -> None:
    """A page that names another URL as canonical waits on it (crawl/canonicals.py): its JSON text
    carries the URL; read as a plain entry, the text gives the entry alone."""
    text = entry_to_json(entry, "https://example.com/canonical")
    assert candidate_from_json(text) == (entry, "https://example.com/canonical")
    assert entry_from_json(text) == entry
    assert candidate_from_json(entry_to_json(entry)) == (entry, None)
