"""Start a devserver subprocess and talk HTTP to it (no third-party client needed)."""
from __future__ import annotations

import base64
import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
from typing import Any, Optional
from urllib.parse import urlsplit

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEVSERVER = os.path.join(REPO, "scripts", "devserver")


class Reply:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.text[:200]!r})"


class DevServer:
    """One `scripts/devserver` process. Reads stdout lines until `ready`."""

    def __init__(self, *args: str, timeout: float = 60.0, env: Optional[dict] = None) -> None:
        self.args = ["--port", "0", *args]
        self.proc = subprocess.Popen([DEVSERVER, *self.args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
        self.lines: list[str] = []
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"devserver did not get ready; stderr: {self.stderr_tail()}")
            line = self.proc.stdout.readline()
            if not line:
                self.stop()
                raise RuntimeError(f"devserver exited early ({self.proc.poll()}); stderr: {self.stderr_tail()}")
            self.lines.append(line.rstrip("\n"))
            if line.strip() == "ready":
                break
        self.url = self.lines[0]
        self.info = dict(l.split("=", 1) for l in self.lines[1:] if "=" in l and " " not in l.split("=", 1)[0])
        self.ssl_context: Optional[ssl.SSLContext] = None
        if "ca_file" in self.info:
            self.ssl_context = ssl.create_default_context(cafile=self.info["ca_file"])

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_lines.append(line.rstrip("\n"))
            del self.stderr_lines[:-400]

    def stderr_tail(self, n: int = 40) -> str:
        return "\n".join(self.stderr_lines[-n:])

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        return self.proc.returncode

    def request(self, method: str, path: str, body: Any = None, *, token: Optional[str] = None,
                headers: Optional[dict] = None, raw: Optional[bytes] = None, content_type: Optional[str] = None,
                timeout: float = 30.0) -> Reply:
        parts = urlsplit(self.url)
        if parts.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout,
                                                                           context=self.ssl_context)
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        hdrs = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        if content_type is not None:
            hdrs["Content-Type"] = content_type
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            return Reply(resp.status, resp.headers, resp.read())
        finally:
            conn.close()

    # MARK: conveniences

    def register(self, email: str, name: str = "Tester", password: str = "correct horse battery") -> dict:
        r = self.request("POST", "/api/auth/register", {"email": email, "password": password, "name": name})
        assert r.status == 200, r
        return r.json()

    def login(self, email: str, password: str = "correct horse battery") -> dict:
        r = self.request("POST", "/api/auth/login", {"email": email, "password": password})
        assert r.status == 200, r
        return r.json()

    def state(self) -> dict:
        r = self.request("GET", "/_dev/state")
        assert r.status == 200, r
        return r.json()

    def wait_for(self, predicate, timeout: float = 30.0, what: str = "condition", interval: float = 0.1):  # type: ignore[no-untyped-def]
        """Polls /_dev/state until predicate(state) is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = self.state()
            value = predicate(last)
            if value:
                return value
            time.sleep(interval)
        raise AssertionError(f"timed out waiting for {what}; last state: {json.dumps(last)[:3000]}")


def jwt_claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def python() -> str:
    return sys.executable


# How long an SDK probe's own work may take (seconds), set by run_sdk_probe below its
# own timeout, so a probe that is stuck (an SDK call that never returns) still stops its
# bot and devserver and reports where it was.
PROBE_DEADLINE_ENV = "SDK_PROBE_DEADLINE"
PROBE_CLEANUP_SECONDS = 45


async def within_probe_deadline(work: Any, default: float) -> Any:
    """Awaits a probe's `work` for at most $SDK_PROBE_DEADLINE seconds (`default` when a
    probe is run by hand); past that, it is cancelled (its `finally` blocks stop the bot)
    and a TimeoutError says so."""
    import asyncio
    seconds = float(os.environ.get(PROBE_DEADLINE_ENV) or default)
    try:
        return await asyncio.wait_for(work, seconds)
    except asyncio.TimeoutError:
        raise TimeoutError(f"the probe did not finish within {seconds:.0f} s") from None


def run_sdk_probe(module: str, tag: str, timeout: float) -> dict:
    """Runs `bedrud_devserver.tests.<module>` inside scripts/netns-run (the official SDK
    needs a network namespace of its own) and returns its `<tag> {json}` report; fails the
    test with the probe's output when it cannot run or reports an error. The probe has
    `timeout` minus PROBE_CLEANUP_SECONDS for its work; if it is still running at
    `timeout`, it is killed, and with it (netns-run's PID namespace) all it started."""
    import pytest
    bot = os.path.join(REPO, ".build", "release", "bedrud-bot")
    netns_run = os.path.join(REPO, "scripts", "netns-run")
    if not os.access(bot, os.X_OK):
        pytest.fail(f"{bot} is missing: run scripts/bootstrap")
    check = subprocess.run([netns_run, "true"], capture_output=True, text=True, timeout=60)
    if check.returncode != 0:
        pytest.fail("scripts/netns-run cannot create a network namespace (run as root): " + check.stderr.strip())
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "scripts"),
               **{PROBE_DEADLINE_ENV: str(max(30, timeout - PROBE_CLEANUP_SECONDS))})
    try:
        proc = subprocess.run([netns_run, sys.executable, "-m", f"bedrud_devserver.tests.{module}"],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    except subprocess.TimeoutExpired as exc:
        def text(b: Any) -> str:
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        pytest.fail(f"probe {module} killed after {timeout:.0f} s, past its own deadline:\n"
                    f"{text(exc.stdout)[-3000:]}\n{text(exc.stderr)[-5000:]}")
    lines = [l for l in proc.stdout.splitlines() if l.startswith(tag + " ")]
    assert proc.returncode == 0 and lines, f"probe failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    data = json.loads(lines[-1][len(tag) + 1:])
    assert "error" not in data, data["error"] + "\n" + "\n".join(data.get("devserver_stderr", []))
    return data


async def probe_main(run, tag: str, deadline: float, work_prefix: str, *devserver_args: str) -> int:
    """The body of every SDK probe's `main`: a devserver with `devserver_args`, a work
    folder, `run(srv, work)` within `deadline` seconds, and one `<tag> {json}` line on
    stdout whatever happened (the report carries a failure and the devserver's last lines)."""
    import json
    import shutil
    import tempfile
    import traceback
    srv = DevServer(*devserver_args)
    work = tempfile.mkdtemp(prefix=work_prefix)
    report: dict = {}
    try:
        report = await within_probe_deadline(run(srv, work), deadline)
    except BaseException as exc:  # noqa: BLE001 — the report carries the failure
        report["error"] = "".join(traceback.format_exception(exc))
    finally:
        srv.stop()
        report["devserver_stderr"] = srv.stderr_lines[-40:]
        shutil.rmtree(work, ignore_errors=True)
    print(tag + " " + json.dumps(report))
    return 0
