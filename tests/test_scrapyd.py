"""The project deployed to a real Scrapyd: egg, deploy, scheduled crawls (issue 4, "Scrapyd").

One Scrapyd daemon per module runs on a free loopback port, its directories in a
temporary directory. The project is deployed once with the real ``scrapyd-deploy`` from a
temporary copy of the repository, and every job is scheduled at once, so that the jobs and
the reference ``scrapy crawl`` run side by side.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from packaging.requirements import Requirement

from sitemap_spider.history.location import file_name
from tests.crawl_fixtures import QUICK_RETRIES, REPO_ROOT, CrawlResult, RunningSite, log_count, log_stat, run_crawl, serve_site
from tests.dynamic_site import DynamicSite
from tests.site_cases import build_case_site
from tests.site_server import SiteServer
from tests.sitemap_check import read_sitemap_set

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_scrapyd.scrapyd")]

PROJECT: Final = "sitemap_spider"
SPIDER: Final = "sitemap"
DEPLOY_TARGET: Final = "scrapyd-test"
#: Seconds Scrapyd may take to answer after it was started.
START_TIMEOUT: Final = 30.0
#: Seconds a scheduled job may take, from scheduling to its end (several run at once).
JOB_TIMEOUT: Final = 180.0
#: The scripts of the interpreter running the tests (scrapyd-deploy is installed there).
BIN_DIR: Final = Path(sys.executable).parent
#: Environment variables that must not reach Scrapyd: SCRAPYD_* ones override its config
#: file (port, address, credentials), SCRAPY_* ones would pick the project for the job
#: instead of the egg, and PYTHONPATH could import the package from the repository
#: instead of from the deployed egg.
LEAKY_ENV: Final = re.compile(r"SCRAPYD_.*|SCRAPY_SETTINGS_MODULE|SCRAPY_PROJECT|PYTHONPATH")
#: Top-level entries of the repository a deploy from a checkout would not see or use.
NOT_COPIED_TOP: Final = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "build",
        "dist",
        "sitemaps",
        ".hypothesis",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)


def clean_env(**extra: str) -> dict[str, str]:
    """The test process's environment without LEAKY_ENV, plus ``extra``."""
    env = {name: value for name, value in os.environ.items() if not LEAKY_ENV.fullmatch(name)}
    env.update(extra)
    return env


def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tail(text: str, chars: int = 4000) -> str:
    return text[-chars:]


# ---------------------------------------------------------------------------
# A real Scrapyd
# ---------------------------------------------------------------------------


@dataclass
class Scrapyd:
    """A running Scrapyd daemon and what the tests ask of it."""

    url: str  # http://127.0.0.1:PORT/
    directory: Path  # its working directory: where a relative path of a job lands
    log_path: Path  # the daemon's own log (its stdout and stderr)
    process: subprocess.Popen[bytes]

    @property
    def data_home(self) -> Path:
        """XDG_DATA_HOME of the daemon and its jobs: the data directory of "the Scrapyd user"."""
        return self.directory / "data-home"

    def get(self, endpoint: str, **params: str) -> dict[str, Any]:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        return self._call(urllib.request.Request(self.url + endpoint + query))

    def post(self, endpoint: str, fields: list[tuple[str, str]]) -> dict[str, Any]:
        # A list of pairs: schedule.json takes `setting` once per setting.
        body = urllib.parse.urlencode(fields).encode()
        return self._call(urllib.request.Request(self.url + endpoint, data=body, method="POST"))

    def _call(self, request: urllib.request.Request) -> dict[str, Any]:
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                payload: dict[str, Any] = json.load(response)
        except urllib.error.HTTPError as exc:
            # Scrapyd explains a refused call in a JSON body; show it, not just the status.
            pytest.fail(f"{request.full_url}: HTTP {exc.code}: {exc.read().decode(errors='replace')}")
        assert payload.get("status") == "ok", f"{request.full_url}: {payload}"
        return payload

    def fetch_text(self, path: str) -> str:
        """A file Scrapyd serves (a job's log_url), as text."""
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=30) as response:
            return bytes(response.read()).decode("utf-8", errors="replace")

    def daemon_log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def schedule(self, **arguments: str | list[str]) -> str:
        """schedule.json for the sitemap spider; returns the job id."""
        fields = [("project", PROJECT), ("spider", SPIDER)]
        for name, value in arguments.items():
            fields += [(name, item) for item in ([value] if isinstance(value, str) else value)]
        return str(self.post("schedule.json", fields)["jobid"])

    def wait_for_job(self, job_id: str, timeout: float = JOB_TIMEOUT) -> dict[str, Any]:
        """Poll listjobs.json until the job is finished; return its entry."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for job in self.get("listjobs.json", project=PROJECT)["finished"]:
                if job["id"] == job_id:
                    return dict(job)
            time.sleep(0.2)
        pytest.fail(f"job {job_id} not finished within {timeout} s\n{tail(self.daemon_log())}")

    def job_log(self, job: Mapping[str, Any]) -> str:
        """The job's own log, as the web interface serves it."""
        assert job["log_url"], job
        return self.fetch_text(str(job["log_url"]))

    def job_exit_status(self, job_id: str) -> str:
        """How the job's process ended, from Scrapyd's log: "0", another exit status, or a signal."""
        # Scrapyd logs "Process finished: ... job='ID'" or "Process died: exitstatus=N ... job='ID'".
        for line in self.daemon_log().splitlines():
            if f"job='{job_id}'" not in line:
                continue
            if "Process finished:" in line:
                return "0"
            died = re.search(r"Process died: exitstatus=(\S+)", line)
            if died:
                return died.group(1)
        return "unknown"

    def job_stderr(self, job_id: str) -> str:
        """What the job's process wrote to stderr: Scrapyd keeps it in its own log, by pid."""
        log = self.daemon_log()
        started = re.search(rf"Process started: .*job='{job_id}' pid=(\d+)", log)
        assert started, f"no start of job {job_id} in Scrapyd's log\n{tail(log)}"
        marker = f"[Launcher,{started.group(1)}/stderr]"
        return "\n".join(line for line in log.splitlines() if marker in line)

    def stop(self) -> None:
        """Stop the daemon and any crawl it still runs (they share its process group)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        else:
            # The daemon is gone; a crawl it had started may still be running in the group.
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # nothing left in the group


SCRAPYD_CONFIG: Final = """\
# Scrapyd reads this file after /etc/scrapyd, ~/.scrapyd.conf and scrapyd.conf, so nothing
# on the machine can change the test daemon's port, directories or credentials.
[scrapyd]
bind_address = 127.0.0.1
http_port = {port}
username =
password =
eggs_dir = {directory}/eggs
logs_dir = {directory}/logs
dbs_dir = {directory}/dbs
items_dir = {directory}/items
jobs_dir =
max_proc = 4
# Jobs start within 0.2 s of being scheduled instead of 5 s.
poll_interval = 0.2
"""


def start_scrapyd(directory: Path) -> Scrapyd:
    """Start Scrapyd in ``directory`` on a free port; return once daemonstatus.json answers."""
    for _attempt in range(3):
        port = free_port()
        # The config goes into scrapy.cfg of the working directory: Scrapyd reads it last
        # (it wins over every other config file), and the job's runner, started in the same
        # directory, reads it again to find the egg.
        (directory / "scrapy.cfg").write_text(
            SCRAPYD_CONFIG.format(port=port, directory=directory), encoding="utf-8"
        )
        log_path = directory / "scrapyd.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "scrapyd"],
                cwd=directory,
                # Unbuffered: the tests read how jobs ended from this log while Scrapyd runs.
                # A data directory of its own: the jobs' default crawl history goes there, not
                # into the home of the user running the tests.
                env=clean_env(PYTHONUNBUFFERED="1", XDG_DATA_HOME=str(directory / "data-home")),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group, so that stopping it also stops crawls it started.
                start_new_session=True,
            )
        server = Scrapyd(f"http://127.0.0.1:{port}/", directory, log_path, process)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and process.poll() is None:
            try:
                server.get("daemonstatus.json")
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
                continue
            return server
        server.stop()
        log_text = server.daemon_log()
        if "CannotListenError" not in log_text:
            pytest.fail(f"Scrapyd did not start\n{tail(log_text)}")
        # Another process took the port between free_port() and Scrapyd's bind: try another.
    pytest.fail(f"Scrapyd found no free port\n{tail(log_text)}")


@pytest.fixture(scope="module")
def scrapyd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scrapyd]:
    directory = tmp_path_factory.mktemp("scrapyd")
    # A job must run the deployed egg. Scrapyd's runner appends the egg to sys.path, so a
    # sitemap_spider importable from the job's working directory or site-packages (an
    # editable install) would be used instead, and these tests would not test the egg.
    probe = subprocess.run(
        [sys.executable, "-c", "import importlib.util; print(importlib.util.find_spec('sitemap_spider'))"],
        cwd=directory,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "None", f"sitemap_spider is importable outside the egg: {probe.stdout}"
    server = start_scrapyd(directory)
    try:
        yield server
    finally:
        server.stop()


# ---------------------------------------------------------------------------
# The project, deployed with scrapyd-deploy
# ---------------------------------------------------------------------------


def scrapyd_deploy() -> str:
    """The scrapyd-deploy script next to the test interpreter (scrapyd-client's)."""
    script = BIN_DIR / "scrapyd-deploy"
    if script.is_file():
        return str(script)
    found = shutil.which("scrapyd-deploy")
    assert found, "scrapyd-deploy not found: pip install -r requirements-test.txt"
    return found


def run_scrapyd_deploy(project_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # scrapyd-deploy reads scrapy.cfg and runs setup.py from the working directory.
    proc = subprocess.run(
        [scrapyd_deploy(), *args],
        cwd=project_dir,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, (
        f"scrapyd-deploy {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    )
    return proc


@pytest.fixture(scope="module")
def project_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository as a checkout has it, so builds leave nothing in the repository."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = {name for name in names if name == "__pycache__" or name.endswith(".egg-info")}
        if Path(directory) == REPO_ROOT:
            skipped |= NOT_COPIED_TOP & set(names)
        return skipped

    destination = tmp_path_factory.mktemp("checkout") / "sitemap_spider"
    shutil.copytree(REPO_ROOT, destination, ignore=ignore, symlinks=True)
    return destination


@pytest.fixture(scope="module")
def built_egg(project_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The egg scrapyd-deploy builds (and would upload), built the way it builds it."""
    egg = tmp_path_factory.mktemp("egg") / "sitemap_spider.egg"
    run_scrapyd_deploy(project_copy, "--build-egg", str(egg))
    return egg


@pytest.fixture(scope="module")
def deployment(scrapyd: Scrapyd, project_copy: Path) -> dict[str, Any]:
    """Deploy with ``scrapyd-deploy TARGET``; returns Scrapyd's answer to addversion.json."""
    # A target of its own, added to the copy's scrapy.cfg: url points at the test daemon,
    # the project name comes from the repository's [deploy] section.
    with (project_copy / "scrapy.cfg").open("a", encoding="utf-8") as cfg:
        cfg.write(f"\n[deploy:{DEPLOY_TARGET}]\nurl = {scrapyd.url}\n")
    proc = run_scrapyd_deploy(project_copy, DEPLOY_TARGET)
    answer: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return answer


# ---------------------------------------------------------------------------
# The jobs, all scheduled at once, and the reference crawl
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Jobs:
    crawl: str  # url, render=never, SITEMAP_OUTPUT_DIR
    crawl_output: Path
    bad_argument: str  # render=sometimes
    bad_argument_output: Path
    relative_output: str  # no SITEMAP_OUTPUT_DIR: the default, relative "sitemaps"
    unusable_output: str  # an absolute SITEMAP_OUTPUT_DIR under a file: no file can be made there
    unusable_blocker: Path


@pytest.fixture(scope="module")
def site() -> Iterator[RunningSite]:
    with serve_site(lambda origin, other: build_case_site(origin, other_origin=other)) as running:
        yield running


@pytest.fixture(scope="module")
def jobs(
    scrapyd: Scrapyd,
    deployment: dict[str, Any],
    site: RunningSite,
    tmp_path_factory: pytest.TempPathFactory,
) -> Jobs:
    assert deployment["status"] == "ok", deployment
    # Outside Scrapyd's working directory, so that anything published there came from a
    # relative path.
    outputs = tmp_path_factory.mktemp("published")
    crawl_output = outputs / "scrapyd"
    bad_output = outputs / "bad-argument"
    blocker = outputs / "a-file"
    blocker.write_text("")
    # As run_crawl does: the case site's pages down for good are not tried for 90 s.
    quick = [f"{name}={value}" for name, value in QUICK_RETRIES.items()]
    return Jobs(
        crawl=scrapyd.schedule(
            url=site.start_url,
            render="never",
            # Under Scrapyd both must be absolute paths.
            setting=[f"SITEMAP_OUTPUT_DIR={crawl_output}", f"SITEMAP_HISTORY={outputs / 'history.sqlite'}", *quick],
        ),
        crawl_output=crawl_output,
        bad_argument=scrapyd.schedule(
            url=site.start_url, render="sometimes", setting=[f"SITEMAP_OUTPUT_DIR={bad_output}", *quick]
        ),
        bad_argument_output=bad_output,
        relative_output=scrapyd.schedule(url=site.start_url, render="never", setting=quick),
        unusable_output=scrapyd.schedule(
            url=site.start_url, render="never", setting=[f"SITEMAP_OUTPUT_DIR={blocker / 'sitemaps'}", *quick]
        ),
        unusable_blocker=blocker,
    )


@pytest.fixture(scope="module")
def reference(jobs: Jobs, site: RunningSite, tmp_path_factory: pytest.TempPathFactory) -> CrawlResult:
    """``scrapy crawl sitemap`` of the same site; depends on ``jobs`` only to run alongside them."""
    result = run_crawl(site.start_url, tmp_path_factory.mktemp("reference"), "-a", "render=never")
    assert result.returncode == 0, result.describe()
    return result


# ---------------------------------------------------------------------------
# The egg
# ---------------------------------------------------------------------------


def test_egg_holds_the_package_data_and_the_settings_entry_point(built_egg: Path) -> None:
    with zipfile.ZipFile(built_egg) as egg:
        names = set(egg.namelist())
        entry_points = egg.read("EGG-INFO/entry_points.txt").decode()
        requires = egg.read("EGG-INFO/requires.txt").decode()
    schemas = REPO_ROOT / "sitemap_spider" / "schemas"
    xsds = {f"sitemap_spider/schemas/{p.name}" for p in schemas.glob("*.xsd")}
    assert {"sitemap_spider/schemas/sitemap.xsd", "sitemap_spider/schemas/siteindex.xsd"} <= xsds
    data = {"sitemap_spider/schemas/SOURCES.md", "sitemap_spider/py.typed"}
    assets = REPO_ROOT / "sitemap_spider" / "report" / "assets"
    data |= {f"sitemap_spider/report/assets/{p.name}" for p in assets.iterdir()}
    missing = (xsds | data) - names
    assert not missing, f"not in the egg: {sorted(missing)}"
    assert "sitemap_spider/crawl/spider.py" in names
    assert "sitemap_spider/commands/crawl.py" in names
    assert not {n for n in names if n.startswith(("tests/", "bench/"))}, "test code in the egg"
    # Scrapyd finds the project's settings module through this entry point.
    assert re.search(r"^\[scrapy\]\s*\nsettings = sitemap_spider\.settings$", entry_points, re.MULTILINE), (
        entry_points
    )
    assert "EGG-INFO/zip-safe" in names
    # The egg's requirements are pyproject.toml's (tests/test_dependencies.py ties them to the code
    # and to requirements.txt): the dependencies, then one section per extra.
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    sections = re.split(r"^\[(\w+)\]$", requires.strip(), flags=re.MULTILINE)
    extras = zip(sections[1::2], sections[2::2], strict=True)
    in_egg = {"": sections[0].split()} | {extra: body.split() for extra, body in extras}
    declared = {"": project["dependencies"]} | project["optional-dependencies"]

    def normal(parts: dict[str, list[str]]) -> dict[str, list[str]]:
        return {part: sorted(str(Requirement(s)) for s in specifiers) for part, specifiers in parts.items()}

    assert normal(in_egg) == normal(declared)


# Run in a fresh interpreter (-I: no PYTHONPATH, no script directory on sys.path) that
# puts the egg on sys.path the way Scrapyd's runner does, then validates with the product.
ZIPPED_EGG_CHECK: Final = r"""
import importlib.resources, json, os, sys
from pathlib import Path

from scrapyd.runner import activate_egg

egg, work = sys.argv[1], Path(sys.argv[2])
activate_egg(egg)

import sitemap_spider
from sitemap_spider.sitemaps.errors import SitemapValidationError
from sitemap_spider.sitemaps.xml.validate import validate_file

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
(work / "urlset.xml").write_text(
    f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>'
    "<url><loc>https://www.example.com/</loc><lastmod>2024-05-01T10:20:30+00:00</lastmod></url>"
    "<url><loc>https://www.example.com/a</loc></url></urlset>\n"
)
(work / "index.xml").write_text(
    f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>'
    "<sitemap><loc>https://www.example.com/sitemap-00001.xml</loc></sitemap></sitemapindex>\n"
)
(work / "invalid.xml").write_text(
    f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>'
    "<url><lastmod>yesterday</lastmod></url></urlset>\n"
)
try:
    validate_file(work / "invalid.xml")
    invalid = None
except SitemapValidationError as exc:
    invalid = str(exc)
schemas = importlib.resources.files("sitemap_spider.schemas")
print(json.dumps({
    "package": sitemap_spider.__file__,
    "schemas_on_disk": os.path.exists(str(schemas)),
    "urlset": validate_file(work / "urlset.xml"),
    "index": validate_file(work / "index.xml"),
    "invalid": invalid,
}))
"""


def test_validation_works_from_the_zipped_egg(built_egg: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-I", "-c", ZIPPED_EGG_CHECK, str(built_egg), str(tmp_path)],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # Imported from inside the zip, and the XSDs have no path on disk: only
    # importlib.resources can read them.
    assert result["package"].startswith(str(built_egg) + os.sep), result
    assert result["schemas_on_disk"] is False, result
    assert result["urlset"] == 2
    assert result["index"] == 1
    assert result["invalid"] and "invalid.xml" in result["invalid"], result


# ---------------------------------------------------------------------------
# Deploy and scheduled crawls
# ---------------------------------------------------------------------------


def test_deploy_registers_the_sitemap_spider(scrapyd: Scrapyd, deployment: dict[str, Any]) -> None:
    assert deployment["status"] == "ok", deployment
    assert deployment["project"] == PROJECT, deployment
    assert deployment["spiders"] == 1, deployment
    assert scrapyd.get("listspiders.json", project=PROJECT)["spiders"] == [SPIDER]


def test_scheduled_crawl_publishes_the_same_set_as_scrapy_crawl(
    scrapyd: Scrapyd, jobs: Jobs, reference: CrawlResult, site: RunningSite
) -> None:
    job = scrapyd.wait_for_job(jobs.crawl)
    log = scrapyd.job_log(job)
    assert scrapyd.job_exit_status(jobs.crawl) == "0", f"{tail(log)}\n{scrapyd.job_stderr(jobs.crawl)}"
    assert (jobs.crawl_output / "sitemap_index.xml").is_file(), tail(log)
    base_url = site.origin + "/"
    published = read_sitemap_set(jobs.crawl_output, base_url)
    expected = read_sitemap_set(reference.output_dir, base_url)
    assert published == expected
    # And right: every indexable page once (pages of infinite URL spaces may go either way).
    assert [e for e in published if not site.spec.is_trap(e["loc"])] == site.spec.expected_listed()
    # Entries are sorted and the files reproducible: the same site gives the same bytes.
    files = {p.name: p.read_bytes() for p in sorted(jobs.crawl_output.iterdir()) if p.is_file()}
    assert files == reference.files()
    assert str(jobs.crawl_output) in log, "the job log should say where the set was published"


def test_bad_argument_ends_the_job_without_publishing(scrapyd: Scrapyd, jobs: Jobs) -> None:
    scrapyd.wait_for_job(jobs.bad_argument)
    # 2: a bad setting or argument (docs/reports.md, "Exit codes").
    assert scrapyd.job_exit_status(jobs.bad_argument) == "2", tail(scrapyd.daemon_log())
    assert not jobs.bad_argument_output.exists()
    # What the process printed: Scrapyd keeps it in its own log.
    assert re.search(r"\brender\b.*\bsometimes\b", scrapyd.job_stderr(jobs.bad_argument))


def test_bad_argument_is_named_in_the_job_log(scrapyd: Scrapyd, jobs: Jobs) -> None:
    log = scrapyd.job_log(scrapyd.wait_for_job(jobs.bad_argument))
    assert re.search(r"\brender\b.*\bsometimes\b", log), tail(log)


def test_relative_output_dir_is_refused_under_scrapyd(scrapyd: Scrapyd, jobs: Jobs) -> None:
    log = scrapyd.job_log(scrapyd.wait_for_job(jobs.relative_output))
    published = sorted(
        str(path.relative_to(scrapyd.directory))
        for pattern in ("sitemap_index.xml", "sitemap-*.xml*")
        for path in scrapyd.directory.rglob(pattern)
    )
    assert not published, f"published in Scrapyd's working directory: {published}"
    assert "SITEMAP_OUTPUT_DIR" in log, tail(log)
    assert scrapyd.job_exit_status(jobs.relative_output) == "2", tail(scrapyd.daemon_log())


def test_an_output_dir_that_cannot_be_written_ends_the_job_at_start_up(scrapyd: Scrapyd, jobs: Jobs) -> None:
    log = scrapyd.job_log(scrapyd.wait_for_job(jobs.unusable_output))
    blocker = jobs.unusable_blocker
    message = f"the sitemap files cannot be written in {blocker / 'sitemaps'}: {blocker} is not a directory"
    assert f"SITEMAP_OUTPUT_DIR: {message}" in log, tail(log)
    assert "Spider opened" not in log and "Traceback" not in log, tail(log)
    assert scrapyd.job_exit_status(jobs.unusable_output) == "2", tail(scrapyd.daemon_log())


# ---------------------------------------------------------------------------
# The manual's schedule.json, as it stands, run twice
# ---------------------------------------------------------------------------


def readme_schedule_fields() -> list[tuple[str, str]]:
    """The ``-d`` fields of the schedule.json example of docs/modes.md ("Deploy to Scrapyd")."""
    page = (REPO_ROOT / "docs" / "modes.md").read_text(encoding="utf-8")
    example = re.search(r"curl http://localhost:6800/schedule\.json(.*?)\n\n", page, re.DOTALL)
    assert example, "no schedule.json example in docs/modes.md"
    pairs = re.findall(r"-d (\S+?)=(\S+)", example.group(1))
    return [(name, value) for name, value in pairs]


def test_the_manual_schedule_publishes_and_the_next_run_gets_304s(
    scrapyd: Scrapyd, deployment: dict[str, Any], tmp_path: Path
) -> None:
    """Exactly the manual's fields, url and an absolute SITEMAP_OUTPUT_DIR: the default crawl history
    (the Scrapyd user's data directory) is taken, and the second run revalidates with it."""
    assert deployment["status"] == "ok", deployment
    fields = readme_schedule_fields()
    assert [name for name, _ in fields] == ["project", "spider", "url", "setting"], fields
    assert fields[3][1].startswith("SITEMAP_OUTPUT_DIR=/"), fields
    output = tmp_path / "sitemaps"
    site = DynamicSite(30)
    logs = []
    with SiteServer() as server:
        site.serve(server)
        for _run in range(2):
            job_id = scrapyd.schedule(url=server.origin + "/", setting=f"SITEMAP_OUTPUT_DIR={output}")
            log = scrapyd.job_log(scrapyd.wait_for_job(job_id))
            assert scrapyd.job_exit_status(job_id) == "0", f"{tail(log)}\n{scrapyd.job_stderr(job_id)}"
            assert "Sitemap published" in log, tail(log)
            logs.append(log)
        origin = server.origin
    assert len(read_sitemap_set(output, origin + "/")) > 30
    assert not log_stat(logs[0], "sitemap/history/not_modified")
    assert log_count(logs[1], "sitemap/history/not_modified") > 0, tail(logs[1])
    assert site.statuses.get("etag 304", 0) > 0
    history = scrapyd.data_home / "sitemap_spider" / "sitemap-history" / file_name(origin)
    assert history.is_file(), sorted(str(p) for p in scrapyd.data_home.rglob("*"))
    in_job_directory = [str(p.relative_to(scrapyd.directory)) for p in scrapyd.directory.rglob("*.sqlite")
                        if not p.is_relative_to(scrapyd.data_home) and "dbs" not in p.parts]
    assert not in_job_directory, in_job_directory
