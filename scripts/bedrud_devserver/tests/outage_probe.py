"""A real network outage for the built bot: everything on the namespace's loopback is
dropped (an iptables DROP on lo) for SECONDS while the bot records a speaking participant,
then the link comes back. Prints one `OUTAGE {json}` line: when the link came back and
when the bot said it was reconnected, with its output.

Runs *inside* a private network namespace (scripts/netns-run), so the outage touches
nothing outside it:

    PYTHONPATH=scripts scripts/netns-run .venv/bin/python -m bedrud_devserver.tests.outage_probe BOT SECONDS
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

from .helpers import DevServer

SCENARIO = """room outage public
start first-join
at 0s   join alice name="Alice"
at 0.5s tone alice 440Hz 600s amplitude=0.2
"""


def blackhole(on: bool) -> None:
    """Every packet arriving on the namespace's loopback is dropped (or no longer):
    TCP and UDP see silence, as on a dead link, not resets."""
    subprocess.run(["iptables", "-I" if on else "-D", "INPUT", "-i", "lo", "-j", "DROP"], check=True, capture_output=True, timeout=10)


def main() -> None:
    bot, seconds = sys.argv[1], float(sys.argv[2])
    report: dict = {"outage_s": seconds}
    lines: list[tuple[float, str]] = []
    lock = threading.Lock()
    work = tempfile.mkdtemp(prefix="outage-probe-")
    scenario = os.path.join(work, "outage.scenario")
    with open(scenario, "w") as f:
        f.write(SCENARIO)
    srv = DevServer("--scenario", scenario)
    proc = None
    try:
        env = {"HOME": work, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        proc = subprocess.Popen([bot, "join", srv.url + "/m/outage", "--record", "--output", os.path.join(work, "rec"),
                                 "--max-outage", "5m", "--alone-timeout", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)

        def read() -> None:
            assert proc is not None and proc.stdout is not None
            for line in proc.stdout:
                with lock:
                    lines.append((time.monotonic(), line.rstrip("\n")))

        threading.Thread(target=read, daemon=True).start()

        def wait_line(what: str, after: float, timeout: float) -> float:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                with lock:
                    for at, line in lines:
                        if at >= after and what in line:
                            return at
                if proc.poll() is not None:
                    raise RuntimeError(f"the bot exited ({proc.returncode}) before '{what}'")
                time.sleep(0.05)
            raise RuntimeError(f"no '{what}' within {timeout} s")

        start = time.monotonic()
        wait_line("speaking: Alice", start, 90)
        down = time.monotonic()
        blackhole(True)
        try:
            time.sleep(seconds)
        finally:
            blackhole(False)
        up = time.monotonic()
        back = wait_line("reconnected", down, 120)
        report["reconnected_after_link_up_s"] = round(back - up, 2)
        report["outage_cost_s"] = round(back - down, 2)
        proc.send_signal(signal.SIGINT)
        report["exit"] = proc.wait(timeout=60)
    except Exception as e:  # reported, not raised: the caller prints the output
        report["error"] = f"{e}\n{traceback.format_exc()}"
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        srv.stop()
        with lock:
            report["bot_output"] = [f"{at:.2f} {line}" for at, line in lines][-80:]
    print("OUTAGE " + json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
