"""Scenario files: a plain-text timeline of what scripted participants and the
server do in one room.

    # comments start with '#'
    room standup public          # the room (created if missing); public|private
    start first-join             # clock starts when the first real client joins (or: immediate)
    idle dtx                     # what quiet participants send: dtx|silence|pause (default: --scripted-idle)
    at 0s    join alice name="Alice Doe" metadata='{"accesses":["user"]}'
    at 0s    join carol clock=+2s       # carol's device clock runs 2 s ahead (her sender reports)
    +1s      tone alice 440Hz 3s amplitude=0.3
    at 5s    say alice "Good morning"
    at 9s    chat alice "hello from alice"
    at 10s   camera alice               # alice turns a camera on (offers then carry video)
    at 11s   chat-image alice 300kB text="the slide"   # a chunked chat with an inline image
    at 11.5s react alice 👍             # a reaction to the last chat
    at 12s   poll alice "Lunch?" Pizza Soup
    at 12.5s vote alice 2               # a vote for option 2 of the last poll
    at 13s   profile alice "Alice B."   # alice renames herself (topic presence)
    at 13.5s deafened alice on          # alice deafens herself (topic presence)
    at 14s   system room_ended message="The host ended the meeting"
    at 12s   kick $client

Times: `at T` is from the start, `+T` from the previous step. Words are split
like a shell (quotes group). Parsing is pure (`parse`), separate from running.
"""
from __future__ import annotations

import asyncio
import logging
import os
import shlex
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from livekit.protocol import models as lkm

from . import media
from .durations import parse_duration
from .faults import FaultConfig
from .store import default_settings, validate_room_name

if TYPE_CHECKING:
    from .app import Server
    from .scripted import ScriptedParticipant

log = logging.getLogger("devserver.scenario")

SYSTEM_EVENTS = ("kick", "ban", "spotlight", "deafen", "undeafen", "ask_unmute", "ask_camera",
                 # Bedrud v0.12: server/internal/lkutil/lkutil.go SystemMessage; the web client's stage lines.
                 "room_ended", "room_closed", "room_archived", "room_deleted", "stage")
ROOM_END_EVENTS = ("room_ended", "room_closed", "room_archived", "room_deleted")
TARGETED_EVENTS = ("deafen", "undeafen", "ask_unmute", "ask_camera")

# command -> (minimum positional args, maximum positional args (-1 = rest joined), allowed options)
COMMANDS: dict[str, tuple[int, int, tuple[str, ...]]] = {
    "join": (1, 1, ("name", "metadata", "clock", "idle")),
    "leave": (1, 1, ()),
    "speak": (2, 2, ()),
    "tone": (3, 3, ("amplitude",)),
    "say": (2, -1, ("voice",)),
    "mute": (1, 1, ()),
    "unmute": (1, 1, ()),
    # The idle mode from now on (media.py): libwebrtc's DTX packets, silence frames, nothing.
    "dtx": (1, 1, ()),
    "silence": (1, 1, ()),
    "pause": (1, 1, ()),
    "chat": (2, -1, ()),
    "camera": (1, 1, ()),
    # Bedrud web v0.12's chat wire (chatwire.py): a chunked chat with an inline image
    # (SIZE like 300kB: a PNG of noise; else a file), a reaction to the last chat, a
    # poll, a vote for option N of the last poll, presence packets.
    "chat-image": (2, 2, ("text",)),
    "react": (2, 2, ()),
    "poll": (4, 12, ()),
    "vote": (2, 2, ()),
    "profile": (2, 2, ("avatar",)),
    "deafened": (2, 2, ()),
    "system": (1, 1, ("target", "actor", "to", "message", "deleted")),
    "kick": (1, 1, ()),
    "server-mute": (1, 1, ()),
    "drop": (2, 2, ()),
    "delete-room": (0, 0, ()),
    "faults": (0, 0, ("loss", "reorder", "duplicate", "jitter", "seed")),
}


class ScenarioError(ValueError):
    """`file:line: message` — what was wrong and where."""


@dataclass
class Step:
    at: float
    line: int
    command: str
    args: list[str]
    options: dict[str, str]
    clip: Any = None  # rendered audio for speak/tone/say
    coded: Any = None  # its media.CodedClip with --scripted-precode

    def describe(self) -> str:
        opts = " ".join(f"{k}={v}" for k, v in self.options.items())
        return " ".join([self.command, *self.args, opts]).strip()


@dataclass
class Scenario:
    name: str
    source: str
    room: str = ""
    public: bool = True
    start: str = "immediate"
    idle: Optional[str] = None  # the `idle` line: every join's idle mode unless it says idle=
    steps: list[Step] = field(default_factory=list)
    base_dir: str = "."


def parse(text: str, source: str = "<scenario>", name: Optional[str] = None, base_dir: str = ".",
          default_room: Optional[str] = None) -> Scenario:
    """Parses scenario text. Raises ScenarioError naming file and line."""
    sc = Scenario(name=name or os.path.splitext(os.path.basename(source))[0] or "scenario", source=source,
                  base_dir=base_dir)
    clock = 0.0
    identities: set[str] = set()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        def fail(msg: str) -> ScenarioError:
            return ScenarioError(f"{source}:{lineno}: {msg}")
        try:
            words = shlex.split(raw, comments=True)
        except ValueError as exc:
            raise fail(f"{exc} (unterminated quote?)") from None
        if not words:
            continue
        head = words[0]
        if head == "room":
            if len(words) not in (2, 3) or (len(words) == 3 and words[2] not in ("public", "private")):
                raise fail("expected: room NAME [public|private]")
            problem = validate_room_name(words[1])
            if problem:
                raise fail(problem)
            if sc.room:
                raise fail("the room is already set")
            sc.room, sc.public = words[1], (len(words) == 2 or words[2] == "public")
            continue
        if head == "start":
            if len(words) != 2 or words[1] not in ("immediate", "first-join"):
                raise fail("expected: start immediate|first-join")
            sc.start = words[1]
            continue
        if head == "idle":
            if len(words) != 2 or words[1] not in media.IDLE_MODES:
                raise fail(f"expected: idle {'|'.join(media.IDLE_MODES)}")
            sc.idle = words[1]
            continue
        if head == "at" or head.startswith("+"):
            if head == "at":
                if len(words) < 2:
                    raise fail("expected a time after 'at', e.g. at 5s")
                time_text, rest = words[1], words[2:]
            else:
                time_text, rest = head[1:], words[1:]
            try:
                t = parse_duration(time_text)
            except ValueError as exc:
                raise fail(str(exc)) from None
            clock = t if head == "at" else clock + t
            if not rest:
                raise fail("expected a command after the time")
            sc.steps.append(_parse_step(clock, lineno, rest, fail, identities))
            continue
        raise fail(f"unknown line {head!r} (expected room, start, idle, at TIME ..., or +TIME ...)")
    if not sc.room:
        if default_room is None:
            raise ScenarioError(f"{source}: no 'room NAME' line")
        sc.room = default_room
    sc.steps.sort(key=lambda s: s.at)  # stable: same time keeps file order
    return sc


def _parse_step(at: float, lineno: int, words: list[str], fail, identities: set[str]) -> Step:  # type: ignore[no-untyped-def]
    command = words[0]
    if command not in COMMANDS:
        raise fail(f"unknown command {command!r} (expected one of {', '.join(COMMANDS)})")
    low, high, allowed = COMMANDS[command]
    args: list[str] = []
    options: dict[str, str] = {}
    for w in words[1:]:
        key, eq, value = w.partition("=")
        if eq and key in allowed:
            options[key] = value
        elif eq and key.isidentifier() and command not in ("say", "chat"):
            raise fail(f"unknown option {key!r} for {command} (allowed: {', '.join(allowed) or 'none'})")
        else:
            args.append(w)
    if high == -1 and len(args) >= low:
        args = args[:low - 1] + [" ".join(args[low - 1:])]
    if not (low <= len(args) <= (high if high >= 0 else low)):
        raise fail(f"{command}: expected {_usage(command)}")
    step = Step(at=at, line=lineno, command=command, args=args, options=options)
    _check_step(step, fail, identities)
    return step


def _usage(command: str) -> str:
    return {
        "join": "join ID [name=NAME] [metadata=JSON] [clock=+DURATION|-DURATION] [idle=dtx|silence|pause]",
        "leave": "leave ID", "speak": "speak ID FILE",
        "tone": "tone ID FREQ DURATION [amplitude=0.3], e.g. tone bob 440Hz 2s",
        "say": "say ID TEXT [voice=en]", "mute": "mute ID", "unmute": "unmute ID", "dtx": "dtx ID",
        "silence": "silence ID", "pause": "pause ID", "chat": "chat ID TEXT", "camera": "camera ID",
        "chat-image": "chat-image ID SIZE|FILE [text=TEXT], e.g. chat-image alice 300kB", "react": "react ID EMOJI",
        "poll": "poll ID QUESTION OPTION OPTION [OPTION...]", "vote": "vote ID N", "profile": "profile ID NAME [avatar=URL]",
        "deafened": "deafened ID on|off",
        "system": "system EVENT [target=ID] [actor=ID] [to=room|target] [message=TEXT] [deleted=ID]",
        "kick": "kick TARGET", "server-mute": "server-mute TARGET", "drop": "drop TARGET DURATION",
        "delete-room": "delete-room", "faults": "faults [loss=5%] [reorder=2%] [duplicate=1%] [jitter=30ms] [seed=N]",
    }[command]


def _check_step(step: Step, fail, identities: set[str]) -> None:  # type: ignore[no-untyped-def]
    c, a, o = step.command, step.args, step.options
    scripted_commands = ("leave", "speak", "tone", "say", "mute", "unmute", "dtx", "silence", "pause", "chat", "camera",
                         "chat-image", "react", "poll", "vote", "profile", "deafened")
    if c == "join":
        if a[0].startswith("$") or len(a[0]) > 256:
            raise fail("join: the identity must be a plain name")
        identities.add(a[0])
        if o.get("idle", "dtx") not in media.IDLE_MODES:
            raise fail(f"join: idle= must be one of {', '.join(media.IDLE_MODES)}")
        if "clock" in o:
            sign = o["clock"][:1]
            try:
                if sign not in ("+", "-"):
                    raise ValueError("a clock offset starts with + or -")
                seconds = parse_duration(o["clock"][1:])
                if seconds > 86400:
                    raise ValueError("a clock offset is at most a day")
            except ValueError as exc:
                raise fail(f"join: clock={o['clock']}: {exc}") from None
            step.options["_clock"] = str(seconds if sign == "+" else -seconds)
    elif c in scripted_commands and a[0] not in identities:
        raise fail(f"{c}: {a[0]!r} has not joined by this line")
    if c == "tone":
        freq = a[1][:-2] if a[1].lower().endswith("hz") else a[1]
        try:
            step.options["_freq"] = str(float(freq))
            step.options["_seconds"] = str(parse_duration(a[2]))
            step.options["_amp"] = str(float(o.get("amplitude", "0.3")))
        except ValueError:
            raise fail(f"tone: expected {_usage('tone')}") from None
    elif c == "drop":
        try:
            step.options["_seconds"] = str(parse_duration(a[1]))
        except ValueError as exc:
            raise fail(f"drop: {exc}") from None
    elif c == "system":
        if a[0] not in SYSTEM_EVENTS:
            raise fail(f"system: unknown event {a[0]!r} (expected one of {', '.join(SYSTEM_EVENTS)})")
        if o.get("to", "room" if a[0] not in TARGETED_EVENTS else "target") not in ("room", "target"):
            raise fail("system: to= must be room or target")
    elif c == "chat-image":
        size = a[1].lower()
        if size.endswith("kb") and size[:-2].isdigit():
            step.options["_bytes"] = str(int(size[:-2]) * 1000)
    elif c == "vote":
        if not a[1].isdigit() or int(a[1]) < 1:
            raise fail(f"vote: expected {_usage('vote')}")
    elif c == "deafened":
        if a[1] not in ("on", "off"):
            raise fail(f"deafened: expected {_usage('deafened')}")
    elif c == "faults":
        try:
            FaultConfig().update(dict(o))
        except ValueError as exc:
            raise fail(f"faults: {exc}") from None
        if not o:
            raise fail(f"faults: expected {_usage('faults')}")


# MARK: - running

@dataclass
class ScenarioRun:
    scenario: Scenario
    task: Optional[asyncio.Task] = None
    started_at: Optional[float] = None
    executed: int = 0
    errors: list[str] = field(default_factory=list)
    done: bool = False

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def room_name(self) -> str:
        return self.scenario.room

    def dev_state(self) -> dict:
        elapsed = time.monotonic() - self.started_at if self.started_at is not None else None
        nxt = self.scenario.steps[self.executed] if self.executed < len(self.scenario.steps) else None
        return {"name": self.name, "room": self.room_name, "start": self.scenario.start,
                "started": self.started_at is not None, "elapsed": elapsed, "executed": self.executed,
                "steps": len(self.scenario.steps), "next": nxt.describe() if nxt else None,
                "nextAt": nxt.at if nxt else None, "done": self.done, "errors": list(self.errors)}


class ScenarioRunner:
    def __init__(self, server: "Server") -> None:
        self.server = server
        self.runs: list[ScenarioRun] = []

    def start_file(self, path: str, start_override: Optional[str] = None) -> ScenarioRun:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise ScenarioError(f"{path}: cannot read: {exc.strerror}") from None
        sc = parse(text, path, base_dir=os.path.dirname(os.path.abspath(path)))
        return self._start(sc, start_override)

    def start_text(self, text: str, source: str, default_room: Optional[str] = None) -> ScenarioRun:
        return self._start(parse(text, source, default_room=default_room), None)

    def _start(self, sc: Scenario, start_override: Optional[str]) -> ScenarioRun:
        if start_override:
            sc.start = start_override
        _render_clips(sc)  # file and tone errors surface now, with their line
        if getattr(self.server.config, "scripted_precode", False):
            for step in sc.steps:
                if step.clip is not None:
                    step.coded = media.CodedClip(step.clip)
        self._ensure_room(sc)
        run = ScenarioRun(scenario=sc)
        run.task = asyncio.ensure_future(self._run(run))
        self.runs.append(run)
        return run

    def _ensure_room(self, sc: Scenario) -> None:
        store = self.server.store
        if store.room_by_name(sc.room) is None:
            owner = store.user_by_email("scenario@devserver.local")
            if owner is None:
                owner = store.add_user("scenario@devserver.local", "Scenario", "", "local", ["user"], time.time())
            room = store.add_room(sc.room, owner.id, sc.public, "", default_settings(), time.time())
            # As if its owner had called POST /room/create (room.go:392).
            self.server.extras["webhooks"].dispatch_room_event("room.created", room.id, room.name, owner.id)
        self.server.sfu.create_room(sc.room)

    async def _run(self, run: ScenarioRun) -> None:
        sc = run.scenario
        room = self.server.sfu.create_room(sc.room)
        try:
            if sc.start == "first-join":
                await room.first_client_joined.wait()
            run.started_at = time.monotonic()
            log.info("scenario %s started in room %s", sc.name, sc.room)
            for step in sc.steps:
                delay = run.started_at + step.at - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                try:
                    await self._execute(sc, step)
                except Exception as exc:  # noqa: BLE001 — a failing step is reported, the timeline goes on
                    msg = f"{sc.source}:{step.line}: {step.command}: {exc}"
                    log.warning("scenario: %s", msg)
                    run.errors.append(msg)
                run.executed += 1
        except asyncio.CancelledError:
            pass
        finally:
            run.done = True

    async def _execute(self, sc: Scenario, step: Step) -> None:
        from .scripted import ScriptedParticipant
        sfu = self.server.sfu
        room = sfu.room(sc.room)
        c, a, o = step.command, step.args, step.options
        if room is None:
            if c == "join":
                room = sfu.create_room(sc.room)
            else:
                raise RuntimeError("the room is gone")

        def scripted(identity: str) -> "ScriptedParticipant":
            p = room.participants.get(identity)
            if not isinstance(p, ScriptedParticipant):
                raise RuntimeError(f"{identity!r} is not a scripted participant in the room")
            return p

        def targets(spec: str) -> list[str]:
            clients = [p.identity for p in room.participants.values() if not p.scripted]
            if spec == "$client":
                return clients[:1]
            if spec == "$clients":
                return clients
            return [spec]

        if c == "join":
            existing = room.participants.get(a[0])
            if existing is not None:
                await room.remove(existing, lkm.DisconnectReason.DUPLICATE_IDENTITY)
            # The join's idle=, else the file's `idle` line, else --scripted-idle.
            idle = o.get("idle") or sc.idle or getattr(self.server.config, "scripted_idle", "silence")
            joined = ScriptedParticipant(room, a[0], o.get("name", a[0]), o.get("metadata", ""),
                                         clock_offset=float(o.get("_clock", "0")), idle=idle)
            joined.audio.precoded_silence = bool(getattr(self.server.config, "scripted_precode", False))
            joined.join()
            self._enrol(room.name, a[0])
        elif c == "leave":
            await room.remove(scripted(a[0]), lkm.DisconnectReason.CLIENT_INITIATED)
        elif c in ("speak", "tone", "say"):
            scripted(a[0]).audio.play(step.clip, step.coded)
        elif c in ("mute", "unmute"):
            scripted(a[0]).set_muted(c == "mute")
        elif c in ("dtx", "silence", "pause"):
            p = scripted(a[0])
            p.audio.clear()
            p.audio.set_idle(c)
        elif c == "chat":
            scripted(a[0]).chat(a[1])
        elif c == "camera":
            scripted(a[0]).camera_on()
        elif c in ("chat-image", "react", "poll", "vote", "profile", "deafened"):
            self._chat_wire(sc, step, scripted(a[0]))
        elif c == "system":
            event = a[0]
            target = o.get("target", "")
            resolved = targets(target)[0] if target.startswith("$") and targets(target) else target
            to_target = o.get("to", "target" if event in TARGETED_EVENTS else "room") == "target"
            if event in ROOM_END_EVENTS:
                # lkutil.go SendSystemMessage(WithDeletedIdentity): {type, event, message, deletedIdentity?}.
                payload = {"type": "system", "event": event, "message": o.get("message", "")}
                if o.get("deleted"):
                    payload["deletedIdentity"] = o["deleted"]
            elif event == "stage":
                payload = {"type": "system", "event": event, "actor": o.get("actor", "devserver"), "message": o.get("message", "")}
            else:
                payload = {"type": "system", "event": event, "actor": o.get("actor", "devserver"), "target": resolved}
            room.server_data(payload, "system", [resolved] if to_target and resolved else [])
        elif c == "kick":
            found = targets(a[0])
            if not found:
                raise RuntimeError(f"no participant matches {a[0]!r}")
            for identity in found:
                if await sfu.remove_participant(room.name, identity, "PARTICIPANT_REMOVED"):
                    room.server_data({"type": "system", "event": "kick", "actor": "devserver", "target": identity},
                                     "system", [])
        elif c == "server-mute":
            for identity in targets(a[0]):
                sfu.server_mute(room.name, identity, ("AUDIO",))
        elif c == "drop":
            found = [i for i in targets(a[0]) if sfu.drop(room.name, i, float(o["_seconds"]))]
            if not found:
                raise RuntimeError(f"no client matches {a[0]!r}")
        elif c == "delete-room":
            await sfu.delete_room(room.name)
            bedrud = self.server.store.room_by_name(room.name)
            if bedrud is not None:
                self.server.store.delete_room(bedrud.id)
        elif c == "faults":
            room.faults.update(dict(o))

    def _enrol(self, room_name: str, identity: str) -> None:
        """A scripted participant joins as if it had called /room/join: an active participant
        row (no capacity, ban or private-room check) and `participant.joined` with its
        identity as `userId` (room.go:462-476). Nothing when the Bedrud room is not active."""
        bedrud = self.server.store.room_by_name(room_name)
        if bedrud is None or not bedrud.is_active:
            return
        self.server.store.activate_row(bedrud, identity, time.time())
        self.server.extras["webhooks"].dispatch_room_event("participant.joined", bedrud.id, bedrud.name, identity)

    def _chat_wire(self, sc: Scenario, step: Step, p: "ScriptedParticipant") -> None:
        """Sends what Bedrud's web client sends for one chat-wire command (chatwire.py)."""
        import uuid
        from . import chatwire
        c, a, o = step.command, step.args, step.options
        now_ms = int(time.time() * 1000)
        topic = "chat"
        payloads: list[bytes]
        if c == "chat-image":
            if "_bytes" in o:
                data = chatwire.pattern_png(int(o["_bytes"]))
            else:
                path = a[1] if os.path.isabs(a[1]) else os.path.join(sc.base_dir, a[1])
                with open(path, "rb") as fh:
                    data = fh.read()
            chat = {"type": "chat", "id": str(uuid.uuid4()), "timestamp": now_ms, "senderName": p.name, "senderIdentity": p.identity,
                    "message": o.get("text", ""), "attachments": [chatwire.inline_image(data, "image/png")]}
            self.last_chat_id = chat["id"]
            payloads = chatwire.chat_packets(chat)
        elif c == "react":
            payloads = [chatwire.wire({"type": "reaction", "messageId": getattr(self, "last_chat_id", ""), "emoji": a[1],
                                       "voterIdentity": p.identity})]
        elif c == "poll":
            poll = {"id": str(uuid.uuid4()), "question": a[1],
                    "options": [{"id": f"o{i + 1}", "text": t} for i, t in enumerate(a[2:])], "votes": {}}
            chat = {"type": "chat", "id": str(uuid.uuid4()), "timestamp": now_ms, "senderName": p.name, "senderIdentity": p.identity,
                    "message": "", "attachments": [], "poll": poll}
            self.last_chat_id = self.last_poll_message_id = chat["id"]
            payloads = chatwire.chat_packets(chat)
        elif c == "vote":
            payloads = [chatwire.wire({"type": "poll_vote", "messageId": getattr(self, "last_poll_message_id", ""),
                                       "optionId": f"o{a[1]}", "voterIdentity": p.identity})]
        elif c == "profile":
            topic = "presence"
            payloads = [chatwire.wire({"type": "profile_changed", "identity": p.identity, "name": a[1], "avatarUrl": o.get("avatar", "")})]
        else:  # deafened
            topic = "presence"
            payloads = [chatwire.wire({"type": "deafen_state", "identity": p.identity, "deafened": a[1] == "on"})]
        for payload in payloads:
            packet = lkm.DataPacket(
                participant_identity=p.identity, participant_sid=p.sid, sequence=p.next_data_sequence(),
                user=lkm.UserPacket(payload=payload, topic=topic, participant_sid=p.sid, participant_identity=p.identity))
            p.room.send_data(packet, True, p, [])

    async def stop(self) -> None:
        for run in self.runs:
            if run.task is not None and not run.task.done():
                run.task.cancel()

    def dev_state(self) -> list[dict]:
        return [r.dev_state() for r in self.runs]


def _render_clips(sc: Scenario) -> None:
    for step in sc.steps:
        try:
            if step.command == "tone":
                step.clip = media.tone_clip(float(step.options["_freq"]), float(step.options["_seconds"]),
                                            float(step.options["_amp"]))
            elif step.command == "speak":
                path = step.args[1] if os.path.isabs(step.args[1]) else os.path.join(sc.base_dir, step.args[1])
                step.clip = media.file_clip(path)
            elif step.command == "say":
                step.clip = media.speech_clip(step.args[1], step.options.get("voice", "en"))
        except media.ClipError as exc:
            raise ScenarioError(f"{sc.source}:{step.line}: {step.command}: {exc}") from None
