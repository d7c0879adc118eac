"""The manual in docs/: it builds with warnings as errors (nitpicky, so every :doc:, :ref:, {setting}
and Markdown link between pages must resolve), its settings reference holds every setting of
default_settings.py, and the README's relative links name files that exist."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import lxml.html
import pytest
from scrapy.utils.misc import load_object

import sitemap_spider.default_settings as default_settings
from tests.crawl_fixtures import REPO_ROOT

DOCS = REPO_ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import settings_reference  # noqa: E402

SETTINGS = [name for name in vars(default_settings) if name.startswith("SITEMAP_")]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The manual built as Sphinx is told in the README, into a fresh directory."""
    out = tmp_path_factory.mktemp("docs") / "html"
    args = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html", str(DOCS), str(out)]
    done = subprocess.run(args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr and "ERROR" not in done.stderr, done.stderr
    return out


def test_every_page_is_built(built: Path) -> None:
    pages = {path.stem for path in DOCS.glob("*.md")}
    assert {"index", "settings", "crawling", "dependencies"} <= pages
    assert {path.stem for path in built.glob("*.html")} >= pages


def test_every_sitemap_setting_is_in_the_built_reference(built: Path) -> None:
    tree = lxml.html.parse(str(built / "settings.html"))
    missing, undescribed = [], []
    for name in SETTINGS:
        found = tree.xpath(f'//section[@id="setting-{name.lower().replace("_", "-")}"]')
        if not found:
            missing.append(name)
            continue
        text = found[0].text_content()
        if name not in text or "Default:" not in text or len(text) < len(name) + 60:
            undescribed.append(name)
    assert SETTINGS and not missing and not undescribed, (missing, undescribed)


def test_the_reference_reads_each_default_as_the_code_has_it() -> None:
    read = {s.name: s for section in settings_reference.read_sections() for s in section.settings}
    assert set(SETTINGS) <= set(read)
    for name, setting in read.items():
        value = getattr(default_settings, name)
        try:
            assert ast.literal_eval(setting.default) == value, name
        except (ValueError, SyntaxError):  # an expression: the reference shows "source = value"
            assert setting.default.endswith(f"= {value!r}"), (name, setting.default)
    # Every SITEMAP_ setting has a comment block, and a shared block is shared by neighbours only.
    assert not [name for name in SETTINGS if not read[name].description]
    assert read["SITEMAP_MAX_BYTES"].description == read["SITEMAP_MAX_URLS"].description
    assert read["SITEMAP_GZIP"].description != read["SITEMAP_MAX_BYTES"].description
    assert read["DOWNLOAD_TIMEOUT"].default == "30"


def test_the_accepted_ranges_are_the_start_up_checks() -> None:
    ranges = settings_reference.accepted_ranges()
    assert ranges["SITEMAP_MAX_URLS"] == "1 to 50,000"
    assert ranges["SITEMAP_MAX_BYTES"] == "4,096 to 52,428,800"
    assert ranges["SITEMAP_REDIS_IDLE_SECONDS"] == "0.1 to 3,600"
    assert set(ranges) <= set(SETTINGS)


def test_the_readme_links_name_files_that_exist() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [target for target in targets if "://" not in target]
    assert len(local) > 10, local
    assert not [target for target in local if not (REPO_ROOT / target).is_file()]


def test_the_readme_stays_short() -> None:
    assert len((REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def _manual_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in [REPO_ROOT / "README.md", *DOCS.glob("*.md")])


def test_the_files_the_manual_names_exist() -> None:
    named = set(re.findall(r"\b(?:sitemap_spider|tests|bench)/[\w/.-]+\.(?:py|xsd|md|json)\b", _manual_text()))
    assert len(named) > 10, named
    assert not sorted(path for path in named if not (REPO_ROOT / path).exists())


def test_the_python_names_the_manual_gives_resolve() -> None:
    """Dotted names a user copies into settings (ADDONS, FEED_EXPORTERS, ...) import as written."""
    named = set(re.findall(r"\bsitemap_spider(?:\.\w+)+", _manual_text()))
    assert "sitemap_spider.Addon" in named
    unresolved = []
    for dotted in sorted(named):
        try:
            load_object(dotted)
        except (ImportError, NameError, ValueError):
            try:
                importlib.import_module(dotted)
            except ImportError:
                unresolved.append(dotted)
    assert not unresolved


def test_every_requirement_says_why_it_is_here() -> None:
    page = (DOCS / "dependencies.md").read_text(encoding="utf-8")
    explained = set(re.findall(r"^\|([^|]+)\|", page, re.MULTILINE))
    names = {name for cell in explained for name in re.findall(r"`([\w.-]+)", cell)}
    required = {
        re.split(r"[<>=!~\[ ;]", line.strip(), maxsplit=1)[0].lower()
        for path in ("requirements.txt", "requirements-test.txt")
        for line in (REPO_ROOT / path).read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "-"))
    }
    assert len(required) > 15, required
    assert not sorted(required - {name.lower() for name in names})
