"""The official LiveKit SDK publishes speech with long pauses (DTX on) and a mute
through the devserver's forwarding path while the built bot records the room; prints
one JSON report for test_sdk_record.py.

Runs *inside* a private network namespace (scripts/netns-run), like sdk_probe.py:

    PYTHONPATH=scripts scripts/netns-run .venv/bin/python -m bedrud_devserver.tests.sdk_record_probe

What it compares:
- the Opus payloads the devserver received from libwebrtc (`/_dev/rooms/ROOM/packets/TRACK`;
  for RED, each packet's primary) with the packets of the bot's per-participant Ogg file,
  leaving out the 2-byte concealment packets the bot writes into gaps;
- the file's duration with the span of the publisher's RTP timestamps (its capture clock);
- the decoded file with the PCM that was published (normalised cross-correlation);
- the bot's events.jsonl `gap` events.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np
from livekit import rtc

from ..forward import red_primary
from ..media import speech_clip
from .helpers import REPO, DevServer, within_probe_deadline
from .lkclient import sdk_guest_join

ROOM = "dtxroom"
BOT = os.path.join(REPO, ".build", "release", "bedrud-bot")
RATE = 48000
FRAME = 480  # 10 ms, as an application hands audio to libwebrtc


# MARK: - Ogg (RFC 3533) and Opus packets

def ogg_packets(data: bytes) -> tuple[list[bytes], int]:
    """Every packet of the first logical stream, and the last page's granule position."""
    packets: list[bytes] = []
    partial = b""
    granule = 0
    i = 0
    while i + 27 <= len(data):
        if data[i:i + 4] != b"OggS":
            raise ValueError(f"no page at offset {i}")
        granule = int.from_bytes(data[i + 6:i + 14], "little", signed=True)
        nseg = data[i + 26]
        lacing = data[i + 27:i + 27 + nseg]
        body = i + 27 + nseg
        for lace in lacing:
            partial += data[body:body + lace]
            body += lace
            if lace < 255:
                packets.append(partial)
                partial = b""
        i = body
    return packets, granule


def is_gap_filler(packet: bytes) -> bool:
    """The bot's concealment packets: code 3 (RFC 6716 §3.2.5), CBR, no padding, every
    frame zero bytes long: exactly a TOC and a frame-count byte."""
    return len(packet) == 2 and packet[0] & 3 == 3 and packet[1] & 0xC0 == 0


def opus_samples(packet: bytes) -> int:
    """48 kHz samples in an Opus packet (RFC 6716 §3.1, §3.2)."""
    config = packet[0] >> 3
    if config < 12:
        per = [480, 960, 1920, 2880][config & 3]
    elif config < 16:
        per = [480, 960][config & 1]
    else:
        per = [120, 240, 480, 960][config & 3]
    code = packet[0] & 3
    frames = 1 if code == 0 else 2 if code in (1, 2) else (packet[1] & 0x3F if len(packet) > 1 else 0)
    return per * frames


def decode_file(path: str) -> np.ndarray:
    import av
    from av.audio.resampler import AudioResampler
    out = []
    with av.open(path) as c:
        res = AudioResampler(format="s16", layout="mono", rate=RATE)
        for frame in c.decode(c.streams.audio[0]):
            for f in res.resample(frame):
                out.append(f.to_ndarray().reshape(-1))
    return np.concatenate(out).astype(np.float64) if out else np.zeros(0)


def best_correlation(published: np.ndarray, recorded: np.ndarray, max_lag: int = RATE) -> tuple[float, int]:
    """Normalised cross-correlation at the best lag within ±max_lag samples (FFT)."""
    n = min(len(published), len(recorded))
    a, b = published[:n] - published[:n].mean(), recorded[:n] - recorded[:n].mean()
    size = 1 << int(np.ceil(np.log2(2 * n)))
    corr = np.fft.irfft(np.fft.rfft(b, size) * np.conj(np.fft.rfft(a, size)), size)
    lags = np.concatenate([np.arange(0, max_lag + 1), np.arange(-max_lag, 0)])
    values = np.concatenate([corr[:max_lag + 1], corr[-max_lag:]])
    k = int(np.argmax(values))
    lag = int(lags[k])
    if lag >= 0:
        x, y = a[:n - lag], b[lag:n]
    else:
        x, y = a[-lag:n], b[:n + lag]
    denom = np.sqrt(np.sum(x * x) * np.sum(y * y))
    return (float(np.sum(x * y) / denom) if denom else 0.0), lag


def segment_correlation(segment: np.ndarray, recorded: np.ndarray, at: int, search: int = RATE) -> float:
    """Best normalised correlation of `segment` (published from sample `at`) with the
    recording at any lag within ±`search` samples."""
    padded = np.concatenate([np.zeros(search), recorded, np.zeros(search)])
    window = padded[at:at + len(segment) + 2 * search]
    a = segment - segment.mean()
    if len(window) < len(a) or not np.any(a):
        return 0.0
    size = 1 << int(np.ceil(np.log2(len(window) + len(a))))
    corr = np.fft.irfft(np.fft.rfft(window, size) * np.conj(np.fft.rfft(a, size)), size)[:len(window) - len(a) + 1]
    c2 = np.concatenate([[0.0], np.cumsum(window * window)])
    c1 = np.concatenate([[0.0], np.cumsum(window)])
    n = len(a)
    sums = c1[n:] - c1[:-n]
    energy = (c2[n:] - c2[:-n]) - sums * sums / n  # energy of each window, mean removed
    norm = np.sqrt(np.maximum(energy, 1e-9) * np.sum(a * a))
    return float(np.max(corr / norm))


# MARK: - the publisher

def timeline() -> tuple[np.ndarray, list[tuple[str, float]]]:
    """Mono int16 PCM to publish: speech, a 3 s pause (DTX), speech, speech that is
    muted for 2 s, speech. Plus the planned actions (mute/unmute at times in s)."""
    a = speech_clip("Good morning everyone, this is the first sentence.")[:, 0]
    b = speech_clip("After a long pause, the second sentence.")[:, 0]
    c = speech_clip("Now I mute myself for a while, and then I am back.")[:, 0]
    pause = np.zeros(3 * RATE, dtype=np.int16)
    short = np.zeros(RATE // 2, dtype=np.int16)
    parts = [short, a, pause, b, short]
    mute_at = sum(len(p) for p in parts) / RATE
    parts += [c, np.zeros(RATE, dtype=np.int16), c, short]
    pcm = np.concatenate(parts)
    pcm = pcm[: len(pcm) // FRAME * FRAME]
    return pcm, [("mute", mute_at + 0.5), ("unmute", mute_at + 2.5)]


async def publish(room: rtc.Room, pcm: np.ndarray, actions: list[tuple[str, float]], log: list) -> float:
    source = rtc.AudioSource(RATE, 1)
    track = rtc.LocalAudioTrack.create_audio_track("microphone", source)
    options = rtc.TrackPublishOptions(source=rtc.TrackSource.SOURCE_MICROPHONE, dtx=True, red=True)
    await room.local_participant.publish_track(track, options)
    pending = list(actions)
    start = time.monotonic()
    for i in range(len(pcm) // FRAME):
        now = time.monotonic() - start
        while pending and pending[0][1] <= now:
            what, _ = pending.pop(0)
            (track.mute if what == "mute" else track.unmute)()
            log.append({"t": round(now, 3), "action": what})
        frame = rtc.AudioFrame(pcm[i * FRAME:(i + 1) * FRAME].tobytes(), RATE, 1, FRAME)
        await source.capture_frame(frame)
        ahead = start + (i + 1) * FRAME / RATE - time.monotonic()
        if ahead > 0:
            await asyncio.sleep(ahead)
    await source.wait_for_playout()
    return time.monotonic() - start


def start_bot(base: str, out: str, home: str) -> subprocess.Popen:
    env = dict(os.environ, HOME=home, NO_COLOR="1")
    return subprocess.Popen([BOT, "join", f"{base}/m/{ROOM}", "--record", "--output", out, "--alone-timeout", "1s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=home,
                            start_new_session=True)


def wait_for(predicate, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError(f"timed out waiting for {what}")


async def run(srv: DevServer, work: str) -> dict:
    report: dict = {"actions": []}
    pcm, actions = timeline()
    report["published_seconds"] = round(len(pcm) / RATE, 3)
    out = os.path.join(work, "rec")
    home = os.path.join(work, "home")
    os.makedirs(home)
    bot = start_bot(srv.url, out, home)
    try:
        def bot_active():  # type: ignore[no-untyped-def]
            for room in srv.state()["rooms"]:
                if room["name"] == ROOM:
                    return [p for p in room["participants"] if p.get("client") and p["state"] == "ACTIVE"]
            return None
        wait_for(bot_active, 30, "the bot to be ACTIVE")
        # An SDK listener accepts RED, so it gets RED; the bot declines it and gets the primaries.
        heard: list[np.ndarray] = []

        async def collect(track: rtc.Track) -> None:
            stream = rtc.AudioStream(track, sample_rate=RATE, num_channels=1)
            try:
                async for ev in stream:
                    heard.append(np.frombuffer(ev.frame.data, dtype=np.int16).copy())
            except asyncio.CancelledError:
                pass
            finally:
                await stream.aclose()
        listen_tasks: list[asyncio.Task] = []
        listener = await sdk_guest_join(srv, ROOM, "Listener", on={
            "track_subscribed": lambda track, pub, p: listen_tasks.append(asyncio.ensure_future(collect(track)))})
        room = await sdk_guest_join(srv, ROOM, "Speaker")
        report["publish_seconds"] = round(await publish(room, pcm, actions, report["actions"]), 3)
        state = srv.state()
        mine = [p for r in state["rooms"] if r["name"] == ROOM for p in r["participants"]
                if p["identity"] == room.local_participant.identity]
        track_sid = mine[0]["tracks"][0]["sid"]
        report["subscriptions"] = [s for r in state["rooms"] if r["name"] == ROOM for p in r["participants"]
                                   for s in p.get("subscriptions", [])]
        await room.disconnect()
        log = wait_for(lambda: (lambda j: j if j["endedAt"] else None)(
            srv.request("GET", f"/_dev/rooms/{ROOM}/packets/{track_sid}").json()), 15, "the track to end")
        report["left_at"] = log["endedAt"]
        for task in listen_tasks:
            task.cancel()
        await asyncio.gather(*listen_tasks, return_exceptions=True)
        await listener.disconnect()
        samples = np.concatenate(heard) if heard else np.zeros(0, dtype=np.int16)
        report["listener_seconds"] = round(len(samples) / RATE, 2)
        report["listener_rms"] = round(float(np.sqrt(np.mean((samples.astype(np.float64) / 32768) ** 2))), 4) \
            if len(samples) else 0.0
        code = bot.wait(timeout=30)
        stdout, stderr = bot.communicate(timeout=5)
        report["bot_exit"] = code
        report["bot_stderr"] = stderr[-2000:]
    finally:
        if bot.poll() is None:
            bot.terminate()
            try:
                bot.wait(timeout=5)
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait()
    report["mime"] = log["mime"]
    received = [(p["t"], p["seq"], p["ts"], p["red"], base64.b64decode(p["payload"]), p["muted"])
                for p in log["packets"]]
    report["received_packets"] = len(received)
    report["received_red"] = sum(1 for r in received if r[3])
    report["withheld_muted"] = sum(1 for r in received if r[5])
    report["downtracks"] = log["downtracks"]
    # What the bot must have: every packet the server did not withhold (mute), as
    # libwebrtc sent it, RED reduced to its primary (the bot declines RED).
    primaries = [red_primary(r[4]) if r[3] else r[4] for r in received if not r[5]]
    report["unparsable_red"] = sum(1 for p in primaries if p is None)
    primaries = [p for p in primaries if p is not None]
    report["received_sizes"] = sorted({len(p) for p in primaries})[:8]
    report["frame_samples"] = sorted({opus_samples(p) for p in primaries if len(p) > 0})
    # Pauses in the publisher's own timestamps (DTX: a packet every 400 ms; mute).
    steps = [(received[i][2] - received[i - 1][2]) & 0xFFFFFFFF for i in range(1, len(received))]
    report["timestamp_steps"] = {str(k): steps.count(k) for k in sorted(set(steps))}
    # libwebrtc's DTX as it is on the wire (the model in media.DtxCadence follows it): each
    # packet around a pause as (timestamp step before it in samples, primary size, marker),
    # and how often each small size occurs.
    sized = [(received[i][2] - received[i - 1][2]) & 0xFFFFFFFF if i else 0 for i in range(len(received))]
    prim_all = [red_primary(r[4]) if r[3] else r[4] for r in received]
    marks = [bool(p.get("marker")) for p in log["packets"]]
    near = sorted({j for i, st in enumerate(sized) if st > 960 for j in range(max(0, i - 2), min(len(received), i + 3))})
    report["dtx_shape"] = [[sized[i], len(prim_all[i] or b""), marks[i]] for i in near][:60]
    # Every packet as (timestamp step, primary size, marker, TOC byte), for the hangover.
    report["packet_shape"] = [[sized[i], len(q or b""), marks[i], (q or b"\0")[0]] for i, q in enumerate(prim_all)]
    report["small_sizes"] = {str(n): sum(1 for q in prim_all if q is not None and len(q) == n) for n in range(0, 16)
                             if any(q is not None and len(q) == n for q in prim_all)}
    report["marker_count"] = sum(marks)
    report["seq_contiguous"] = all(((received[i][1] - received[i - 1][1]) & 0xFFFF) == 1 for i in range(1, len(received)))
    ts_span = ((received[-1][2] - received[0][2]) & 0xFFFFFFFF) + opus_samples(primaries[-1])
    report["publisher_ts_span_seconds"] = round(ts_span / RATE, 4)
    bot_down = [d for d in log["downtracks"] if d["codec"] == "audio/opus" and d["firstTimestamp"] is not None]
    if bot_down:
        d = bot_down[0]
        report["forwarded_ts_span_seconds"] = round((d["lastTimestamp"] - d["firstTimestamp"] + opus_samples(primaries[-1])) / RATE, 4)
    report["arrival_span_seconds"] = round(received[-1][0] - received[0][0], 4)

    sessions = os.listdir(os.path.join(out, ROOM))
    folder = os.path.join(out, ROOM, sessions[0])
    report["files"] = sorted(os.listdir(folder))
    opus_files = [f for f in report["files"] if f.endswith(".opus") and f != "room.opus"]
    path = os.path.join(folder, opus_files[0])
    with open(path, "rb") as fh:
        packets, granule = ogg_packets(fh.read())
    head = packets[0]
    pre_skip = int.from_bytes(head[10:12], "little")
    audio = packets[2:]
    fillers = [p for p in audio if is_gap_filler(p)]
    kept = [p for p in audio if not is_gap_filler(p)]
    report["file_packets"] = len(audio)
    report["file_fillers"] = len(fillers)
    report["file_duration_seconds"] = round((granule - pre_skip) / RATE, 4)
    # The first packets may arrive before the bot's subscription is negotiated (LiveKit
    # drops them too): the file must hold the received packets from its first one on.
    bot_down = [d for d in log["downtracks"] if d["codec"] == "audio/opus"]
    assert len(bot_down) == 1, log["downtracks"]
    start = len(primaries) - bot_down[0]["opusSent"]
    report["received_before_subscribed"] = start
    # The track was there from the first packet the bot got to the publisher's leave;
    # DTX and mute inside that time must be filled.
    first_arrival = [r[0] for r in received if not r[5]][start]
    report["published_span_seconds"] = round(report["left_at"] - first_arrival, 4)
    expected = primaries[start:]
    report["payloads_identical"] = kept == expected
    if kept != expected:
        first = next((i for i, (x, y) in enumerate(zip(kept, expected)) if x != y), min(len(kept), len(expected)))
        report["payload_mismatch"] = {"index": first, "file_count": len(kept), "received_count": len(expected),
                                      "file": kept[first].hex() if first < len(kept) else None,
                                      "received": expected[first].hex() if first < len(expected) else None}
    # Where each packet sits in the file must follow the publisher's timestamps: between
    # two packets the file holds exactly their timestamp difference (packet plus fillers).
    forwarded = [r for r in received if not r[5]][start:]
    position, positions = 0, []
    for pkt in audio:
        if not is_gap_filler(pkt):
            positions.append(position)
        position += opus_samples(pkt)
    errors = []
    resync = None
    for i in range(1, min(len(positions), len(forwarded))):
        want = (forwarded[i][2] - forwarded[i - 1][2]) & 0xFFFFFFFF
        got = positions[i] - positions[i - 1]
        if ((forwarded[i][1] - forwarded[i - 1][1]) & 0xFFFF) != 1:
            # Across the withheld (muted) run: the server moved the timestamps on by the
            # wall time between the two packets' arrivals.
            resync = {"file_step_ms": round(got / 48, 1),
                      "arrival_step_ms": round((forwarded[i][0] - forwarded[i - 1][0]) * 1000, 1),
                      "publisher_step_ms": round(want / 48, 1)}
            continue
        if got != want:
            errors.append({"packet": i, "file_offset_s": round(positions[i] / RATE, 3), "want": want, "got": got})
    report["placement_errors"] = errors[:20]
    report["placement_error_count"] = len(errors)
    report["mute_resync"] = resync
    recorded = decode_file(path)
    reference = pcm.astype(np.float64)
    if os.environ.get("SDK_RECORD_KEEP"):
        np.save(os.environ["SDK_RECORD_KEEP"] + "-ref.npy", reference)
        np.save(os.environ["SDK_RECORD_KEEP"] + "-rec.npy", recorded)
    corr, lag = best_correlation(reference, recorded)
    report["correlation_whole"] = round(corr, 4)
    report["correlation_lag_samples"] = lag
    # Outside the muted stretch (the server withheld it, so the file is silent there).
    mute_t = next(a["t"] for a in report["actions"] if a["action"] == "mute")
    unmute_t = next(a["t"] for a in report["actions"] if a["action"] == "unmute")
    if lag >= 0:
        ref, rec = reference, recorded[lag:]
    else:
        ref, rec = reference[-lag:], recorded
    n = min(len(ref), len(rec))
    keep = np.ones(n, dtype=bool)
    keep[int((mute_t - 0.1) * RATE):int((unmute_t + 0.3) * RATE)] = False
    x, y = ref[:n][keep], rec[:n][keep]
    report["correlation_global"] = round(float(np.dot(x - x.mean(), y - y.mean()) /
                                        np.sqrt(np.sum((x - x.mean()) ** 2) * np.sum((y - y.mean()) ** 2))), 4)
    # Before the mute and after it, each at its own best lag (the server's resync after
    # the mute moves the timestamps by the wall time, which may differ by a frame).
    cut_a, cut_b = int((mute_t - 0.1) * RATE), int((unmute_t + 0.3) * RATE)
    report["correlation_segments"] = [round(segment_correlation(reference[lo:hi], recorded, lo), 4)
                                      for lo, hi in ((0, cut_a), (cut_b, len(reference)))]
    # Per voiced second, each at its own lag: the SDK's AudioSource pads an underrun of
    # our paced capture_frame calls with 10 ms of silence on a loaded machine, which
    # shifts the rest of the published timeline by 10 ms (the packets' timestamps carry
    # the shift: the bot places them exactly, see placement_errors).
    windows = []
    for lo in range(0, len(reference) - RATE, RATE):
        if cut_a <= lo + RATE and lo <= cut_b:
            continue
        seg = reference[lo:lo + RATE]
        if np.sqrt(np.mean(seg * seg)) < 300:  # silence (-40 dBFS): nothing to correlate
            continue
        windows.append(round(segment_correlation(seg, recorded, lo), 4))
    report["correlation_windows"] = windows
    report["correlation"] = round(float(np.median(windows)), 4) if windows else 0.0
    # Loudness envelopes (RMS per 20 ms), which a waveform codec's phase changes do not affect.
    def envelope(v: np.ndarray) -> np.ndarray:
        m = len(v) // 960
        return np.sqrt(np.mean(v[:m * 960].reshape(m, 960) ** 2, axis=1))
    ea, eb = envelope(ref[:n]), envelope(rec[:n])
    k = np.repeat(keep[:len(ea) * 960].reshape(-1, 960).all(axis=1), 1)
    report["envelope_correlation"] = round(float(np.corrcoef(ea[k], eb[k])[0, 1]), 4)
    with open(os.path.join(folder, "events.jsonl")) as fh:
        events = [json.loads(line) for line in fh if line.strip()]
    report["gaps"] = [{k: e.get(k) for k in ("offset_ms", "duration_ms", "cause")} for e in events if e["type"] == "gap"]
    # Every line as docs/events.schema.json says (python-jsonschema, scripts/validate-events).
    check = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "validate_events.py"), folder],
                           capture_output=True, text=True, timeout=60)
    report["schema_check"] = {"exit": check.returncode, "output": check.stdout[-3000:] + check.stderr[-2000:]}
    finished = next(e for e in events if e["type"] == "file_finished" and e["output"] == opus_files[0][:-5])
    # The bot's own view of the time the track was there: its file's start to the leave.
    report["bot_presence_seconds"] = round((finished["offset_ms"] - finished["start_offset_ms"]) / 1000, 3)
    report["event_types"] = sorted({e["type"] for e in events})
    return report


async def main() -> int:
    srv = DevServer("--seed-room", ROOM)
    work = tempfile.mkdtemp(prefix="sdk-record-")
    report: dict = {}
    try:
        report = await within_probe_deadline(run(srv, work), 135)
    except BaseException as exc:  # noqa: BLE001 — the report carries the failure
        report["error"] = "".join(traceback.format_exception(exc))
    finally:
        srv.stop()
        report["devserver_stderr"] = srv.stderr_lines[-40:]
        shutil.rmtree(work, ignore_errors=True)
    print("SDK-RECORD-REPORT " + json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
