"""What the crawl history keeps of render=auto's probes of script sets (render/known.py): its rules."""

from __future__ import annotations

from sitemap_spider.render.known import TRUSTED_DAYS, ScriptSetKnowledge, script_digest

DAY = 86_400.0
MENU, SEARCH = "https://site.test/js/menu.js", "https://site.test/js/search.js"
SET = (MENU, SEARCH)
READ = {MENU: script_digest(b"menu v1"), SEARCH: script_digest(b"search v1")}


def _learnt(gained: bool = False, now: float = 1_000 * DAY) -> str | None:
    knowledge = ScriptSetKnowledge(None, now=now)
    knowledge.learn(SET, gained, READ)
    return knowledge.dumps(READ)


def test_a_probe_that_found_nothing_is_trusted_by_the_next_crawl_while_the_files_are_the_same() -> None:
    stored = _learnt()
    later = ScriptSetKnowledge(stored, now=1_001 * DAY)
    assert later.found_nothing_before(SET, READ)
    assert not later.found_nothing_before((MENU,), READ)  # another set: not probed
    changed = {**READ, SEARCH: script_digest(b"search v2")}
    assert not later.found_nothing_before(SET, changed)
    assert not later.found_nothing_before(SET, {MENU: READ[MENU]})  # a file not read this crawl
    # A changed file drops the set for the crawl after; a crawl that read no file keeps it as it was.
    assert later.dumps(changed) is None
    assert later.dumps({}) == stored


def test_a_probe_that_found_something_is_never_kept() -> None:
    assert _learnt(gained=True) is None
    knowledge = ScriptSetKnowledge(_learnt(), now=1_001 * DAY)
    knowledge.learn(SET, True, READ)  # this crawl's probe of the set found a link
    assert not knowledge.found_nothing_before(SET, READ)
    assert knowledge.dumps(READ) is None
    knowledge.learn(SET, False, READ)  # a later probe finding nothing does not bring it back
    assert knowledge.dumps(READ) is None


def test_a_probe_is_trusted_for_a_week_then_made_again() -> None:
    stored = _learnt(now=1_000 * DAY)
    assert ScriptSetKnowledge(stored, now=(1_000 + TRUSTED_DAYS - 0.1) * DAY).found_nothing_before(SET, READ)
    stale = ScriptSetKnowledge(stored, now=(1_000 + TRUSTED_DAYS + 0.1) * DAY)
    assert not stale.found_nothing_before(SET, READ)
    assert stale.dumps(READ) is None
    # Probed again: trusted from then on.
    stale.learn(SET, False, READ)
    assert ScriptSetKnowledge(stale.dumps(READ), now=(1_008 * DAY)).found_nothing_before(SET, READ)


def test_what_another_version_wrote_is_learnt_again() -> None:
    for stored in ("not json", "{}", '[{"scripts": ["a"]}]', '[{"scripts": ["a"], "digests": [], "probed": 1}]', "[3]"):
        knowledge = ScriptSetKnowledge(stored, now=1.0)
        assert not knowledge.found_nothing_before(("a",), {"a": "x"})
        assert knowledge.dumps({"a": "x"}) is None
