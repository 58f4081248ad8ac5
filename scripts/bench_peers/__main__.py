"""Drives scripts/bench-peers (run it through that script: it needs a network namespace).

For each room size N, a fresh devserver runs a scenario of N scripted speakers (each
plays its own synthetic voice, all at once) and each recorder records it for the same
wall time, in the order A B C A B C…: (a) bedrud-bot `join --record`, (b) the LiveKit
SDK recorder (sdk_recorder.py), (c) the aiortc MediaRecorder recorder. Measured per
run from outside the process: CPU (user+sys of the process and its reaped children,
wait4), peak RSS, time from start to the first audio page on disk; then every file is
decoded and compared with its speaker's source. An idle run (empty room) per tool gives
idle CPU. Prints one table of medians with ratios against bedrud-bot, and JSON with
--json FILE. Exit status: 0 when every run produced its files, 1 when a run broke (a
recorder failed or wrote nothing), 2 for a usage error; never for a timing.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import wave

import av
import numpy as np

from .roomref import as_carried, catch_ups

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEVSERVER = os.path.join(REPO, "scripts", "devserver")
BOT = os.environ.get("BEDRUD_BOT", os.path.join(REPO, ".build", "release", "bedrud-bot"))
PY = sys.executable
RATE = 48000
TOOLS = ("bedrud-bot", "livekit-sdk", "aiortc")
LEAD_IN = 2.0  # scenario seconds before the speakers start talking


# MARK: - Sources

def voice(seconds: float, seed: int) -> np.ndarray:
    """A speaker-like signal: a harmonic voice at a per-speaker pitch, syllable envelope,
    talk spurts and pauses. Deterministic per seed, distinct between seeds."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    f0 = 95 + 13 * (seed % 11) + 40 * np.sin(2 * np.pi * 0.3 * t + seed)
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    x = sum(np.sin(k * phase) / k for k in range(1, 7))
    env = np.zeros(n)
    pos = 0
    while pos < n:
        talk = int(rng.uniform(0.4, 1.2) * RATE)
        syll = np.abs(np.sin(np.pi * np.arange(talk) / RATE * rng.uniform(3, 6)))
        env[pos:pos + talk] = syll[: max(0, min(talk, n - pos))]
        pos += talk + int(rng.uniform(0.2, 0.6) * RATE)
    return (0.25 * x * env).astype(np.float32)


def write_wav(path: str, x: np.ndarray) -> None:
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


def scenario(work: str, n: int, seconds: float) -> tuple[str, dict[str, np.ndarray]]:
    sources: dict[str, np.ndarray] = {}
    lines = ["room bench public", "start first-join"]
    for k in range(n):
        sid = f"s{k + 1}"
        sources[sid] = voice(seconds, 1000 + k)
        write_wav(os.path.join(work, f"{sid}.wav"), sources[sid])
        lines.append(f'at 0s join {sid} name="{sid}"')
    for sid in sources:
        lines.append(f"at {LEAD_IN}s speak {sid} {sid}.wav")
    path = os.path.join(work, "bench.scenario")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, sources


# MARK: - Processes

class DevServer:
    def __init__(self, work: str, scenario_path: str) -> None:
        self.log = open(os.path.join(work, "devserver.log"), "w")
        self.proc = subprocess.Popen([DEVSERVER, "--port", "0", "--scenario", scenario_path],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.monotonic() + 120
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"devserver exited ({self.proc.poll()}); see {self.log.name}")
            lines.append(line.strip())
            if line.strip() == "ready":
                break
        else:
            raise RuntimeError("devserver did not get ready in 120 s")
        self.url = lines[0]

    def guest(self, name: str) -> dict:
        req = urllib.request.Request(self.url + "/api/room/guest-join", method="POST",
                                     data=json.dumps({"roomName": "bench", "guestName": name}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def command(tool: str, srv: DevServer, out: str, home: str) -> list[str]:
    if tool == "bedrud-bot":
        return [BOT, "join", srv.url + "/m/bench", "--record", "--output", out]
    j = srv.guest(tool)
    if tool == "livekit-sdk":
        ws = j["livekitHost"].replace("http://", "ws://").replace("https://", "wss://")
        return [PY, "-m", "bench_peers.sdk_recorder", ws, j["token"], out]
    return [PY, "-m", "bench_peers.aiortc_recorder", j["livekitHost"], j["token"], out]


def audio_files(out: str) -> list[str]:
    found = []
    for root, _, names in os.walk(out):
        for n in names:
            if n.endswith((".opus", ".ogg", ".opus.part", ".ogg.part")):
                found.append(os.path.join(root, n))
    return sorted(found)


def has_audio_page(path: str) -> bool:
    """True once the file holds an Ogg page with a granule position > 0 (audio, not headers)."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 16)
    except OSError:
        return False
    i = data.find(b"OggS")
    while 0 <= i and i + 27 <= len(data):
        if int.from_bytes(data[i + 6:i + 14], "little", signed=True) > 0:
            return True
        i = data.find(b"OggS", i + 4)
    return False


def peak_rss_kb(pid: int) -> int:
    """VmHWM: the process's peak resident set since exec (ru_maxrss would count the
    driver's own memory, copied at fork before the exec)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_tool(tool: str, srv: DevServer, work: str, seconds: float, idle_window: tuple[float, float] | None) -> dict:
    out = os.path.join(work, tool)
    home = os.path.join(work, "home-" + tool)
    os.makedirs(out)
    os.makedirs(home)
    env = dict(os.environ, HOME=home, PYTHONPATH=os.path.join(REPO, "scripts"))
    log = open(os.path.join(work, tool + ".log"), "w")
    t0 = time.monotonic()
    proc = subprocess.Popen(command(tool, srv, out, home), stdout=log, stderr=subprocess.STDOUT, env=env)
    first_audio = None
    idle_a = idle_b = None
    hwm = 0
    while time.monotonic() - t0 < seconds and proc.poll() is None:
        now = time.monotonic() - t0
        hwm = max(hwm, peak_rss_kb(proc.pid))
        if first_audio is None and any(has_audio_page(p) for p in audio_files(out)):
            first_audio = now
        if idle_window:
            if idle_a is None and now >= idle_window[0]:
                idle_a = (now, cpu_seconds(proc.pid))
            if idle_b is None and now >= idle_window[1]:
                idle_b = (now, cpu_seconds(proc.pid))
        time.sleep(0.05)
    early = proc.poll()
    proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 30
    status = None
    while time.monotonic() < deadline:
        hwm = max(hwm, peak_rss_kb(proc.pid))
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.05)
    else:
        proc.kill()
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    log.close()
    # A recorder that keeps its pages in user space until the end shows them only now.
    first_audio_at_stop = first_audio is None and any(has_audio_page(p) for p in audio_files(out))
    r = {"tool": tool, "exit": proc.returncode, "exited_early": early is not None,
         "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_kb": hwm,
         "first_audio_s": first_audio if not first_audio_at_stop else seconds, "first_audio_only_at_stop": first_audio_at_stop, "files": audio_files(out), "log": log.name}
    if idle_a and idle_b:
        r["idle_cpu_per_min"] = (idle_b[1] - idle_a[1]) / (idle_b[0] - idle_a[0]) * 60
    return r


# MARK: - Fidelity

def decode(path: str) -> np.ndarray:
    with av.open(path) as c:
        resampler = av.AudioResampler(format="flt", layout="mono", rate=RATE)
        chunks = []
        for frame in c.decode(audio=0):
            for f in resampler.resample(frame):
                chunks.append(f.to_ndarray().reshape(-1))
        for f in resampler.resample(None):
            chunks.append(f.to_ndarray().reshape(-1))
    return np.concatenate(chunks) if chunks else np.zeros(0, np.float32)


def compare(decoded: np.ndarray, source: np.ndarray) -> dict:
    """Best alignment of the source inside the file (FFT cross-correlation), and the
    Pearson correlation of the overlapping stretch at that lag."""
    if len(decoded) < RATE // 10:
        return {"correlation": 0.0, "offset_ms": None}
    n = 1
    while n < len(decoded) + len(source):
        n <<= 1
    xc = np.fft.irfft(np.fft.rfft(decoded, n) * np.conj(np.fft.rfft(source, n)), n)
    lag = int(np.argmax(xc))
    if lag > n // 2:
        lag -= n
    a0, b0 = max(0, lag), max(0, -lag)
    m = min(len(decoded) - a0, len(source) - b0)
    if m < RATE // 10:
        return {"correlation": 0.0, "offset_ms": lag / 48}
    a, b = decoded[a0:a0 + m], source[b0:b0 + m]
    # Only the stretch where the source had already been played into the room counts.
    corr = float(np.corrcoef(a, b)[0, 1]) if np.std(a) > 0 and np.std(b) > 0 else 0.0
    return {"correlation": corr, "offset_ms": lag / 48}


def fidelity(files: list[str], sources: dict[str, np.ndarray],
             jumps: dict[str, list[tuple[int, int]]] | None = None) -> dict[str, dict]:
    """Each file against what the room carried for its speaker (the clip with the pauses
    of a speaker that fell behind inserted, see roomref.py); `clip_correlation` is the
    figure against the bare clip."""
    out = {}
    for path in files:
        base = os.path.basename(path).split(".")[0]
        if base not in sources:
            continue
        try:
            x = decode(path)
        except (av.error.FFmpegError, OSError) as e:  # an empty or cut-off file is a result, not a crash
            out[base] = {"correlation": 0.0, "offset_ms": None, "duration_s": 0.0, "error": str(e)}
            continue
        jumped = (jumps or {}).get(base, [])
        r = compare(x, as_carried(sources[base], jumped))
        r["clip_correlation"] = compare(x, sources[base])["correlation"] if jumped else r["correlation"]
        r["speaker_pauses_ms"] = sum(n for _, n in jumped) / 48
        r["speaker_pauses"] = [[at, n] for at, n in jumped]
        r["duration_s"] = len(x) / RATE
        out[base] = r
    return out


# MARK: - The run

def one_run(tool: str, n: int, seconds: float, keep: str | None) -> dict:
    work = tempfile.mkdtemp(prefix=f"bench-peers-{tool}-{n}-", dir=keep)
    try:
        path, sources = scenario(work, n, seconds) if n else (None, {})
        if not n:
            with open(os.path.join(work, "empty.scenario"), "w") as f:
                f.write("room bench public\n")
            path = os.path.join(work, "empty.scenario")
        srv = DevServer(work, path)
        try:
            r = run_tool(tool, srv, work, seconds, (min(10.0, seconds / 3), seconds - 1) if not n else None)
            jumps = catch_ups(srv.url) if n else {}
        finally:
            srv.stop()
        r["n"] = n
        r["seconds"] = seconds
        if n:
            fid = fidelity(r["files"], sources, jumps)
            r["fidelity"] = fid
            r["tracks_recorded"] = sum(1 for f in fid.values() if "error" not in f)
            r["broken"] = r["exited_early"] or r["tracks_recorded"] < n
        else:
            r["broken"] = r["exited_early"]
        r["files"] = [os.path.relpath(p, work) for p in r["files"]]
        return r
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def med(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs: list[dict], ns: list[int], seconds: float) -> tuple[str, dict]:
    rows = {}
    for tool in TOOLS:
        mine = [r for r in runs if r["tool"] == tool]
        row: dict = {}
        idle = [r for r in mine if r["n"] == 0]
        row["idle_cpu_per_min"] = med([r.get("idle_cpu_per_min") for r in idle])
        for n in ns:
            rs = [r for r in mine if r["n"] == n]
            talk = max(1e-9, (seconds - LEAD_IN) / 60)
            row[f"cpu_per_track_min@{n}"] = med([r["cpu_s"] / (n * talk) for r in rs])
            row[f"rss_mb@{n}"] = med([r["peak_rss_kb"] / 1024 for r in rs])
            row[f"first_audio_s@{n}"] = med([r["first_audio_s"] for r in rs])
            row[f"first_audio_at_stop@{n}"] = any(r.get("first_audio_only_at_stop") for r in rs)
            row[f"corr@{n}"] = med([min((f["correlation"] for f in r["fidelity"].values()), default=0) for r in rs])
            row[f"dur_s@{n}"] = med([statistics.median([f["duration_s"] for f in r["fidelity"].values()])
                                     if r["fidelity"] else None for r in rs])
        if len(ns) >= 2:
            a, b = min(ns), max(ns)
            ra, rb = row[f"rss_mb@{a}"], row[f"rss_mb@{b}"]
            row["rss_mb_per_track"] = (rb - ra) / (b - a) if ra is not None and rb is not None else None
        rows[tool] = row

    def fmt(v, d=2):
        return "—" if v is None else f"{v:.{d}f}"

    def ratio(tool, key):
        a, b = rows["bedrud-bot"].get(key), rows[tool].get(key)
        return "" if not a or b is None else f" ({b / a:.1f}×)"

    lines = []
    head = ["measure"] + list(TOOLS)
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    keys = [("idle CPU s per minute", "idle_cpu_per_min", 3)]
    for n in ns:
        keys += [(f"N={n}: CPU s per track-minute", f"cpu_per_track_min@{n}", 3),
                 (f"N={n}: peak RSS MiB", f"rss_mb@{n}", 1),
                 (f"N={n}: first audio on disk, s", f"first_audio_s@{n}", 2),
                 (f"N={n}: worst track correlation", f"corr@{n}", 3),
                 (f"N={n}: median track duration, s", f"dur_s@{n}", 1)]
    if len(ns) >= 2:
        keys.append((f"RSS MiB per extra track (N={min(ns)}→{max(ns)})", "rss_mb_per_track", 2))
    for label, key, d in keys:
        cells = [fmt(rows["bedrud-bot"].get(key), d)]
        for tool in TOOLS[1:]:
            cell = fmt(rows[tool].get(key), d) + (ratio(tool, key) if "corr" not in key and "dur" not in key else "")
            if key.startswith("first_audio_s@") and rows[tool].get("first_audio_at_stop@" + key.split("@")[1]):
                cell = "only at stop"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines), rows


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/bench-peers")
    ap.add_argument("--quick", action="store_true", help="N=4, 30 s, one round (the scripts/test size)")
    ap.add_argument("--sizes", default="1,4,16", help="room sizes N, comma-separated")
    ap.add_argument("--seconds", type=float, default=60.0, help="recording time per run")
    ap.add_argument("--rounds", type=int, default=3, help="A B C rounds per size (medians over them)")
    ap.add_argument("--idle-seconds", type=float, default=40.0)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--json", help="write every run's figures here")
    ap.add_argument("--keep", help="keep each run's folder under this directory")
    a = ap.parse_args()
    if a.quick:
        a.sizes, a.seconds, a.rounds, a.idle_seconds = "4", 30.0, 1, 15.0
    try:
        ns = [int(x) for x in a.sizes.split(",") if x]
    except ValueError:
        print("bench-peers: --sizes takes numbers, e.g. 1,4,16", file=sys.stderr)
        return 2
    tools = [t for t in a.tools.split(",") if t]
    if any(t not in TOOLS for t in tools) or not ns or min(ns) < 1:
        print(f"bench-peers: --tools from {','.join(TOOLS)}; sizes ≥ 1", file=sys.stderr)
        return 2
    if not os.access(BOT, os.X_OK):
        print(f"bench-peers: no bedrud-bot at {BOT}; build it (swift build -c release)", file=sys.stderr)
        return 1
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    runs = []
    plan = [(0, a.idle_seconds)] + [(n, a.seconds) for n in ns]
    for n, secs in plan:
        for rnd in range(1 if n == 0 else a.rounds):
            for tool in tools:
                r = one_run(tool, n, secs, a.keep)
                runs.append(r)
                if a.json:
                    with open(a.json + ".runs.jsonl", "a") as f:
                        f.write(json.dumps(r, default=str) + "\n")
                state = "BROKEN" if r["broken"] else "ok"
                extra = f" idle {r['idle_cpu_per_min']:.3f} CPU-s/min" if "idle_cpu_per_min" in r else \
                    f" {r.get('tracks_recorded', 0)}/{n} tracks"
                print(f"[bench-peers] N={n} round {rnd + 1} {tool}: {state}, exit {r['exit']}, cpu {r['cpu_s']:.2f} s, "
                      f"rss {r['peak_rss_kb'] / 1024:.1f} MiB, first audio {r['first_audio_s']}{extra}", flush=True)
    table, rows = summarize([r for r in runs if r["tool"] in tools], ns, a.seconds)
    versions = {"bedrud-bot": subprocess.run([BOT, "version"], capture_output=True, text=True).stdout.strip(),
                "python": platform.python_version(), "av": av.__version__}
    try:
        import aiortc
        import livekit.rtc
        versions["aiortc"] = aiortc.__version__
        versions["livekit"] = livekit.rtc.__version__
    except Exception:  # noqa: BLE001 - versions are informational
        pass
    print(f"\nmachine: {platform.machine()} {os.cpu_count()} CPUs, {platform.platform()}; versions: {versions}")
    print(f"command: scripts/bench-peers {' '.join(sys.argv[1:])}\n")
    print(table)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs, "summary": rows, "versions": versions}, f, indent=1, default=str)
    broken = [r for r in runs if r["broken"]]
    for r in broken:
        print(f"bench-peers: broken run: {r['tool']} N={r['n']} (exit {r['exit']}, log {r['log']})", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
