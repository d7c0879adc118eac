"""The wheel, installed into a fresh virtualenv, gives another Scrapy project the add-on and the commands.

The wheel is built (``pip wheel``, setuptools from pyproject.toml) from a copy of only what
the build reads, and installed into a new virtualenv with ``pip --no-index``. Its
dependencies are the ones this interpreter has (requirements.txt's pins), shown to the
virtualenv through a ``.pth`` file, minus the optional extras' distributions
(scrapy-playwright, playwright, scrapy-redis, redis): the install is the one
``pip install sitemap_spider`` gives, and ``--no-index`` fails if a declared bound excludes a
pinned version. Installing the dependencies from the index as well took 60 to 86 s here
(2 busy cores), most of it fetching index pages; building and installing this way takes
about 25 s, and the whole module about 50 s.

A separate project in a temporary directory names the add-on in ADDONS; its spider crawls a
local site and the add-on publishes the set into the site. Then ``scrapy publish``,
``scrapy validate`` and ``scrapy audit`` run from the project and from a directory that is
no project, found through the wheel's ``scrapy.commands`` entry points.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Final

import pytest

from tests.sitemap_check import read_sitemap_set

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
#: What the build reads: the package, its configuration and the README (the long description).
BUILD_INPUTS: Final = ("pyproject.toml", "setup.py", "README.md", "sitemap_spider")
#: The distributions of the optional extras ([render], [redis]), kept out of the virtualenv.
EXTRAS: Final = ("scrapy-playwright", "playwright", "scrapy-redis", "redis")
PAGES: Final = 12
#: Environment variables that would let the checkout or this project reach the subprocesses.
LEAKY: Final = ("PYTHONPATH", "SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "PYTHONHOME")

SETTINGS: Final = """
BOT_NAME = "shop"
SPIDER_MODULES = ["shop.spiders"]
ADDONS = {"sitemap_spider.Addon": 0}
ROBOTSTXT_OBEY = True
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"
"""

SPIDER: Final = """
import scrapy


class Pages(scrapy.Spider):
    name = "pages"

    def __init__(self, start="", **kwargs):
        super().__init__(**kwargs)
        self.start_url = start

    async def start(self):
        yield scrapy.Request(self.start_url)

    def parse(self, response):
        yield {"url": response.url, "lastmod": "2024-05-01"}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href)
"""


@dataclass(frozen=True)
class Installed:
    """A virtualenv with the wheel installed, and the environment to run it in."""

    python: Path
    env: dict[str, str]

    def scrapy(self, cwd: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), "-m", "scrapy", *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def build_wheel(destination: Path, work: Path) -> Path:
    """``pip wheel`` of a copy of the build's inputs (an in-tree build leaves build/ behind)."""
    source = work / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        origin = REPO_ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(origin, source / name)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(destination), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"pip wheel: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    wheels = list(destination.glob("sitemap_spider-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def site_packages_dirs() -> list[Path]:
    """Where this interpreter's distributions are installed."""
    return list(dict.fromkeys(Path(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")))


def dependencies_without_extras(where: Path) -> Path:
    """A directory of links to this interpreter's site-packages, without the extras' distributions."""
    # An editable install of this checkout would make the package importable without the wheel.
    hidden = {
        entry.name
        for folder in site_packages_dirs()
        for entry in folder.iterdir()
        if "sitemap_spider" in entry.name
    }
    for name in EXTRAS:
        files = importlib.metadata.distribution(name).files or []
        hidden |= {file.parts[0] for file in files if file.parts[0] != ".."}
    where.mkdir()
    for site_packages in site_packages_dirs():
        for entry in site_packages.iterdir():
            # .pth files are not read from a directory named in another .pth file; nothing of ours is here.
            if entry.name in hidden or entry.suffix == ".pth" or (where / entry.name).exists():
                continue
            (where / entry.name).symlink_to(entry)
    return where


def clean_env(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in LEAKY}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("build")
    return build_wheel(work / "dist", work)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    dependencies = dependencies_without_extras(work / "dependencies")
    Path(purelib, "dependencies.pth").write_text(f"{dependencies}\n", encoding="utf-8")
    env = clean_env(XDG_DATA_HOME=str(work / "data-home"))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", str(wheel)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"pip install: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return Installed(python, env)


@dataclass(frozen=True)
class Site:
    root: Path  # the directory served
    origin: str  # http://127.0.0.1:PORT


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """PAGES static pages in a chain from /, and a robots.txt naming the sitemap index the crawl publishes."""
    root = tmp_path_factory.mktemp("www")
    for n in range(PAGES):
        following = f'<a href="/p{n + 1}.html">next</a>' if n + 1 < PAGES else ""
        name = "index.html" if n == 0 else f"p{n}.html"
        (root / name).write_text(f"<html><head><title>Page {n}</title></head><body>{following}</body></html>")
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    )
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    (root / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {origin}/sitemap_index.xml\n")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(root, origin)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another Scrapy project: its own spider, and the add-on named in ADDONS."""
    where = tmp_path_factory.mktemp("project")
    (where / "shop" / "spiders").mkdir(parents=True)
    (where / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    (where / "shop" / "__init__.py").write_text("")
    (where / "shop" / "settings.py").write_text(SETTINGS)
    (where / "shop" / "spiders" / "__init__.py").write_text("")
    (where / "shop" / "spiders" / "pages.py").write_text(textwrap.dedent(SPIDER))
    return where


@pytest.fixture(scope="module")
def published(installed: Installed, project: Path, site: Site) -> subprocess.CompletedProcess[str]:
    """The project's crawl of the site, its set published into the site's root, as robots.txt says."""
    return installed.scrapy(
        project, "crawl", "pages", "-a", f"start={site.origin}/",
        "-s", f"SITEMAP_OUTPUT_DIR={site.root}", "-s", f"SITEMAP_BASE_URL={site.origin}/",
    )  # fmt: skip


def site_urls(site: Site) -> list[str]:
    return sorted([f"{site.origin}/"] + [f"{site.origin}/p{n}.html" for n in range(1, PAGES)])


def test_the_wheel_holds_every_file_of_the_package(wheel: Path) -> None:
    """Modules and data alike (XSDs, report assets, py.typed): all are read at run time."""
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {name for name in archive.namelist() if name.startswith("sitemap_spider/")}
    in_checkout = {
        path.relative_to(REPO_ROOT).as_posix()
        for path in (REPO_ROOT / "sitemap_spider").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert in_wheel == in_checkout
    assert {"sitemap_spider/schemas/sitemap.xsd", "sitemap_spider/report/assets/report.css"} <= in_wheel


#: Run in the virtualenv: where the package is, whether the extras are there, and what the
#: parts that need them do without them.
PROBE: Final = """
import importlib.util, json, sys, sitemap_spider
from scrapy.settings import Settings
from sitemap_spider import modes
from sitemap_spider.config import ConfigError
from sitemap_spider.crawl.start_up import check_start_up
from sitemap_spider.render.browser import find_browser
try:
    modes.mode_class(Settings({"SITEMAP_REDIS_URL": "redis://127.0.0.1:6379/0"}))
    shared = "chosen"
except ConfigError as exc:
    shared = str(exc)
settings = Settings()
settings.setmodule("sitemap_spider.default_settings")
settings.set("SITEMAP_BROWSER_PATH", sys.executable)  # an executable, but nothing can drive it
settings.set("SITEMAP_HISTORY", "off")
try:
    check_start_up(settings, {"url": "http://127.0.0.1:9/"})
    browser_path = "accepted"
except ConfigError as exc:
    browser_path = str(exc)
print(json.dumps({
    "package": sitemap_spider.__file__,
    "missing": [importlib.util.find_spec(name) is None for name in ("scrapy_playwright", "scrapy_redis")],
    "shared": shared,
    "browser": repr(find_browser(None)),
    "browser_path": browser_path,
}))
"""


def test_the_package_runs_from_the_virtualenv_without_the_extras(
    installed: Installed, tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(installed.python), "-c", PROBE],
        cwd=tmp_path,
        env=installed.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    venv = installed.python.parent.parent
    assert Path(found["package"]).is_relative_to(venv), f"sitemap_spider imported from {found['package']}"
    assert found["missing"] == [True, True]
    # A shared crawl is refused at start-up, naming the setting and the extra to install.
    assert found["shared"].startswith(
        "SITEMAP_REDIS_URL: needs scrapy-redis: pip install 'sitemap_spider[redis]'"
    )
    # No browser without scrapy-playwright, even where one is installed (CI installs Chromium);
    # a browser named by the setting is refused for that reason, not as a missing file.
    assert found["browser"] == "None"
    assert found["browser_path"].startswith("SITEMAP_BROWSER_PATH: names "), found["browser_path"]
    assert "needs scrapy-playwright, which is not installed" in found["browser_path"]
    assert "pip install 'sitemap_spider[render]'" in found["browser_path"]


def test_the_addon_publishes_the_other_projects_items(
    published: subprocess.CompletedProcess[str], site: Site
) -> None:
    assert published.returncode == 0, published.stderr[-3000:]
    urls = read_sitemap_set(site.root, f"{site.origin}/")
    assert [url["loc"] for url in urls] == site_urls(site)
    assert {url["lastmod"] for url in urls} == {"2024-05-01"}


@pytest.mark.parametrize("where", ["project", "nowhere"])
def test_the_commands_are_listed_in_a_project_and_outside_one(
    installed: Installed, project: Path, tmp_path: Path, where: str
) -> None:
    listing = installed.scrapy(project if where == "project" else tmp_path)
    assert listing.returncode == 0, listing.stderr[-3000:]
    expected = "active project: shop" if where == "project" else "no active project"
    assert listing.stdout.splitlines()[0].endswith(expected), listing.stdout
    for command in ("publish", "validate", "audit"):
        assert f"\n  {command} " in listing.stdout, listing.stdout


def test_scrapy_publish_in_the_other_project(
    installed: Installed, project: Path, site: Site, tmp_path: Path
) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(f"{url}\n" for url in site_urls(site)))
    output = tmp_path / "published"
    done = installed.scrapy(
        project,
        "publish",
        str(urls),
        "-s",
        f"SITEMAP_OUTPUT_DIR={output}",
        "-s",
        f"SITEMAP_BASE_URL={site.origin}/",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert [url["loc"] for url in read_sitemap_set(output, f"{site.origin}/")] == site_urls(site)


def test_scrapy_validate_outside_a_project(
    installed: Installed, published: subprocess.CompletedProcess[str], site: Site, tmp_path: Path
) -> None:
    assert published.returncode == 0, published.stderr[-3000:]
    # A site URL: the sitemaps are found through robots.txt's Sitemap: line.
    done = installed.scrapy(tmp_path, "validate", f"{site.origin}/", "--json")
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout)
    assert [(file["location"], file["kind"]) for file in report["files"]] == [
        (f"{site.origin}/sitemap_index.xml", "sitemapindex"),
        (f"{site.origin}/sitemap-00001.xml", "urlset"),
    ]
    assert report["findings"] == []
    assert report["summary"]["urls"] == PAGES


def test_scrapy_audit_outside_a_project(
    installed: Installed, published: subprocess.CompletedProcess[str], site: Site, tmp_path: Path
) -> None:
    assert published.returncode == 0, published.stderr[-3000:]
    done = installed.scrapy(tmp_path, "audit", f"{site.origin}/", "--json")
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout)
    crawl = report["summary"]["crawl"]
    # The crawl reached every listed page and found none the sitemaps leave out.
    assert (crawl["complete"], crawl["listed_not_reached"], crawl["missing_pages"]) == (True, 0, 0), crawl
    # The project's spider gave every page the same date: the audit's rule says so, as a warning.
    assert [finding["rule"] for finding in report["findings"]] == ["audit.lastmod_uniform"]
    assert report["summary"]["errors"] == 0
