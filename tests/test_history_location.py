"""history/location.py: where the crawl history lives, and what is refused.

XDG_DATA_HOME is this test's own folder (the autouse private_data_home fixture).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sitemap_spider.history.location import HistoryLocation, default_dir, old_default_file
from tests.crawl_fixtures import REPO_ROOT

ORIGIN = "http://127.0.0.1:8000"


@pytest.mark.parametrize("value", ["off", "OFF", "", "  ", "none", "false", "0"])
def test_off_words_turn_the_history_off(value: str) -> None:
    location = HistoryLocation.from_value(value)
    assert not location.enabled and location.file_for(ORIGIN) is None


def test_the_default_is_one_file_per_origin_in_the_user_data_directory(
    tmp_path: Path, private_data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = HistoryLocation.from_value(None)
    assert location.is_default
    one, two = location.file_for(ORIGIN), location.file_for("https://www.example.com")
    assert one is not None and two is not None and one != two
    assert one == private_data_home / "sitemap_spider" / "sitemap-history" / "http_127.0.0.1_8000.sqlite"
    assert two.parent == one.parent == default_dir()
    # Wherever the crawl is started (a shell in the project, cron in /, Scrapyd's job directory).
    monkeypatch.chdir(tmp_path)
    assert location.file_for(ORIGIN) == one


def test_the_default_is_taken_under_scrapyd(tmp_path: Path) -> None:
    location = HistoryLocation.from_value(None)
    assert location.problem(ORIGIN, tmp_path / "out", scrapyd=False) is None
    assert location.problem(ORIGIN, tmp_path / "out", scrapyd=True) is None


def test_a_relative_history_is_refused_under_scrapyd_only(tmp_path: Path) -> None:
    relative = HistoryLocation.from_value("history.sqlite")
    assert relative.path is not None and relative.path.is_absolute()
    assert relative.problem(ORIGIN, tmp_path / "out", scrapyd=False) is None
    assert "absolute" in (relative.problem(ORIGIN, tmp_path / "out", scrapyd=True) or "")
    absolute = HistoryLocation.from_value(str(tmp_path / "history.sqlite"))
    assert absolute.problem(ORIGIN, tmp_path / "out", scrapyd=True) is None


def test_the_history_never_lives_in_the_output_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inside = HistoryLocation.from_value(str(tmp_path / "out" / "history.sqlite"))
    assert "SITEMAP_OUTPUT_DIR" in (inside.problem(ORIGIN, tmp_path / "out", scrapyd=False) or "")
    # Nor does the default, whatever the data directory is.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "out" / "data"))
    default = HistoryLocation.from_value(None)
    assert "SITEMAP_OUTPUT_DIR" in (default.problem(ORIGIN, tmp_path / "out", scrapyd=True) or "")


def test_a_place_that_cannot_be_created_is_named_at_start_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file where the data directory should be (tests run as root: a read-only folder would not do).
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    problem = HistoryLocation.from_value(None).problem(ORIGIN, tmp_path / "out", scrapyd=True)
    assert problem is not None and f"{blocker} is not a directory" in problem and "XDG_DATA_HOME" in problem
    given = HistoryLocation.from_value(str(blocker / "history.sqlite"))
    assert f"{blocker} is not a directory" in (given.problem(ORIGIN, tmp_path / "out", scrapyd=False) or "")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="a Linux /proc")
def test_a_place_that_passes_permission_checks_but_takes_no_file_is_named(tmp_path: Path) -> None:
    # /proc lets root (and its mode bits, anyone) write, but no file can be made in it.
    given = HistoryLocation.from_value("/proc/sitemap-spider-test/history.sqlite")
    problem = given.problem(ORIGIN, tmp_path / "out", scrapyd=False)
    # "No such file or directory" as root, "Permission denied" otherwise.
    assert (problem or "").startswith(
        "/proc/sitemap-spider-test/history.sqlite cannot be created: "
        "creating /proc/sitemap-spider-test failed: "
    ), problem


def test_the_check_leaves_no_default_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert HistoryLocation.from_value(None).problem(ORIGIN, tmp_path / "out", scrapyd=True) is None
    assert not (tmp_path / "data").exists()


def test_the_old_default_was_in_the_project_data_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE", raising=False)
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "scrapy.cfg").write_text((REPO_ROOT / "scrapy.cfg").read_text())
    monkeypatch.chdir(project / "sub")  # Scrapy finds the project from a folder inside it too
    expected = project / ".scrapy" / "sitemap-history" / "http_127.0.0.1_8000.sqlite"
    assert old_default_file(ORIGIN) == expected.resolve()
    assert not (project / ".scrapy").exists(), "looking for the old file made the project's data directory"


def test_there_is_no_old_default_without_a_project_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Scrapyd's way: the settings module named, no scrapy.cfg in the job's directory.
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "sitemap_spider.settings")
    monkeypatch.chdir(tmp_path)
    assert old_default_file(ORIGIN) is None
