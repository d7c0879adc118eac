"""Separate hosts on this machine, for the shared crawl's tests (#29): Linux network and mount namespaces.

A bridge carries a private /24 of 10.77.x.0. Redis and the site listen on addresses of their
own on it (.2 and .3, in this namespace). Each worker host is a network namespace with its own
address (.11, .12, ...), joined to the bridge by a veth pair, whose crawl runs in a mount
namespace of its own: ``/tmp`` is a private tmpfs and its working folder is mounted at ``/mnt``
for it alone, so no two workers share a disk. Cutting a host's link or removing its namespace
is a host lost from the network, or powered off. Needs root, ``ip`` (iproute2) and ``unshare``
(util-linux), as CI has.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.crawl_fixtures import QUICK_RETRIES, REPO_ROOT
from tests.redis_fixtures import RedisServer

#: Where a host's working folder is mounted, inside its mount namespace.
HOST_DIR = "/mnt"
#: Numbers the hosts this process builds, for their namespace and link names.
_SERIALS = itertools.count(1)


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def namespaces_work() -> str | None:
    """Why hosts cannot be built here (None: they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def _under_tmp(path: Path) -> bool:
    return path.resolve().is_relative_to("/tmp")


@dataclass
class Host:
    """A worker host: a network namespace with one address, a folder of its own."""

    name: str  # the namespace
    address: str
    folder: Path
    link: str  # the bridge side of its veth pair: down, the host is cut off
    processes: list[subprocess.Popen[str]] = field(default_factory=list)

    def crawl(self, start_url: str, settings: dict[str, str], log: Path, quick: bool = True) -> subprocess.Popen[str]:
        """``scrapy crawl sitemap`` on this host; its output, history and report in its own folder.

        ``quick``: the tests' short retry pauses (crawl_fixtures.QUICK_RETRIES); a benchmark keeps the defaults.
        """
        args = [sys.executable, "-m", "scrapy", "crawl", "sitemap", "-a", f"url={start_url}", "-a", "render=never"]
        given = {
            "SITEMAP_OUTPUT_DIR": f"{HOST_DIR}/sitemaps", "SITEMAP_REPORT": f"{HOST_DIR}/report.json",
            "SITEMAP_HISTORY": f"{HOST_DIR}/history.sqlite", "LOG_LEVEL": "INFO",
            "REMOTE_CONTROL_ENABLED": "False", "TELNETCONSOLE_ENABLED": "False",
            **(QUICK_RETRIES if quick else {}), **settings,
        }  # fmt: skip
        for name, value in given.items():
            args += ["-s", f"{name}={value}"]
        # A private /tmp, unless the code itself lives under /tmp (a checkout there): then a
        # private TMPDIR instead, so that the tmpfs does not hide it.
        private_tmp = not (_under_tmp(REPO_ROOT) or _under_tmp(Path(sys.prefix)))
        script = f'mkdir -p {HOST_DIR} && mount --bind "$1" {HOST_DIR} && shift && '
        script += "mount -t tmpfs tmpfs /tmp && " if private_tmp else f"mkdir -p {HOST_DIR}/tmp && export TMPDIR={HOST_DIR}/tmp && "
        script += 'exec "$@"'
        command = ["ip", "netns", "exec", self.name, "unshare", "--mount", "--propagation", "private", "--",
                   "sh", "-c", script, "sh", str(self.folder), *args]  # fmt: skip
        self.folder.mkdir(parents=True, exist_ok=True)
        with log.open("w", encoding="utf-8") as out:
            process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=out, text=True)
        self.processes.append(process)
        return process

    def pids(self) -> list[int]:
        found = subprocess.run(["ip", "netns", "pids", self.name], capture_output=True, text=True)
        return [int(pid) for pid in found.stdout.split()]

    def kill_processes(self) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def power_off(self) -> None:
        """Every process of the host killed at once, and its namespace gone: nothing it held is given back."""
        self.kill_processes()
        for process in self.processes:
            process.wait(timeout=30)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)

    def cut(self, down: bool) -> None:
        """The host's link to the network down (cut off) or up again."""
        _ip("link", "set", self.link, "down" if down else "up")


class HostNetwork:
    """A bridge, Redis and the site's address on it, and worker hosts; all removed at exit."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.octet = 20 + os.getpid() % 200
        self.bridge = ""
        self.hosts: list[Host] = []
        self.redis: RedisServer | None = None

    def address(self, last: int) -> str:
        return f"10.77.{self.octet}.{last}"

    @property
    def site_address(self) -> str:
        return self.address(3)

    def __enter__(self) -> HostNetwork:
        for attempt in range(50):  # another test process may hold this subnet
            octet = 20 + (os.getpid() + attempt) % 200
            bridge = f"smbr{octet}"
            try:
                _ip("link", "add", bridge, "type", "bridge")
            except subprocess.CalledProcessError:
                continue
            self.octet, self.bridge = octet, bridge
            break
        else:
            raise RuntimeError("no free bridge name")
        # A bridge takes the lowest MAC of its ports unless given one: powering a host off would
        # then change the address Redis and the site answer at, and the other hosts, whose ARP
        # entries still hold the old one, would lose both for up to a minute.
        _ip("link", "set", self.bridge, "address", f"02:77:00:00:{self.octet:02x}:01")
        _ip("addr", "add", f"{self.address(1)}/24", "dev", self.bridge)
        for last in (2, 3):  # Redis's and the site's addresses
            _ip("addr", "add", f"{self.address(last)}/32", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        return self

    def host(self) -> Host:
        n = len(self.hosts) + 1
        # Names of this process's own: a namespace removed by an earlier test may still be
        # in the kernel's hands for a while, with its veth pair.
        serial = next(_SERIALS)
        name, link = f"smh{self.octet}-{serial}", f"smv{self.octet}-{serial}"
        host = Host(name, self.address(10 + n), self.folder / f"host-{n}", link)
        self.hosts.append(host)  # removed at exit even if building it fails halfway
        _ip("netns", "add", name)
        _ip("link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", name)
        _ip("link", "set", link, "master", self.bridge)
        _ip("link", "set", link, "up")
        _ip("-n", name, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _ip("-n", name, "link", "set", "eth0", "up")
        _ip("-n", name, "link", "set", "lo", "up")
        return host

    def start_redis(self, appendonly: bool = False) -> str:
        """redis-server on its own address (with AOF when asked); its URL. ``self.redis`` stops and starts it."""
        self.redis = RedisServer(self.folder / "redis", appendonly=appendonly, host=self.address(2), port=6379)
        self.redis.directory.mkdir(parents=True, exist_ok=True)
        self.redis.start()
        return self.redis.url

    def __exit__(self, *exc: object) -> None:
        for host in self.hosts:
            host.kill_processes()
            subprocess.run(["ip", "link", "del", host.link], capture_output=True)  # and its peer, at once
            subprocess.run(["ip", "netns", "del", host.name], capture_output=True)
        if self.redis is not None:
            self.redis.kill()
        if self.bridge:
            subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
