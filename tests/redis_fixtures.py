"""A real ``redis-server`` for the shared-crawl tests, on a free loopback port, persistence off."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """``redis://127.0.0.1:<port>/0`` of a redis-server started for the test and stopped after."""
    port = free_port()
    process = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert process.poll() is None, "redis-server did not start"
                assert time.monotonic() < deadline, "redis-server did not answer"
                time.sleep(0.05)
        yield url
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=10)


class RedisServer:
    """A redis-server on a fixed port and directory that a test can stop and start again."""

    def __init__(self, directory: Path, *, appendonly: bool, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port or free_port()
        self.directory = directory
        self.appendonly = appendonly
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", self.host, "--save", "", "--protected-mode", "no",
             "--appendonly", "yes" if self.appendonly else "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:  # still starting (or loading its append-only file)
                assert self.process.poll() is None, "redis-server did not start"
                assert time.monotonic() < deadline, "redis-server did not answer"
                time.sleep(0.05)
        client.close()

    def stop(self) -> None:
        """SIGTERM: a clean shutdown, as `systemctl restart redis` does (the append-only file is flushed)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)

    def kill(self) -> None:
        """SIGKILL: what Redis keeps is what its append-only file holds."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=20)
