"""Every request body the real bot sends, checked against Bedrud v0.12.0's swagger request
schemas (swagger_check.py). The built `bedrud-bot` runs `instance add`, `register`,
`login`, `rooms create/list/settings/delete`, `join --dry-run` and `logout` in a
sandboxed HOME against a devserver started with `--request-log`; each logged body must
be JSON of the declared shape (no unknown keys, right types), and the settings update
must carry the whole settings object because Bedrud replaces it (room.go:2017-2021).
Without a built bot the test builds one first (`swift build`)."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from .helpers import REPO, DevServer
from .swagger_check import Spec, swagger_path

PW = "correct horse battery"


def bot_binary() -> str:
    """$BEDRUD_BOT_BINARY, else the debug build, else the release build; with none,
    `swift build --product bedrud-bot` makes the debug one (slow, once)."""
    override = os.environ.get("BEDRUD_BOT_BINARY")
    if override:
        if not os.access(override, os.X_OK):
            pytest.fail(f"BEDRUD_BOT_BINARY={override} is not an executable")
        return override
    debug = os.path.join(REPO, ".build", "debug", "bedrud-bot")
    for path in (debug, os.path.join(REPO, ".build", "release", "bedrud-bot")):
        if os.access(path, os.X_OK):
            return path
    try:
        build = subprocess.run(["swift", "build", "--product", "bedrud-bot"], cwd=REPO, capture_output=True,
                               text=True, timeout=3600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"no built bot and `swift build` could not run: {exc}")
    if build.returncode != 0 or not os.access(debug, os.X_OK):
        pytest.fail(f"no built bot and `swift build` failed ({build.returncode}):\n{build.stderr[-3000:]}")
    return debug


@pytest.fixture(scope="module")
def logged(tmp_path_factory):  # type: ignore[no-untyped-def]
    """(request log entries, the bot's outputs) of one scripted session."""
    home = tmp_path_factory.mktemp("bot-home")
    log_file = home / "requests.jsonl"
    srv = DevServer("--request-log", str(log_file))
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    pw = home / "pw"
    pw.write_text(PW + "\n")
    pw.chmod(0o600)
    bot = bot_binary()
    steps = [
        ["instance", "add", srv.url, "--name", "dev", "--email", "bot@example.com", "--password-file", str(pw)],
        ["register", "--name", "Conformance Bot"],
        ["login"],
        ["rooms", "create", "conf-room", "--public", "--max", "5"],
        ["rooms", "list"],
        ["rooms", "settings", "conf-room", "--chat", "no", "--public", "no"],
        ["join", "conf-room", "--dry-run"],
        ["rooms", "delete", "conf-room"],
        ["logout"],
    ]
    outputs = []
    try:
        for args in steps:
            proc = subprocess.run([bot, *args], env=env, cwd=str(home), capture_output=True, text=True, timeout=120)
            outputs.append((args, proc.returncode, proc.stdout + proc.stderr))
            assert proc.returncode == 0, f"bedrud-bot {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    finally:
        srv.stop()
    entries = [json.loads(line) for line in log_file.read_text().splitlines()]
    return entries, outputs


def test_the_session_reached_every_route(logged):
    entries, _ = logged
    seen = {(e["method"].lower(), swagger_path(e["path"])) for e in entries}
    for route in [("post", "/auth/register"), ("post", "/auth/login"), ("post", "/room/create"), ("get", "/room/list"),
                  ("put", "/room/{roomId}/settings"), ("post", "/room/join"), ("delete", "/room/{roomId}"),
                  ("post", "/auth/logout")]:
        assert route in seen, f"the bot never called {route[0].upper()} {route[1]}; log: {entries}"


def test_every_body_the_bot_sends_matches_the_swagger_request_schema(logged):
    entries, _ = logged
    spec = Spec()
    problems = []
    for e in entries:
        path = swagger_path(e["path"])
        if path is None:
            problems.append(f"{e['method']} {e['path']}: not a route of Bedrud's API")
            continue
        if e["bytes"] == 0:
            continue  # GET and DELETE: no body
        if not e["json"]:
            problems.append(f"{e['method']} {e['path']}: body is not application/json ({e['contentType']})")
            continue
        schema = spec.request_schema(e["method"], path)
        for p in spec.check(schema, e["body"], answer=False):
            problems.append(f"{e['method']} {path}: {p}")
    assert not problems, "\n".join(problems)


def test_settings_are_written_back_whole(logged):
    entries, _ = logged
    spec = Spec()
    keys = set(spec.definitions["models.RoomSettings"]["properties"]) - {"isPersistent"}  # admin-only, kept
    puts = [e for e in entries if e["method"] == "PUT" and swagger_path(e["path"]) == "/room/{roomId}/settings"
            and isinstance(e["body"], dict) and "settings" in e["body"]]
    assert puts, "no settings object was sent (rooms settings --chat no)"
    for e in puts:  # a body without `settings` leaves them alone (room.go:2017)
        sent = set(e["body"]["settings"])
        assert keys <= sent, f"settings sent without {sorted(keys - sent)}: Bedrud would store them as false"


def test_secrets_never_reach_the_request_log(logged):
    entries, _ = logged
    text = json.dumps(entries)
    assert PW not in text
    for e in entries:
        body = e["body"] if isinstance(e["body"], dict) else {}
        for key in ("password", "refresh_token"):
            if key in body:
                assert body[key] == "<redacted>"
