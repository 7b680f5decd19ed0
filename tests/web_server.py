"""The real ``allfives serve`` for the web tests: a process started on a free loopback port,
and plain HTTP requests to it (or to any server on the loopback), shared by
tests/test_web_deadline.py, tests/test_web_hostile.py and tests/test_web_trust.py.

Traffic goes to 127.0.0.0/8 only; a request may come from any loopback address (``source``),
so that tests can stand for many clients.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ALLFIVES = ROOT / ".venv" / "bin" / "allfives"
TOKEN = "X-Game-Token"
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A loopback port free just now (another process may take it before it is used)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def request(port: int, method: str, path: str, body: Any = None, headers: dict | None = None,
            source: str = "127.0.0.1", timeout: float = 60) -> tuple[int, Any]:
    """One request to the server on ``port`` from the loopback address ``source``: (status,
    JSON answer), or (0, None) when nothing answered (or the answer was not JSON)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0))
    data = None if body is None else json.dumps(body).encode()
    try:
        conn.request(method, path, body=data,
                     headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")
    except (OSError, http.client.HTTPException, ValueError):
        return 0, None
    finally:
        conn.close()


class Server:
    """``allfives serve`` in its own process, its log in a file; its CPU time and memory
    read from /proc."""

    def __init__(self, tmp: Path, *extra: str) -> None:
        """Start it with ``--records-dir tmp/games`` and the flags ``extra``, and wait until
        it answers ``/api/meta``."""
        self.log = tmp / f"serve-{time.monotonic_ns()}.log"
        for _ in range(3):  # another process may take the free port first
            if self._start(tmp, extra):
                return
        raise AssertionError(self.log.read_text(errors="replace")[-2000:])

    def _start(self, tmp: Path, extra: tuple[str, ...]) -> bool:
        self.port = free_port()
        args = [str(ALLFIVES), "serve", "--port", str(self.port),
                "--records-dir", str(tmp / "games"), *extra]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while self.request("GET", "/api/meta")[0] != 200:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait(timeout=20)
                return False
            time.sleep(0.2)
        return True

    @property
    def pid(self) -> int:
        return self.proc.pid

    def cpu(self) -> float:
        """The process's CPU seconds so far (user + system, all its threads)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def memory(self, field: str = "VmHWM") -> int:
        """The process's peak (``VmHWM``) or resident (``VmRSS``) memory in KiB."""
        return memory_kib(self.proc.pid, field)

    def rss_mib(self) -> float:
        return self.memory("VmRSS") / 1024

    def settle(self, most: float = 0.15, window: float = 2.0, limit: float = 300.0) -> None:
        """Wait until the process is idle: at most ``most`` CPU seconds in ``window``
        (the warm-up thread done)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            before = self.cpu()
            time.sleep(window)
            if self.cpu() - before <= most:
                return
        raise AssertionError("the server never went idle")

    def request(self, method: str, path: str, body: Any = None, headers: dict | None = None,
                source: str = "127.0.0.1", timeout: float = 60) -> tuple[int, Any]:
        """(status, JSON answer), or (0, None) when nothing answered."""
        return request(self.port, method, path, body, headers, source, timeout)

    def new_game(self, agents: list[str], source: str = "127.0.0.1", seed: int = 7) -> Any:
        status, view = self.request("POST", "/api/games", {"agents": agents, "seed": seed},
                                    source=source)
        assert status == 200, view
        return view

    def upload(self, body: bytes, path: str = "/api/replay") -> tuple[int, Any]:
        """POST ``body`` on a raw socket, reading the answer even when the server answers
        (413) before the body is all sent; (status, JSON answer) or (0, None)."""
        head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        answer = b""
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as sock:
            try:
                sock.sendall(head)
                for i in range(0, len(body), 2**16):
                    sock.sendall(body[i:i + 2**16])
            except OSError:
                pass
            try:
                while data := sock.recv(65536):
                    answer += data
            except OSError:
                pass
        head_text, _, rest = answer.partition(b"\r\n\r\n")
        match = re.match(rb"HTTP/1.1 (\d+)", head_text)
        return (int(match.group(1)), json.loads(rest)) if match else (0, None)

    def stop(self) -> str:
        """Stop the process; its log."""
        self.proc.terminate()
        self.proc.wait(timeout=20)
        return self.log.read_text(errors="replace")


def memory_kib(pid: int, field: str = "VmHWM") -> int:
    """A process's peak (``VmHWM``) or resident (``VmRSS``) memory in KiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]
