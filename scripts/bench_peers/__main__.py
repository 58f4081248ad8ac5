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

`--meeting N[,N…]` records generated realistic meetings instead (bedrud_devserver.meeting:
one speaker at a time, the others in DTX), scored turn by turn and with the mix placed
source by source (meeting_score.py); CPU per meeting-minute.

`--rooms K[,K…]|max` records K live rooms at once on one devserver with bedrud-bot pinned
to one CPU (the devserver on the other), one bot process per room or, with
`--one-process`, one `join LINK1 … LINKK --record`; each room is judged real time from its
own summary.json (bot_room_verdict). The rooms are --room-speakers always-talking speakers
(the worst case), or with `--room-meeting N` generated realistic N-person meetings (room
benchI: seed --meeting-seed + I - 1, --meeting-minutes long; judged with the same rules,
who must have a file, how long and how much voiced audio must arrive taken from the
meeting's truth: meeting_room_rules). Rooms per core for 10-person meetings:

    scripts/bench-peers --sizes "" --idle-seconds 0 --rooms 4,8,16 --one-process --room-meeting 10 --meeting-minutes 1

prints per K the bot's share of its core, per room, the devserver's busy share and the
verdicts; then the least-squares slope and intercept of the share against K (over the K
with every room in real time and the devserver under 90 %), the extrapolated rooms per
core (labelled as an extrapolation) and whether the devserver was the limit.
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

from .roomref import as_carried, catch_ups, catch_ups_by_room

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


def scenario(work: str, n: int, seconds: float, room: str = "bench") -> tuple[str, dict[str, np.ndarray]]:
    sources: dict[str, np.ndarray] = {}
    lines = [f"room {room} public", "start first-join"]
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
    def __init__(self, work: str, scenario_path: str | list[str], pin: str | None = None,
                 extra: list[str] | None = None, ready_s: float = 120) -> None:
        self.log = open(os.path.join(work, "devserver.log"), "w")
        paths = [scenario_path] if isinstance(scenario_path, str) else scenario_path
        args = [DEVSERVER, "--port", "0"] + (extra or []) + [x for p in paths for x in ("--scenario", p)]
        self.proc = subprocess.Popen((["taskset", "-c", pin] if pin else []) + args,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.monotonic() + ready_s
        lines = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"devserver exited ({self.proc.poll()}); see {self.log.name}")
            lines.append(line.strip())
            if line.strip() == "ready":
                break
        else:
            raise RuntimeError(f"devserver did not get ready in {ready_s:.0f} s")
        self.url = lines[0]

    def cpu_seconds(self) -> float:
        try:
            return cpu_seconds(self.proc.pid)
        except OSError:
            return 0.0

    def wait_seconds(self) -> float:
        return run_queue_seconds(self.proc.pid)

    def guest(self, name: str, room: str = "bench") -> dict:
        req = urllib.request.Request(self.url + "/api/room/guest-join", method="POST",
                                     data=json.dumps({"roomName": room, "guestName": name}).encode(),
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


def command(tool: str, srv: DevServer, out: str, home: str, rooms: list[str] | None = None) -> list[str]:
    rooms = rooms or ["bench"]
    if tool == "bedrud-bot":
        # BENCH_BOT_PREFIX wraps the bot for profiling, e.g. "perf record -g -o /tmp/p.data --".
        return os.environ.get("BENCH_BOT_PREFIX", "").split() + [BOT, "join"] + [srv.url + "/m/" + r for r in rooms] + ["--record", "--output", out]
    j = srv.guest(tool, rooms[0])
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


def run_queue_seconds(pid: int) -> float:
    """Seconds the process's threads spent ready to run but waiting for a CPU (the second
    field of /proc/PID/task/TID/schedstat): a starved process shows here, not in its CPU."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[1])
            except (OSError, IndexError, ValueError):
                pass
    except OSError:
        pass
    return total / 1e9


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bot_config(home: str, settings: list[str]) -> str | None:
    """A config file with `--bot-set SECTION.KEY=VALUE` settings for bedrud-bot."""
    if not settings:
        return None
    by_section: dict[str, list[str]] = {}
    for item in settings:
        key, _, value = item.partition("=")
        section, _, name = key.rpartition(".")
        by_section.setdefault(section, []).append(f"{name} = {value}")
    path = os.path.join(home, "bench.conf")
    with open(path, "w") as f:
        for section, lines in by_section.items():
            f.write((f"[{section}]\n" if section else "") + "\n".join(lines) + "\n")
    return path


class Opts:
    """How every recorder process runs: pinned to a CPU list, bedrud-bot's settings; and
    whether a --rooms devserver codes its speakers' clips once (--scripted-precode)."""
    pin: str | None = None
    bot_set: list[str] = []
    precode: bool = True


class Running:
    """One recorder process being measured."""

    def __init__(self, tool: str, srv: DevServer, work: str, rooms: list[str] | None, name: str) -> None:
        self.tool, self.name = tool, name
        self.out = os.path.join(work, name)
        home = os.path.join(work, "home-" + name)
        os.makedirs(self.out)
        os.makedirs(home)
        env = dict(os.environ, HOME=home, PYTHONPATH=os.path.join(REPO, "scripts"))
        if tool == "bedrud-bot" and (conf := bot_config(home, Opts.bot_set)):
            env["BEDRUD_BOT_CONFIG"] = conf
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.t0 = time.monotonic()
        argv = (["taskset", "-c", Opts.pin] if Opts.pin else []) + command(tool, srv, self.out, home, rooms)
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.first_audio = None
        self.idle_a = self.idle_b = None
        self.hwm = 0
        self.reaped = None  # (status, rusage) once wait4 returned it
        self.stop_s = None
        self.killed = False
        self.wait_s = 0.0  # run-queue wait until the stop

    def poll(self, idle_window: tuple[float, float] | None) -> None:
        # wait4 (not Popen.poll, which reaps without the rusage) tells whether it ended.
        if self.reaped:
            return
        pid, st, ru = os.wait4(self.proc.pid, os.WNOHANG)
        if pid:
            self.reaped = (st, ru)
            return
        now = time.monotonic() - self.t0
        self.hwm = max(self.hwm, peak_rss_kb(self.proc.pid))
        if self.first_audio is None and any(has_audio_page(p) for p in audio_files(self.out)):
            self.first_audio = now
        if idle_window:
            if self.idle_a is None and now >= idle_window[0]:
                self.idle_a = (now, cpu_seconds(self.proc.pid))
            if self.idle_b is None and now >= idle_window[1]:
                self.idle_b = (now, cpu_seconds(self.proc.pid))

    def result(self, seconds: float, early: bool) -> dict:
        status, usage = self.reaped
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.log.close()
        # A recorder that keeps its pages in user space until the end shows them only now.
        first_audio_at_stop = self.first_audio is None and any(has_audio_page(p) for p in audio_files(self.out))
        r = {"tool": self.tool, "name": self.name, "exit": self.proc.returncode, "exited_early": early, "out": self.out,
             "wall_s": time.monotonic() - self.t0, "stop_s": self.stop_s, "killed": self.killed,
             "run_queue_s": self.wait_s,
             "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_kb": self.hwm,
             "first_audio_s": self.first_audio if not first_audio_at_stop else seconds,
             "first_audio_only_at_stop": first_audio_at_stop, "files": audio_files(self.out), "log": self.log.name}
        if self.idle_a and self.idle_b:
            r["idle_cpu_per_min"] = (self.idle_b[1] - self.idle_a[1]) / (self.idle_b[0] - self.idle_a[0]) * 60
        return r


def run_many(specs: list[tuple[str, list[str] | None, str]], srv: DevServer, seconds: float,
             idle_window: tuple[float, float] | None, work: str) -> tuple[list[dict], float]:
    """Starts one recorder per (tool, rooms, name) at once, stops them all with SIGTERM
    after `seconds`, and measures each. Also returns the devserver's CPU seconds over
    the same time (to tell a saturated server from a recorder that falls behind)."""
    srv_cpu0, srv_wait0 = srv.cpu_seconds(), srv.wait_seconds()
    procs = [Running(tool, srv, work, rooms, name) for tool, rooms, name in specs]
    t0 = time.monotonic()
    early = set()
    while time.monotonic() - t0 < seconds and len(early) < len(procs):
        for r in procs:
            r.poll(idle_window)
            if r.reaped:
                early.add(r.name)
        time.sleep(0.05)
    srv_cpu = srv.cpu_seconds() - srv_cpu0
    srv.last_wait = srv.wait_seconds() - srv_wait0
    for r in procs:
        if not r.reaped:
            r.wait_s = run_queue_seconds(r.proc.pid)
    t_stop = time.monotonic()
    for r in procs:
        if not r.reaped:
            r.proc.send_signal(signal.SIGTERM)
    deadline = t_stop + 30
    while time.monotonic() < deadline and not all(r.reaped for r in procs):
        for r in procs:
            if not r.reaped:
                r.hwm = max(r.hwm, peak_rss_kb(r.proc.pid))
                pid, st, ru = os.wait4(r.proc.pid, os.WNOHANG)
                if pid:
                    r.reaped = (st, ru)
                    r.stop_s = time.monotonic() - t_stop
        time.sleep(0.05)
    for r in procs:
        if not r.reaped:
            r.proc.kill()
            _, st, ru = os.wait4(r.proc.pid, 0)
            r.reaped = (st, ru)
            r.killed = True
    return [r.result(seconds, r.name in early) for r in procs], srv_cpu


def run_tool(tool: str, srv: DevServer, work: str, seconds: float, idle_window: tuple[float, float] | None) -> dict:
    (r,), srv_cpu = run_many([(tool, None, tool)], srv, seconds, idle_window, work)
    r["devserver_cpu_s"] = srv_cpu
    r["devserver_wait_s"] = srv.last_wait
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
        if base == "room" and sources:
            try:
                x = decode(path)
            except (av.error.FFmpegError, OSError) as e:
                out["(mix)"] = {"correlation": 0.0, "offset_ms": None, "duration_s": 0.0, "error": str(e)}
                continue
            carried = [as_carried(x, (jumps or {}).get(sid, [])) for sid, x in sources.items()]
            total = np.zeros(max(len(c) for c in carried), dtype=np.float32)
            for c in carried:
                total[:len(c)] += c
            r = compare(x, total)
            r["duration_s"] = len(x) / RATE
            out["(mix)"] = r
            continue
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


# MARK: - Real time

SATURATED = 0.9  # a recorder (or the devserver) using this share of its core or more is not keeping up


def bot_summaries(out: str) -> list[dict]:
    """Every session's summary.json under `out`, each with its events.jsonl as "_events"."""
    found = []
    for root, _, names in os.walk(out):
        if "summary.json" in names:
            try:
                with open(os.path.join(root, "summary.json")) as f:
                    summ = json.load(f)
                events = []
                if "events.jsonl" in names:
                    with open(os.path.join(root, "events.jsonl")) as f:
                        events = [json.loads(line) for line in f if line.strip()]
                summ["_events"] = events
                found.append(summ)
            except (OSError, ValueError):
                pass
    return found


def mid_file_no_packets(events: list[dict], who: str) -> list[int]:
    """The `noPackets` gap events (200 ms or longer) of a participant that do not end where
    their file ends. The one that does is the stop's tail: the time between their last
    packet and SIGTERM (packets still in flight or in the file's 400 ms window), not the
    recorder falling behind. Shorter noPackets remainders in summary.json come from
    relabelling a fill once the next packet says why it was silent, and are not counted."""
    ends = [e["offset_ms"] for e in events if e.get("type") == "file_finished"
            and (e.get("participant") or {}).get("identity") == who]
    return [e["duration_ms"] for e in events
            if e.get("type") == "gap" and e.get("cause") == "noPackets" and (e.get("participant") or {}).get("identity") == who
            and not any(abs(e["offset_ms"] + e["duration_ms"] - end) <= 50 for end in ends)]


def voiced_seconds(sources: dict[str, np.ndarray], seconds: float) -> dict[str, float]:
    """Per speaker, how much of the source has sound in the part a run of `seconds` can
    hear: the speakers start LEAD_IN after the recorder joins (about a second)."""
    m = int(max(0.0, seconds - LEAD_IN - 1) * RATE)
    return {sid: float(np.count_nonzero(x[:m])) / RATE for sid, x in sources.items()}


def bot_room_verdict(summary: dict | None, n: int, talk_s: float, voiced: dict[str, float] | None = None,
                     min_file_s: dict[str, float] | None = None) -> list[str]:
    """Why a bot session was not recorded in real time; [] when it was. Real time means:
    the session ended cleanly (exit 0); every speaker has a file, of at least half the
    talking time (a file that starts later than that means the bot took too long to get
    in; `min_file_s` gives each identity its own least length instead, see
    meeting_room_rules); no file has time of any gap cause but `dtx` or `mute` in summary.json (no `loss`,
    `reconnect`, `write_error`) and no `noPackets` gap event but the stop's tail (see
    mid_file_no_packets); and no packet came too late for its place: `late` (the file's
    400 ms window) and `mix_late` (the live path's 60 ms) are 0."""
    if summary is None:
        return ["no summary.json"]
    why = []
    if summary.get("exit_code") != 0:
        why.append(f"exit {summary.get('exit_code')} ({summary.get('end_reason')})")
    people = [p for p in summary.get("participants") or [] if p.get("file")]
    if len(people) < n:
        why.append(f"{len(people)}/{n} participant files")
    events = summary.get("_events") or []
    for p in people:
        who = p.get("identity")
        least = min_file_s[who] if min_file_s and who in min_file_s else 0.5 * talk_s
        if (p.get("duration_ms") or 0) < least * 1000:
            why.append(f"{who}: {p.get('duration_ms')} ms file")
        for cause, ms in (p.get("gaps_ms") or {}).items():
            if cause not in ("dtx", "mute", "noPackets") and ms > 0:
                why.append(f"{who}: {cause} gap {ms} ms")
        for ms in mid_file_no_packets(events, who):
            why.append(f"{who}: noPackets gap {ms} ms")
        for k in ("late", "mix_late"):
            if p.get(k):
                why.append(f"{who}: {k} {p[k]}")
        # The devserver's speakers send nothing in their pauses, so a server that falls
        # behind looks like DTX in the file: count the audio that arrived instead.
        if voiced and who in voiced and (p.get("packets") or 0) * 0.02 < 0.8 * voiced[who]:
            why.append(f"{who}: {(p.get('packets') or 0) * 0.02:.1f} s of audio arrived of {voiced[who]:.1f} s played")
    return why


def realtime_verdict(r: dict, n: int, seconds: float, cores: int) -> list[str]:
    """[] when the run recorded in real time (see bot_room_verdict for bedrud-bot; for a
    peer: every speaker's file decodes to at least 90 % of the talking time and the
    process finished its files within 30 s of SIGTERM); for every tool also: the recorder
    used less than 90 % of the cores it may run on."""
    talk = seconds - LEAD_IN
    why = []
    if r["tool"] == "bedrud-bot":
        sums = bot_summaries(r["out"])
        why += bot_room_verdict(sums[0] if sums else None, n, talk, r.get("_voiced"))
    else:
        if r["killed"]:
            why.append("killed: did not finish its files within 30 s of SIGTERM")
        fid = r.get("fidelity") or {}
        if r.get("tracks_recorded", 0) < n:
            why.append(f"{r.get('tracks_recorded', 0)}/{n} files decode")
        for who, f in fid.items():
            if f.get("duration_s", 0) < 0.9 * talk:
                why.append(f"{who}: {f.get('duration_s', 0):.1f} s file")
    share = r["cpu_s"] / max(1e-9, r["wall_s"]) / cores
    if share >= SATURATED:
        why.append(f"CPU {share * 100:.0f} % of {cores} core(s)")
    return why


# MARK: - The run

STARVED = 0.5  # threads that wait for a CPU as long as they run: the server's core is oversubscribed


def server_busy(cpu_s: float, wait_s: float, seconds: float) -> float:
    """How close the devserver is to not keeping up, as a share: its CPU share of its core,
    or 1 when its threads spent at least as long waiting for a CPU as running (other
    processes on its core, e.g. a build: a failure then says nothing about the recorder)."""
    seconds = max(seconds, 1e-9)
    return 1.0 if wait_s / max(1e-9, wait_s + cpu_s) >= STARVED else cpu_s / seconds

def pinned_cores() -> int:
    if not Opts.pin:
        return os.cpu_count() or 1
    n = 0
    for part in Opts.pin.split(","):
        lo, _, hi = part.partition("-")
        n += (int(hi) - int(lo) + 1) if hi else 1
    return n


def server_pin() -> str | None:
    """The devserver (and its speakers) run on the cores the recorders do not."""
    if not Opts.pin:
        return None
    used = set()
    for part in Opts.pin.split(","):
        lo, _, hi = part.partition("-")
        used.update(range(int(lo), int(hi or lo) + 1))
    rest = [str(c) for c in range(os.cpu_count() or 1) if c not in used]
    return ",".join(rest) if rest else None


def one_run(tool: str, n: int, seconds: float, keep: str | None) -> dict:
    work = tempfile.mkdtemp(prefix=f"bench-peers-{tool}-{n}-", dir=keep)
    try:
        path, sources = scenario(work, n, seconds) if n else (None, {})
        if not n:
            with open(os.path.join(work, "empty.scenario"), "w") as f:
                f.write("room bench public\n")
            path = os.path.join(work, "empty.scenario")
        srv = DevServer(work, path, server_pin())
        try:
            r = run_tool(tool, srv, work, seconds, (min(10.0, seconds / 3), seconds - 1) if not n else None)
            jumps = catch_ups(srv.url) if n else {}
        finally:
            srv.stop()
        r["n"] = n
        r["seconds"] = seconds
        r["devserver_share"] = server_busy(r["devserver_cpu_s"], r["devserver_wait_s"], seconds)
        if n:
            fid = fidelity(r["files"], sources, jumps)
            r["mix_fidelity"] = fid.pop("(mix)", None)
            r["fidelity"] = fid
            r["tracks_recorded"] = sum(1 for f in fid.values() if "error" not in f)
            r["broken"] = r["exited_early"] or r["tracks_recorded"] < n
            r["_voiced"] = voiced_seconds({sid: as_carried(x, jumps.get(sid, [])) for sid, x in sources.items()}, seconds)
            r["not_realtime"] = realtime_verdict(r, n, seconds, pinned_cores())
            del r["_voiced"]
        else:
            r["broken"] = r["exited_early"]
        r["files"] = [os.path.relpath(p, work) for p in r["files"]]
        return r
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


class RoomMeetings:
    """`--room-meeting N`: every room of a --rooms run is a generated realistic meeting of N
    people (bedrud_devserver.meeting) instead of always-talking speakers. Room benchI is
    the meeting of seed `seed + I - 1`, so a room is the same meeting at every K (and each
    is generated once per bench-peers run)."""

    def __init__(self, people: int, minutes: float, seed: int) -> None:
        self.people, self.minutes, self.seed = people, minutes, seed
        self.made: dict[str, object] = {}

    def meeting(self, room: str, index: int):  # type: ignore[no-untyped-def]
        if room not in self.made:
            from bedrud_devserver.meeting import generate
            m = generate(self.people, self.minutes, self.seed + index, room=room)
            m.argv = f"bench-peers --room-meeting {self.people} (room {room}, seed {self.seed + index}, {self.minutes:g} min)"
            self.made[room] = m
        return self.made[room]

    def write(self, work: str, room: str, index: int):  # type: ignore[no-untyped-def]
        m = self.meeting(room, index)
        path = os.path.join(work, "meeting.scenario")
        with open(path, "w") as f:
            f.write(m.scenario_text())
        with open(os.path.join(work, "meeting.json"), "w") as f:
            json.dump(m.truth(), f, indent=1)
        return path, m


def meeting_room_rules(m, session_s: float) -> tuple[int, dict[str, float], dict[str, float]]:  # type: ignore[no-untyped-def]
    """bot_room_verdict's rules for one generated meeting, whose scenario starts when the
    bot joins (`start first-join`) and which the bot recorded for `session_s` (its
    summary's duration): who must have a file (everyone who joined at least a second
    before the end, muted or not: a muted person's file is silence); the least length of
    each file (half the person's time in the room during the session: late joiners and
    early leavers have shorter files); and each person's voiced seconds from the
    meeting's truth (the turns' spans with sound) up to a second before the end (the
    stop's tail), which the packets that arrived must cover (0.8 of it, as for the
    worst case's speakers)."""
    expected = [p for p in m.people if p.join_at < session_s - 1.0]
    min_file = {p.identity: 0.5 * max(0.0, min(session_s, p.leave_at if p.leave_at is not None else session_s) - p.join_at)
                for p in expected}
    voiced: dict[str, float] = {}
    for t in m.turns:
        for a, b in t.voiced:
            voiced[t.who] = voiced.get(t.who, 0.0) + max(0.0, min(b, session_s - 1.0) - a)
    return len(expected), min_file, voiced


def rooms_run(k: int, speakers: int, seconds: float, one_process: bool, keep: str | None,
              meetings: RoomMeetings | None = None) -> dict:
    """K live rooms of `speakers` each on one devserver, recorded by bedrud-bot: one
    process per room, or (`one_process`) one `join LINK1 … LINKK --record` for all. With
    `meetings`, each room is a generated meeting instead (see RoomMeetings) and the run
    lasts the longest meeting plus 4 s."""
    work = tempfile.mkdtemp(prefix=f"bench-peers-rooms-{k}-", dir=keep)
    try:
        paths, rooms, sources, made = [], [], {}, {}
        for i in range(k):
            room = f"bench{i + 1}"
            d = os.path.join(work, room)
            os.makedirs(d)
            if meetings:
                path, made[room] = meetings.write(d, room, i)
            else:
                path, sources[room] = scenario(d, speakers, seconds, room)
            paths.append(path)
            rooms.append(room)
        if meetings:
            # The recorder joins about a second after it starts; each room's scenario starts then.
            seconds = max(m.duration for m in made.values()) + 4.0
        # Clips coded once at load (media.CodedClip), so the Python server's libopus is not
        # what limits K; the rendering of K rooms' clips (espeak-ng) may take a while.
        srv = DevServer(work, paths, server_pin(), ["--scripted-precode"] if Opts.precode else None,
                        ready_s=120 + 10 * k)
        try:
            if one_process:
                runs, srv_cpu = run_many([("bedrud-bot", rooms, "bedrud-bot")], srv, seconds, None, work)
            else:
                runs, srv_cpu = run_many([("bedrud-bot", [room], "bot-" + room) for room in rooms], srv, seconds, None, work)
            try:  # the scripted speakers that fell behind the wall clock (the server's lateness, not the bot's)
                jumps = catch_ups_by_room(srv.url)
            except (OSError, ValueError):
                jumps = {}
        finally:
            srv.stop()
        talk = seconds - LEAD_IN
        by_room = {}
        for r in runs:
            for summ in bot_summaries(r["out"]):
                by_room[summ.get("room")] = summ
        verdicts = {}
        talk_sent = 0.0  # seconds of speech the scripted speakers played in the run, all rooms
        for room in rooms:
            summ = by_room.get(room)
            if meetings:
                talk_sent += sum(max(0.0, min(t.end, seconds - 1.0) - t.start) for t in made[room].turns)
            else:
                talk_sent += speakers * max(0.0, seconds - LEAD_IN - 1.0)
            if meetings:
                session_s = (summ.get("duration_ms") or 0) / 1000 if summ else seconds
                n, least, voiced = meeting_room_rules(made[room], session_s)
                verdicts[room] = bot_room_verdict(summ, n, talk, voiced, least)
            else:
                verdicts[room] = bot_room_verdict(summ, speakers, talk, voiced_seconds(sources[room], seconds))
        behind = {room: sum(n for js in jumps.get(room, {}).values() for _, n in js) / 48 for room in rooms}
        cpu = sum(r["cpu_s"] for r in runs)
        cores = pinned_cores()
        share = cpu / seconds / cores
        res = {"k": k, "speakers": speakers, "seconds": seconds, "one_process": one_process, "processes": len(runs),
               "meeting": {"people": meetings.people, "minutes": meetings.minutes,
                           "seeds": [meetings.seed + i for i in range(k)]} if meetings else None,
               "cpu_s": cpu, "core_share": share, "room_share": share / k,
               "devserver_share": server_busy(srv_cpu, srv.last_wait, seconds),
               "devserver_cpu_share": srv_cpu / seconds, "devserver_wait_share": srv.last_wait / seconds,
               "devserver_catch_up_ms": {room: ms for room, ms in behind.items() if ms},
               "devserver_behind_share": sum(behind.values()) / 1000 / max(1e-9, talk_sent), "talk_s": talk_sent,
               "devserver_catch_ups": {room: {who: js for who, js in jumps.get(room, {}).items() if js}
                                       for room in rooms if behind[room]},
               "run_queue_s": sum(r["run_queue_s"] for r in runs),
               "peak_rss_kb": sum(r["peak_rss_kb"] for r in runs), "verdicts": verdicts,
               "exits": [r["exit"] for r in runs], "logs": [r["log"] for r in runs],
               "early": [r["name"] for r in runs if r["exited_early"]]}
        if one_process and runs[0]["exited_early"] and not by_room:
            with open(runs[0]["log"]) as f:
                res["error"] = f"bedrud-bot join with {k} room links exited {runs[0]['exit']} at once: " + \
                    " / ".join(f.read().strip().splitlines()[:3] or ["(no output)"])[:300] + \
                    " (--one-process needs `bedrud-bot join ROOM ROOM… --record`, branch multiroom)"
        res["realtime"] = "error" not in res and not res["early"] and share < SATURATED and not any(verdicts.values())
        return res
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


BEHIND = 0.01  # the devserver's speakers may fall behind the wall clock by 1 % of their talk (machine noise)


def devserver_sustained(res: dict) -> bool:
    """The devserver kept its K rooms in real time: its busy share (server_busy) under
    SATURATED, and its speakers' catch-ups (each a jump of 200 ms or more when its event
    loop was late, roomref.catch_ups_by_room) at most BEHIND of the speech they played.
    A loop that is late sends the rooms less than real time, so the bot's figures then
    read low: such a K measures the devserver."""
    return res["devserver_share"] < SATURATED and res.get("devserver_behind_share", 0.0) <= BEHIND \
        and not res.get("server_error")


def rooms_fit(results: list[dict]) -> dict:
    """Least squares of the bot's share of its core against K, over the runs with every
    room in real time and the devserver keeping up (devserver_sustained: a server that
    falls behind sends less, so the bot's share would read low), and where that line
    reaches the whole core (and the SATURATED real-time limit): an extrapolation, not a
    measurement."""
    pts: dict[int, float] = {}
    for r in results:
        if r["realtime"] and devserver_sustained(r):
            pts[r["k"]] = r["core_share"]  # a K measured twice: the later run
    ks = sorted(pts)
    out: dict = {"ks": ks, "slope": None, "intercept": None, "rooms_per_core": None, "rooms_at_limit": None}
    if len(ks) < 2:
        return out
    mk = sum(ks) / len(ks)
    ms = sum(pts.values()) / len(ks)
    b = sum((k - mk) * (pts[k] - ms) for k in ks) / sum((k - mk) ** 2 for k in ks)
    a = ms - b * mk
    out.update(slope=b, intercept=a)
    if b > 0:
        out.update(rooms_per_core=(1.0 - a) / b, rooms_at_limit=(SATURATED - a) / b)
    return out


def devserver_limit(results: list[dict]) -> str:
    """Whether the devserver, not the bot, was what bounded the run (devserver_sustained):
    its busy share (CPU of its core, or 1 when starved, see server_busy) at SATURATED or
    more, or its speakers behind the wall clock by more than BEHIND of their talk."""
    if not results:
        return "no runs"
    top = max(results, key=lambda r: r["devserver_share"])
    lost = [r for r in results if not devserver_sustained(r)]
    kept = [r["k"] for r in results if devserver_sustained(r)]
    if lost:
        def why(r: dict) -> str:
            if r.get("server_error"):
                return f"K={r['k']} (did not start: {r['server_error'][:80]})"
            return (f"K={r['k']} (busy {r['devserver_share']:.2f}, run-queue wait {r['devserver_wait_share'] * 100:.0f} %, "
                    f"speakers behind by {r.get('devserver_behind_share', 0) * 100:.1f} % of their talk)")
        failed = [r["k"] for r in lost if not r["realtime"]]
        return (f"yes, from K={min(r['k'] for r in lost)}: the devserver did not keep up at " + ", ".join(map(why, lost))
                + f"; largest K it sustained: {max(kept) if kept else 'none'}. Those runs measure the devserver, not the bot"
                + (f" (their failures, K={','.join(map(str, failed))}, say nothing about the bot)" if failed else "")
                + "; they are left out of the slope")
    note = ""
    failed = [r for r in results if not r["realtime"]]
    if failed:
        note = "; the failures at " + ", ".join(f"K={r['k']} (bot {r['core_share'] * 100:.0f} % of its core)" for r in failed) + \
            " had the devserver keeping up: the bot's limit"
    behind = max(results, key=lambda r: r.get("devserver_behind_share", 0))
    return (f"no: the devserver kept up at every K (busy at most {top['devserver_share']:.2f} of its core, K={top['k']}; "
            f"speakers behind at most {behind.get('devserver_behind_share', 0) * 100:.2f} % of their talk, "
            f"K={behind['k']})" + note)


def med(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarize(runs: list[dict], ns: list[int], seconds: float, most: dict | None = None) -> tuple[str, dict]:
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
            row[f"mixcorr@{n}"] = med([(r.get("mix_fidelity") or {}).get("correlation") for r in rs])
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
                 (f"N={n}: median track duration, s", f"dur_s@{n}", 1),
                 (f"N={n}: mix correlation with the sum of the sources", f"mixcorr@{n}", 3)]
    if len(ns) >= 2:
        keys.append((f"RSS MiB per extra track (N={min(ns)}→{max(ns)})", "rss_mb_per_track", 2))
    for label, key, d in keys:
        if key.startswith("mixcorr@") and all(rows[t].get(key) is None for t in TOOLS):
            continue
        cells = [fmt(rows["bedrud-bot"].get(key), d)]
        for tool in TOOLS[1:]:
            cell = fmt(rows[tool].get(key), d) + (ratio(tool, key) if "corr" not in key and "dur" not in key else "")
            if key.startswith("mixcorr@") and rows[tool].get(key) is None:
                cell = "no mix"
            if key.startswith("first_audio_s@") and rows[tool].get("first_audio_at_stop@" + key.split("@")[1]):
                cell = "only at stop"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if most:
        cells = []
        for tool in TOOLS:
            m = most.get(tool)
            cells.append("not run" if m is None else most_cell(m))
        lines.append(f"| most speakers in one room recorded in real time ({pin_label()}) | " + " | ".join(cells) + " |")
    return "\n".join(lines), rows


def pin_label() -> str:
    return f"recorder on CPU {Opts.pin}, devserver on {server_pin()}" if Opts.pin else "unpinned"


def most_cell(m: dict) -> str:
    if m["max"] is None:
        if m.get("bound") == "server":
            return f"not measured: at {m['fail']} the devserver was behind too"
        return f"< {min(n for n, *_ in m['tried'])}"
    bound = m.get("bound")
    note = {"cap": "≥, the cap", "server": f"≥; at {m['fail']} the devserver was behind too", None: ""}[bound]
    return f"{m['max']}" + (f" ({note})" if note else f" (fails at {m['fail']})")


# MARK: - Meetings (--meeting)

def meeting_files(work: str, n: int, minutes: float, seed: int):  # type: ignore[no-untyped-def]
    """A generated meeting of n people (bedrud_devserver.meeting) in room `bench`, written
    once per size and replayed for every recorder and round."""
    from bedrud_devserver.meeting import generate
    m = generate(n, minutes, seed, room="bench")
    m.argv = f"bench-peers --meeting {n} (seed {seed}, {minutes:g} min)"
    path = os.path.join(work, f"meeting-{n}.scenario")
    with open(path, "w") as f:
        f.write(m.scenario_text())
    with open(os.path.join(work, f"meeting-{n}.json"), "w") as f:
        json.dump(m.truth(), f, indent=1)
    return path, m


def score_meeting(files: list[str], m) -> dict:  # type: ignore[no-untyped-def]
    """Every speaking track turn by turn, and the mix with each source at its own offset
    (bench_peers/meeting_score.py)."""
    from .meeting_score import coarse_lag, find_clip, mix_fidelity, mono, opus_tags, pearson, track_fidelity
    truth = m.truth()
    by_name = {p["name"]: p["identity"] for p in truth["people"]}
    speaking = sorted({t.who for t in m.turns})
    sources = m.sources()
    turns = {who: [(t.start, mono(c)) for t, c in zip(m.turns, m.clips) if t.who == who] for who in speaking}
    tracks: dict[str, dict] = {}
    found: dict[str, str] = {}
    room_path = None
    for path in files:
        base = os.path.basename(path).split(".")[0]
        if base == "room":
            room_path = path
        elif base in turns:
            found[base] = path
        elif by_name.get(base) in turns:
            found[by_name[base]] = path
    placed: dict[str, list[int]] = {}
    for who in speaking:
        if who not in found:
            tracks[who] = {"correlation": 0.0, "missing": True}
            continue
        try:
            x = decode(found[who])
        except (av.error.FFmpegError, OSError) as e:
            tracks[who] = {"correlation": 0.0, "error": str(e)}
            continue
        tf = track_fidelity(x, sources[who], turns[who])
        start = opus_tags(found[who]).get("START_OFFSET_MS")
        tracks[who] = {"correlation": tf["correlation"], "offset_ms": tf["offset_ms"], "spread_ms": tf["spread_ms"],
                       "start_offset_ms": int(start) if start and start.lstrip("-").isdigit() else None,
                       "duration_s": len(x) / RATE}
        if tracks[who]["start_offset_ms"] is not None:
            placed[who] = [pos + tracks[who]["start_offset_ms"] * 48 for pos, _ in tf["turns"]]
    out: dict = {"tracks": tracks, "tracks_recorded": sum(1 for t in tracks.values() if "missing" not in t
                                                          and "error" not in t), "speakers": len(speaking)}
    if room_path is None:
        return out
    try:
        room = decode(room_path)
    except (av.error.FFmpegError, OSError) as e:
        out["mix"] = {"error": str(e)}
        return out
    total = np.zeros(max(len(v) for v in sources.values()), np.float32)
    for v in sources.values():
        total[:len(v)] += v
    lag = coarse_lag(room, total)
    a0, b0 = max(0, lag), max(0, -lag)
    mix = {"one_lag": pearson(room[a0:], total[b0:]), "offset_ms": lag / 48}
    clips = [mono(c) for c in m.clips]
    searched = [find_clip(room, c, int(round(t.start * RATE)) + lag, int(0.5 * RATE))[0] for t, c in zip(m.turns, clips)]
    mix["searched"] = mix_fidelity(room, clips, searched)
    if all(who in placed for who in speaking):
        index = {who: 0 for who in speaking}
        positions = []
        for t in m.turns:
            positions.append(placed[t.who][index[t.who]])
            index[t.who] += 1
        mix["tags"] = mix_fidelity(room, clips, positions)
        # How far each turn sits in the mix from where its file and tag put it (turns that
        # were found in the mix), and the figure with each turn allowed ±1 ms around its
        # tag position: START_OFFSET_MS is whole milliseconds, and half a millisecond is a
        # quarter period at 500 Hz, enough to lower a waveform correlation by itself.
        found_in_mix = [find_clip(room, c, p, int(0.5 * RATE)) for c, p in zip(clips, positions)]
        errs = sorted(abs(f[0] - p) / 48 for f, p in zip(found_in_mix, positions) if f[1] > 0.5)
        mix["tag_error_ms"] = {"median": errs[len(errs) // 2], "max": errs[-1], "turns": len(errs)} if errs else None
        mix["tags_1ms"] = mix_fidelity(room, clips, [find_clip(room, c, p, 48)[0] for c, p in zip(clips, positions)])
        # A lone voice passed through (record.mix_passthrough): where, and what its switches do.
        from .mix_switches import measure as measure_switches
        mix["switches"] = measure_switches(os.path.dirname(room_path))
    out["mix"] = mix
    return out


def meeting_run(tool: str, n: int, path: str, m, seconds: float, keep: str | None) -> dict:  # type: ignore[no-untyped-def]
    work = tempfile.mkdtemp(prefix=f"bench-peers-meeting-{tool}-{n}-", dir=keep)
    try:
        srv = DevServer(work, path, server_pin())
        try:
            r = run_tool(tool, srv, work, seconds, None)
        finally:
            srv.stop()
        r.update(n=n, seconds=seconds, meeting=True)
        r["devserver_share"] = server_busy(r["devserver_cpu_s"], r["devserver_wait_s"], seconds)
        r.update(score_meeting(r["files"], m))
        r["broken"] = r["exited_early"] or r["tracks_recorded"] == 0
        if tool == "bedrud-bot":
            sums = bot_summaries(r["out"])
            people = (sums[0].get("participants") or []) if sums else []
            r["bot_exit"] = sums[0].get("exit_code") if sums else None
            r["late_packets"] = sum((p.get("late") or 0) + (p.get("mix_late") or 0) for p in people)
        r["files"] = [os.path.relpath(p, work) for p in r["files"]]
        return r
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def meeting_line(r: dict) -> str:
    tr = r.get("tracks") or {}
    corr = [t["correlation"] for t in tr.values()]
    mix = r.get("mix") or {}
    return (f"{r['tracks_recorded']}/{r.get('speakers', 0)} speaking tracks, worst {min(corr, default=0):.3f}, "
            f"mix tags {mix.get('tags', float('nan')):.3f} searched {mix.get('searched', float('nan')):.3f} "
            f"one-lag {mix.get('one_lag', float('nan')):.3f}")


def meeting_summarize(runs: list[dict], sizes: list[int], minutes: float) -> str:
    def fmt(v, d=2):  # type: ignore[no-untyped-def]
        return "—" if v is None else f"{v:.{d}f}"
    rows: dict[str, dict] = {}
    for tool in TOOLS:
        row: dict = {}
        for n in sizes:
            rs = [r for r in runs if r["tool"] == tool and r["n"] == n]
            if not rs:
                continue
            row[f"cpu@{n}"] = med([r["cpu_s"] / (r["seconds"] / 60) for r in rs])
            row[f"rss@{n}"] = med([r["peak_rss_kb"] / 1024 for r in rs])
            row[f"first@{n}"] = med([r["first_audio_s"] for r in rs])
            row[f"stop@{n}"] = any(r.get("first_audio_only_at_stop") for r in rs)
            row[f"worst@{n}"] = med([min((t["correlation"] for t in r["tracks"].values()), default=0) for r in rs])
            row[f"median@{n}"] = med([statistics.median([t["correlation"] for t in r["tracks"].values()])
                                      if r["tracks"] else None for r in rs])
            row[f"spread@{n}"] = med([max((t.get("spread_ms") or 0 for t in r["tracks"].values()), default=None) for r in rs])
            row[f"recorded@{n}"] = f"{min(r['tracks_recorded'] for r in rs)}/{rs[0].get('speakers', 0)}"
            for k in ("tags", "tags_1ms", "searched", "one_lag"):
                row[f"mix_{k}@{n}"] = med([(r.get("mix") or {}).get(k) for r in rs])
            row[f"mix_tagerr@{n}"] = med([((r.get("mix") or {}).get("tag_error_ms") or {}).get("median") for r in rs])
            row[f"mix_tagmax@{n}"] = med([((r.get("mix") or {}).get("tag_error_ms") or {}).get("max") for r in rs])
            sw = [(r.get("mix") or {}).get("switches") or {} for r in rs]
            row[f"mix_passed@{n}"] = med([x.get("passed_share") for x in sw])
            row[f"mix_runs@{n}"] = med([x.get("runs") for x in sw])
            row[f"mix_step@{n}"] = med([x.get("step_excess_max") for x in sw])
            row[f"mix_swdiff@{n}"] = med([x.get("diff_rms_rel_median") for x in sw])
            row[f"mix_swdiffmax@{n}"] = med([x.get("diff_rms_rel_max") for x in sw])
            row[f"mix_inside@{n}"] = med([x.get("inside_runs_diff_rms_rel_median") for x in sw])
            row[f"mix_encoded@{n}"] = med([x.get("encoded_diff_rms_rel_median") for x in sw])
            row[f"server@{n}"] = med([r["devserver_cpu_s"] / r["seconds"] for r in rs])
        rows[tool] = row
    used = [t for t in TOOLS if rows.get(t)]
    lines = ["| measure | " + " | ".join(used) + " |", "|" + "---|" * (len(used) + 1)]
    keys = []
    for n in sizes:
        keys += [(f"N={n}: CPU s per meeting-minute", f"cpu@{n}", 3, True),
                 (f"N={n}: peak RSS MiB", f"rss@{n}", 1, True),
                 (f"N={n}: first audio on disk, s", f"first@{n}", 2, False),
                 (f"N={n}: speaking tracks recorded", f"recorded@{n}", None, False),
                 (f"N={n}: worst speaking track correlation (turn by turn)", f"worst@{n}", 3, False),
                 (f"N={n}: median speaking track correlation", f"median@{n}", 3, False),
                 (f"N={n}: largest turn spread in a track, ms", f"spread@{n}", 0, False),
                 (f"N={n}: mix correlation, each turn at its file's offset (START_OFFSET_MS, ±1 ms)", f"mix_tags_1ms@{n}", 3, False),
                 (f"N={n}: turns in the mix off their tag position, median ms", f"mix_tagerr@{n}", 1, False),
                 (f"N={n}: turns in the mix off their tag position, largest ms", f"mix_tagmax@{n}", 1, False),
                 (f"N={n}: mix correlation, each turn searched in the mix", f"mix_searched@{n}", 3, False),
                 (f"N={n}: mix correlation, the sources summed at one lag (the old figure)", f"mix_one_lag@{n}", 3, False),
                 (f"N={n}: mix packets that are a lone voice's own (passthrough), share", f"mix_passed@{n}", 3, False),
                 (f"N={n}: passthrough runs", f"mix_runs@{n}", 0, False),
                 (f"N={n}: switches: largest sample step beyond the reference mix's (full scale 1)", f"mix_step@{n}", 4, False),
                 (f"N={n}: switches with sound: mix − reference, RMS relative to the reference, median", f"mix_swdiff@{n}", 3, False),
                 (f"N={n}: the same, largest", f"mix_swdiffmax@{n}", 3, False),
                 (f"N={n}: the same inside passthrough runs (against the file the packets came from), median", f"mix_inside@{n}", 4, False),
                 (f"N={n}: the same in encoded stretches (the mix coder alone), median", f"mix_encoded@{n}", 3, False),
                 (f"N={n}: devserver CPU, share of a core", f"server@{n}", 2, False)]
    for label, key, d, ratio in keys:
        cells = []
        base = rows.get("bedrud-bot", {}).get(key)
        for tool in used:
            v = rows[tool].get(key)
            if d is None:
                cells.append(str(v) if v is not None else "—")
                continue
            cell = fmt(v, d)
            if key.startswith("mix_") and v is None:
                cell = "no mix" if tool == "aiortc" else ("no tags" if key.startswith(("mix_tag")) else "—")
            if key.startswith("first@") and rows[tool].get("stop@" + key.split("@")[1]):
                cell = "only at stop"
            if ratio and tool != "bedrud-bot" and base and v is not None:
                cell += f" ({v / base:.1f}×)"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_meetings(sizes: list[int], tools: list[str], minutes: float, seed: int, rounds: int, keep: str | None,
                 jsonl: str | None) -> list[dict]:
    gen = tempfile.mkdtemp(prefix="bench-peers-meetings-", dir=keep)
    runs = []
    try:
        for n in sizes:
            path, m = meeting_files(gen, n, minutes, seed)
            talk = sum(t.end - t.start for t in m.turns)
            print(f"[bench-peers] meeting N={n}: {len(m.turns)} turns, {talk:.0f} s of talk in {m.duration:.0f} s, "
                  f"{sum(p.muted for p in m.people)} muted, {len(m.chats)} chats ({path})", flush=True)
            # The recorder joins about a second after it starts; the scenario starts then.
            seconds = m.duration + 4.0
            for rnd in range(rounds):
                for tool in tools:  # A B C A B C…, as the worst case alternates them
                    r = meeting_run(tool, n, path, m, seconds, keep)
                    runs.append(r)
                    if jsonl:
                        with open(jsonl, "a") as f:
                            f.write(json.dumps(dict(r, search="meeting"), default=str) + "\n")
                    print(f"[bench-peers] meeting N={n} round {rnd + 1} {tool}: {'BROKEN' if r['broken'] else 'ok'}, "
                          f"exit {r['exit']}, cpu {r['cpu_s']:.2f} s (waited {r['run_queue_s']:.1f} s for a CPU), "
                          f"rss {r['peak_rss_kb'] / 1024:.1f} MiB, first audio {r['first_audio_s']}, "
                          f"{meeting_line(r)}", flush=True)
    finally:
        if keep is None:
            shutil.rmtree(gen, ignore_errors=True)
    return runs


# MARK: - Searches

class Search:
    """The largest size that passes, by doubling from `start` up to `cap` and then
    halving the interval between the largest pass and the smallest failure until they
    are within an eighth of each other. A failure while the devserver was behind too (see
    server_busy) ends the search there: the server, not the recorder, may be what fell
    behind, so the result is "at least the largest pass"."""

    def __init__(self, start: int, cap: int) -> None:
        self.cap, self.lo, self.hi = cap, 0, None
        self.next: int | None = min(start, cap)
        self.tried: list[tuple[int, bool, list[str], float]] = []
        self.bound: str | None = None

    def record(self, n: int, ok: bool, why: list[str], server_share: float) -> None:
        self.tried.append((n, ok, why, server_share))
        if ok:
            self.lo = max(self.lo, n)
        else:
            self.hi = n if self.hi is None else min(self.hi, n)
            if server_share >= SATURATED:  # the server fell behind too: this failure says nothing about the recorder
                self.bound = "server"
                self.next = None
                return
        if self.hi is None:
            if self.lo >= self.cap:
                self.bound = "cap"
                self.next = None
            else:
                self.next = min(self.cap, self.lo * 2)
            return
        if self.hi - self.lo <= max(1, self.lo // 8):
            self.next = None
        else:
            self.next = (self.lo + self.hi) // 2

    def result(self) -> dict:
        return {"max": self.lo or None, "fail": self.hi, "bound": self.bound, "tried": self.tried}


def search_max(tools: list[str], seconds: float, caps: dict[str, int], keep: str | None, jsonl: str | None) -> dict:
    searches = {t: Search(4, caps[t]) for t in tools}
    step = 0
    while any(s.next is not None for s in searches.values()):
        step += 1
        for tool in tools:  # each step A B C, so drift hits every tool alike
            srch = searches[tool]
            if srch.next is None:
                continue
            n = srch.next
            try:
                r = one_run(tool, n, seconds, keep)
            except RuntimeError as e:  # the devserver did not come up with N speakers: the server's limit
                print(f"[bench-peers] most: {tool} N={n}: {e}; the search stops here", flush=True)
                srch.tried.append((n, False, [str(e)], 1.0))
                srch.hi = n if srch.hi is None else min(srch.hi, n)
                srch.bound, srch.next = "server", None
                continue
            why = r["not_realtime"] + (["broken run"] if r["broken"] else [])
            srch.record(n, not why, why, r["devserver_share"])
            if jsonl:
                with open(jsonl, "a") as f:
                    f.write(json.dumps(dict(r, search="max"), default=str) + "\n")
            print(f"[bench-peers] most: {tool} N={n}: {'real time' if not why else 'NOT real time: ' + '; '.join(why[:4])}"
                  f" (cpu {r['cpu_s']:.1f} s = {r['cpu_s'] / r['wall_s'] * 100:.0f} % of a core, waited {r['run_queue_s']:.1f} s "
                  f"for it; devserver {r['devserver_cpu_s'] / seconds * 100:.0f} % of its core, waited "
                  f"{r['devserver_wait_s'] / seconds * 100:.0f} % of the time)", flush=True)
    return {t: s.result() for t, s in searches.items()}


def rooms_line(res: dict) -> str:
    ok = sum(1 for v in res["verdicts"].values() if not v)
    why = res.get("error") or res.get("server_error") or "; ".join(f"{room}: {', '.join(v[:2])}" for room, v in res["verdicts"].items() if v)[:300]
    if res["early"] and not res.get("error"):
        why = f"exited early: {', '.join(res['early'])}; " + why
    late = res.get("devserver_catch_up_ms") or {}
    behind = f", catch-ups {sum(late.values()) / 1000:.1f} s in {len(late)} room(s)" if late else ""
    waited = res["run_queue_s"] / max(1e-9, res["seconds"])
    load = res.get("loadavg")
    return (f"| {res['k']} | {res['processes']} | {res['cpu_s']:.1f} | {res['core_share'] * 100:.1f} % (waited {waited * 100:.0f} %) | "
            f"{res.get('room_share', 0) * 100:.2f} % | {res['devserver_share']:.2f}, behind "
            f"{res.get('devserver_behind_share', 0) * 100:.1f} %{'' if devserver_sustained(res) else ': NOT KEPT UP'} | "
            f"{res['devserver_cpu_share'] * 100:.0f} % (waited {res['devserver_wait_share'] * 100:.0f} %{behind}) | "
            f"{res['peak_rss_kb'] / 1024:.0f} | {'—' if not load else f'{load[0]:.1f}–{load[1]:.1f}'} | {ok}/{res['k']} | "
            f"{'yes' if res['realtime'] else 'no'}{': ' + why if why and not res['realtime'] else ''} |")


def run_rooms(spec: str, speakers: int, seconds: float, one_process: bool, keep: str | None, jsonl: str | None,
              meetings: RoomMeetings | None = None) -> tuple[list[dict], dict | None]:
    results = []
    search = None
    def one(k: int) -> dict:
        t0, load0 = time.monotonic(), os.getloadavg()[0]
        try:
            res = rooms_run(k, speakers, seconds, one_process, keep, meetings)
        except RuntimeError as e:  # the devserver did not come up with K rooms
            res = {"k": k, "speakers": speakers, "seconds": seconds, "one_process": one_process, "processes": 0,
                   "cpu_s": 0.0, "core_share": 0.0, "room_share": 0.0, "devserver_share": 1.0, "devserver_cpu_share": 0.0,
                   "devserver_wait_share": 0.0, "run_queue_s": 0.0, "peak_rss_kb": 0, "verdicts": {}, "exits": [],
                   "logs": [], "early": [], "realtime": False, "server_error": str(e)}
        res["elapsed_s"] = time.monotonic() - t0  # the run with the devserver's start (clip rendering) and the scoring
        res["loadavg"] = [load0, os.getloadavg()[0]]  # the machine's 1-minute load average (others' work shows here)
        results.append(res)
        if jsonl:
            with open(jsonl, "a") as f:
                f.write(json.dumps(dict(res, search="rooms"), default=str) + "\n")
        print(f"[bench-peers] rooms: {rooms_line(res)}", flush=True)
        return res
    if spec == "max":
        search = Search(1, 64)
        search.next = 1
        while search.next is not None:
            res = one(search.next)
            if res.get("error"):
                break
            search.record(res["k"], res["realtime"] and devserver_sustained(res), [],
                          res["devserver_share"] if devserver_sustained(res) else 1.0)
    else:
        for k in [int(x) for x in spec.split(",") if x]:
            if one(k).get("error"):
                break
    return results, search.result() if search else None


def main() -> int:
    ap = argparse.ArgumentParser(prog="scripts/bench-peers")
    ap.add_argument("--quick", action="store_true", help="N=4, 30 s, one round (the scripts/test size)")
    ap.add_argument("--sizes", default=None, help="room sizes N, comma-separated (default 1,4,16; none with --meeting)")
    ap.add_argument("--seconds", type=float, default=60.0, help="recording time per run")
    ap.add_argument("--rounds", type=int, default=3, help="A B C rounds per size (medians over them)")
    ap.add_argument("--idle-seconds", type=float, default=40.0, help="empty-room run per tool (0: none)")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--json", help="write every run's figures here")
    ap.add_argument("--keep", help="keep each run's folder under this directory")
    ap.add_argument("--max", nargs="?", const=64, type=int, metavar="CAP",
                    help="also find the largest room (speakers) each tool records in real time, up to CAP (default 64; "
                         "the peers up to --max-peers); recorders pinned to one core (see --pin)")
    ap.add_argument("--max-peers", type=int, default=16, metavar="CAP")
    ap.add_argument("--rooms", metavar="K[,K…]|max",
                    help="record K live rooms of --room-speakers speakers (or --room-meeting meetings) at once with "
                         "bedrud-bot pinned to one core, one process per room; 'max' finds the most that stay in real "
                         "time. Prints per K the bot's share of its core and per room, the devserver's busy share, the "
                         "verdicts, then the least-squares slope over the K and the extrapolated rooms per core")
    ap.add_argument("--one-process", action="store_true",
                    help="with --rooms: one `bedrud-bot join LINK1 … LINKK --record` process for all rooms")
    ap.add_argument("--room-speakers", type=int, default=4)
    ap.add_argument("--room-meeting", type=int, metavar="N",
                    help="with --rooms: every room is a generated realistic meeting of N people instead of "
                         "--room-speakers always-talking speakers (room benchI: seed --meeting-seed + I - 1, "
                         "--meeting-minutes long; the run lasts the meeting + 4 s); each room judged real time with "
                         "the worst case's rules, its files and voiced seconds from the meeting's truth. "
                         "E.g. --rooms 4,8,16 --one-process --room-meeting 10: rooms per core for 10-person meetings")
    ap.add_argument("--live-coding", action="store_true",
                    help="with --rooms: the devserver codes its speakers' frames live, as without --scripted-precode "
                         "(default: --scripted-precode, each clip coded once when the scenarios load)")
    ap.add_argument("--room-seconds", type=float, help="recording time of each --rooms run (default --seconds)")
    ap.add_argument("--pin", help="CPU list for the recorders (taskset -c); the devserver gets the other CPUs. "
                                  "Default: 0 with --max or --rooms on a machine of 2 or more CPUs, else unpinned")
    ap.add_argument("--no-pin", action="store_true", help="never pin")
    ap.add_argument("--meeting", metavar="N[,N…]",
                    help="instead of the worst case, record generated realistic meetings of N people "
                         "(bedrud_devserver.meeting: turns, overlaps, backchannels, muted people, DTX)")
    ap.add_argument("--meeting-minutes", type=float, default=2.0, help="length of each --meeting (default 2)")
    ap.add_argument("--meeting-seed", type=int, default=1, help="seed of the --meeting generator (default 1)")
    ap.add_argument("--bot-set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="a bedrud-bot setting for every bot run (repeatable), e.g. record.mix_complexity=2")
    a = ap.parse_args()
    if a.quick:
        a.sizes, a.seconds, a.rounds, a.idle_seconds = "4", 30.0, 1, 15.0
    if a.sizes is None:
        a.sizes = "" if a.meeting else "1,4,16"
    try:
        meetings = [int(x) for x in (a.meeting or "").split(",") if x]
    except ValueError:
        meetings = [0]
    if any(n < 1 for n in meetings) or not 0 < a.meeting_minutes <= 120:
        print("bench-peers: --meeting takes N[,N…] (whole numbers ≥ 1); --meeting-minutes 0..120", file=sys.stderr)
        return 2
    try:
        ns = [int(x) for x in a.sizes.split(",") if x]
    except ValueError:
        print("bench-peers: --sizes takes numbers, e.g. 1,4,16", file=sys.stderr)
        return 2
    tools = [t for t in a.tools.split(",") if t]
    extra = a.max is not None or a.rooms or meetings
    if any(t not in TOOLS for t in tools) or (not ns and not extra) or (ns and min(ns) < 1):
        print(f"bench-peers: --tools from {','.join(TOOLS)}; sizes ≥ 1", file=sys.stderr)
        return 2
    if a.rooms and a.rooms != "max" and not all(x.isdigit() and int(x) > 0 for x in a.rooms.split(",") if x):
        print("bench-peers: --rooms takes K[,K…] (whole numbers ≥ 1) or max", file=sys.stderr)
        return 2
    if a.one_process and not a.rooms:
        print("bench-peers: --one-process goes with --rooms", file=sys.stderr)
        return 2
    if a.room_meeting is not None and (not a.rooms or a.room_meeting < 1):
        print("bench-peers: --room-meeting N (N ≥ 1) goes with --rooms", file=sys.stderr)
        return 2
    if any("=" not in x or not x.partition("=")[0] for x in a.bot_set):
        print("bench-peers: --bot-set takes SECTION.KEY=VALUE, e.g. record.mix_complexity=2", file=sys.stderr)
        return 2
    Opts.bot_set = a.bot_set
    Opts.precode = not a.live_coding
    # The table's runs are pinned only with --pin (a peer may use more than one core, as a
    # user would let it); the searches for the most a core holds are pinned unless --no-pin.
    table_pin = None if a.no_pin else a.pin
    search_pin = None if a.no_pin else (a.pin or ("0" if (os.cpu_count() or 1) >= 2 else None))
    Opts.pin = table_pin
    if (table_pin or (extra and search_pin)) and not shutil.which("taskset"):
        print("bench-peers: taskset (util-linux) is needed to pin; or --no-pin", file=sys.stderr)
        return 2
    if not os.access(BOT, os.X_OK):
        print(f"bench-peers: no bedrud-bot at {BOT}; build it (swift build -c release)", file=sys.stderr)
        return 1
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    runs = []
    plan = (([(0, a.idle_seconds)] if a.idle_seconds > 0 else []) + [(n, a.seconds) for n in ns]) if ns else []
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
                    f" {r.get('tracks_recorded', 0)}/{n} tracks, " + \
                    ("real time" if not r["not_realtime"] else "not real time: " + "; ".join(r["not_realtime"][:3]))
                print(f"[bench-peers] N={n} round {rnd + 1} {tool}: {state}, exit {r['exit']}, cpu {r['cpu_s']:.2f} s "
                      f"(waited {r['run_queue_s']:.1f} s for a CPU), "
                      f"rss {r['peak_rss_kb'] / 1024:.1f} MiB, first audio {r['first_audio_s']}{extra}", flush=True)
    most = None
    Opts.pin = search_pin
    if a.max is not None:
        caps = {t: (a.max if t == "bedrud-bot" else min(a.max, a.max_peers)) for t in tools}
        most = search_max(tools, a.seconds, caps, a.keep, a.json + ".runs.jsonl" if a.json else None)
    rooms, rooms_max = ([], None)
    if a.rooms:
        room_meetings = RoomMeetings(a.room_meeting, a.meeting_minutes, a.meeting_seed) if a.room_meeting else None
        rooms, rooms_max = run_rooms(a.rooms, a.room_speakers, a.room_seconds or a.seconds, a.one_process, a.keep,
                                     a.json + ".runs.jsonl" if a.json else None, room_meetings)
    meeting_runs = run_meetings(meetings, tools, a.meeting_minutes, a.meeting_seed, a.rounds, a.keep,
                                a.json + ".runs.jsonl" if a.json else None) if meetings else []
    table, rows = summarize([r for r in runs if r["tool"] in tools], ns, a.seconds, most) if ns or most else ("", {})
    search_label = pin_label()
    Opts.pin = table_pin
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
    print(f"table runs: {pin_label()}; searches: {search_label}; bedrud-bot settings: {', '.join(a.bot_set) or 'defaults'}\n")
    print(table)
    if meeting_runs:
        print(f"\ngenerated meetings ({a.meeting_minutes:g} min, seed {a.meeting_seed}, medians of {a.rounds} "
              f"round(s), {pin_label()}):\n")
        print(meeting_summarize(meeting_runs, meetings, a.meeting_minutes))
    if rooms:
        mode = "one process for all rooms" if a.one_process else "one process per room"
        if a.room_meeting:
            what = (f"generated {a.room_meeting}-person meetings ({a.meeting_minutes:g} min, room benchI seed "
                    f"{a.meeting_seed}+I-1; recorded {rooms[0]['seconds']:.0f} s)")
        else:
            what = f"{a.room_speakers} always-talking speakers ({a.room_seconds or a.seconds:.0f} s)"
        coding = "clips coded once at load, --scripted-precode" if Opts.precode else "frames coded live"
        print(f"\nlive rooms of {what} recorded by bedrud-bot, {mode}, {search_label}; devserver {coding}:\n")
        print("| rooms | processes | recorder CPU s | of the core (run-queue wait) | per room | devserver busy, speakers "
              "behind (share of their talk) | devserver CPU of its core (run-queue wait, catch-ups) | peak RSS MiB (sum) | load avg (start–end) | rooms in real time "
              "| all in real time |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for res in rooms:
            print(rooms_line(res))
        if rooms_max:
            print(f"\nmost rooms in real time: {most_cell(rooms_max)}")
        fit = rooms_fit(rooms)
        if fit["slope"] is None:
            print(f"\nno slope: fewer than two K with every room in real time and the devserver keeping up "
                  f"(K={','.join(map(str, fit['ks'])) or 'none'})")
        else:
            ks = ",".join(map(str, fit["ks"]))
            print(f"\nleast squares over K={ks} (every room in real time, the devserver keeping up: busy under "
                  f"{SATURATED:.1f}, speakers behind at most {BEHIND * 100:.0f} % of their talk): "
                  f"bot share of its core = {fit['intercept']:.4f} + {fit['slope']:.5f} × rooms "
                  f"({fit['slope'] * 100:.2f} % of a core per added room, intercept {fit['intercept'] * 100:.2f} %)")
            if fit["rooms_per_core"] is not None:
                print(f"extrapolated rooms per core: {fit['rooms_per_core']:.0f} (EXTRAPOLATION from K={ks}, not a "
                      f"measurement: where the line reaches the whole core; {fit['rooms_at_limit']:.0f} where it reaches "
                      f"the {SATURATED * 100:.0f} % real-time limit)")
            else:
                print("extrapolated rooms per core: none (the slope is not positive)")
        print(f"devserver the limit: {devserver_limit(rooms)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs, "summary": rows, "versions": versions, "most": most, "rooms": rooms,
                       "rooms_max": rooms_max, "rooms_fit": rooms_fit(rooms) if rooms else None,
                       "meetings": meeting_runs}, f, indent=1, default=str)
    broken = [r for r in runs + meeting_runs if r["broken"]]
    for r in broken:
        print(f"bench-peers: broken run: {r['tool']} N={r['n']} (exit {r['exit']}, log {r['log']})", file=sys.stderr)
    failed_rooms = [res for res in rooms if res.get("error")]
    for res in failed_rooms:
        print(f"bench-peers: {res['error']}", file=sys.stderr)
    return 1 if broken or failed_rooms else 0


if __name__ == "__main__":
    sys.exit(main())
