"""Command line of the development server (`scripts/devserver`)."""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import signal
import sys
import tempfile
from typing import Optional

from .config import ServerConfig
from .durations import parse_duration
from .faults import FaultConfig
from .store import WEBHOOK_EVENTS as WEBHOOK_EVENTS_ALL

DESCRIPTION = """\
Development server for bedrud-bot: Bedrud's REST API (/api) and its embedded
LiveKit SFU (/livekit/rtc signalling with real WebRTC media via aiortc),
scripted participants from scenario files, and a /_dev/ area for tests.

stdout (for scripts and tests; everything else goes to stderr):
  line 1            the base URL, e.g. http://127.0.0.1:8090 (https with --tls)
  ca_file=PATH      with --tls: the CA certificate that signed the server certificate
  pin_sha256=HEX    with --tls: SHA-256 of the server certificate (DER), lowercase hex
  livekit_host=URL  what /api/room/join answers as livekitHost (<base>/livekit)
  scenario=NAME room=ROOM   one line per --scenario file
  ready             the server accepts connections
"""

EPILOG = """\
/_dev/ API (never part of the real server):
  GET  /_dev/state                              rooms, participants, tracks, per-subscriber stats, data log
  POST /_dev/config {accessTtl, registration, joinTimeout, refreshInterval, requireEmailVerification,
                     guestLogin, roomMinAge, roomIdleAfter, lkDepartureTimeout, lkEmptyTimeout,
                     authRateLimit, apiRateLimit, guestRateLimit,
                     refreshLatency}
  POST /_dev/rooms/ROOM/kick/IDENTITY           remove (PARTICIPANT_REMOVED) + system "kick"
  POST /_dev/rooms/ROOM/drop/IDENTITY {seconds} cut a client's signal and media for N s
  POST /_dev/rooms/ROOM/mute/IDENTITY           server-mute audio tracks
  POST /_dev/rooms/ROOM/delete                  delete the room (ROOM_DELETED)
  POST /_dev/rooms/ROOM/deactivate              isActive=false now, as Bedrud's idle sweep (join -> 410/archived_owned)
  POST /_dev/rooms/ROOM/recreate                the creator's "Start new meeting": a new active room, same settings
  POST /_dev/rooms/ROOM/settings {KEY: bool}    change keys of the room's settings (e.g. recordingsAllowed)
  POST /_dev/users/EMAIL/verify                 mark the account's email verified
  POST /_dev/users/EMAIL/deactivate             isActive=false (login 401, API 403 "Account is deactivated")
  POST /_dev/users/EMAIL/delete                 remove the account (/auth/me 401 "User not found")
  POST /_dev/users/EMAIL/accesses {accesses}    set the account's accesses (e.g. ["user","superadmin"]) for tokens issued later
  POST /_dev/rooms/ROOM/chat {from, message}    chat as a participant (topic "chat")
  POST /_dev/rooms/ROOM/system {event, target, actor, toTargetOnly}
  POST /_dev/rooms/ROOM/faults {loss, reorder, duplicate, jitter, seed}
  POST /_dev/rooms/ROOM/scenario  (body: scenario text)
  GET  /_dev/webhooks                           webhook endpoints (with secrets), deliveries made or queued

Scenario files (plain text; see docs/DEVSERVER.md and samples/scenarios/):
  room NAME [public|private]          required once; the room is created if missing
  start immediate|first-join          when the clock starts (default immediate)
  idle dtx|silence|pause              what quiet participants send (default: --scripted-idle)
  at TIME COMMAND ... / +TIME COMMAND ...   absolute / relative to the previous line
  commands: join ID [name=N] [metadata=JSON] [idle=MODE] | leave ID | speak ID FILE
            tone ID FREQ DURATION [amplitude=A] | say ID TEXT [voice=V]
            mute ID | unmute ID | dtx ID | silence ID | pause ID | chat ID TEXT
            system EVENT [target=T] [actor=A] [to=room|target] | kick TARGET
            server-mute TARGET | drop TARGET DURATION | delete-room
            faults [loss=P] [reorder=P] [duplicate=P] [jitter=D] [seed=N]
  TARGET: an identity, $client (first real client) or $clients

Private network namespace for libwebrtc clients: scripts/netns-run CMD...
"""


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="scripts/devserver", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8090, help="TCP port; 0 picks a free one (default 8090)")
    p.add_argument("--tls", action="store_true", help="serve https/wss with a generated CA + certificate")
    p.add_argument("--tls-dir", help="where to write ca.pem, server.pem, server.key (default: a temp dir removed on exit)")
    p.add_argument("--access-ttl", default="24h", help="Bedrud access-token lifetime, e.g. 24h or 5s (default 24h)")
    p.add_argument("--refresh-ttl", default="7d", help="Bedrud refresh-token lifetime (default 7d)")
    p.add_argument("--registration", choices=["on", "off"], default="on", help="allow /api/auth/register (default on)")
    p.add_argument("--seed-user", action="append", default=[], metavar="EMAIL:PASSWORD[:NAME]",
                   help="create a user at start (repeatable); a password containing ':' needs the NAME part")
    p.add_argument("--seed-room", action="append", default=[], metavar="NAME[:public|private][:norecord][:owner=EMAIL]",
                   help="create a room (repeatable; default public, recordingsAllowed true, owned by the first "
                        "--seed-user or else owner@devserver.local)")
    p.add_argument("--superadmin", action="append", default=[], metavar="EMAIL",
                   help="give this --seed-user Bedrud's superadmin role, accesses [\"superadmin\", \"user\"] "
                        "(repeatable; as `bedrud user promote`)")
    p.add_argument("--webhook", action="append", default=[], metavar="URL",
                   help="devserver convenience: register an outbound webhook endpoint for URL at start, active, "
                        "subscribed to every event (repeatable); prints webhook=ID secret=S url=URL")
    p.add_argument("--webhook-secret-file", metavar="FILE",
                   help="the secret of every --webhook: read from FILE, or generated as Bedrud does and written "
                        "there (0600) when FILE does not exist (default: a new secret per endpoint)")
    p.add_argument("--webhook-events", default=",".join(WEBHOOK_EVENTS_ALL), metavar="LIST",
                   help="comma-separated events of every --webhook (default: all five)")
    p.add_argument("--scenario", action="append", default=[], metavar="FILE", help="run a scenario file (repeatable)")
    p.add_argument("--scenario-start", choices=["file", "immediate", "first-join"], default="file",
                   help="when scenario clocks start: as the file says (default), at once, or when the first real client joins")
    p.add_argument("--jwt-secret", default=ServerConfig.jwt_secret, help="HS256 key for Bedrud tokens")
    p.add_argument("--lk-api-key", default=ServerConfig.lk_api_key, help="LiveKit API key (iss of LiveKit tokens)")
    p.add_argument("--lk-api-secret", default=ServerConfig.lk_api_secret, help="LiveKit API secret")
    p.add_argument("--lk-token-ttl", default="2h", help="lifetime of LiveKit tokens from /api/room/join (default 2h, as v0.12.0)")
    p.add_argument("--lk-departure-timeout", default="0", metavar="SECONDS",
                   help="LiveKit closes a room this long after its last participant left, and Bedrud makes it "
                        "inactive (LiveKit's default 20; default 0 = never)")
    p.add_argument("--lk-empty-timeout", default="0", metavar="SECONDS",
                   help="LiveKit closes a room nobody joined this long after creation (LiveKit's default 300; "
                        "default 0 = never)")
    p.add_argument("--require-email-verification", action="store_true",
                   help="Bedrud's auth.requireEmailVerification: register gives no tokens, login and the room API "
                        "refuse unverified accounts (verify with POST /_dev/users/EMAIL/verify)")
    p.add_argument("--guest-login", choices=["on", "off"], default="on", help="guestLoginEnabled (default on)")
    p.add_argument("--room-min-age", default="300", metavar="SECONDS",
                   help="the idle sweep spares rooms younger than this (default 300, as v0.12.0)")
    p.add_argument("--room-idle-after", default="60", metavar="SECONDS",
                   help="a non-persistent room with nobody in LiveKit this long becomes inactive (default 60)")
    p.add_argument("--auth-rate-limit", type=int, default=None, metavar="N",
                   help="requests per address and route per --rate-window on register/login/guest-login/refresh; "
                        "0 = off (default 0; v0.12.0 uses 10)")
    p.add_argument("--api-rate-limit", type=int, default=None, metavar="N",
                   help="the same for room create, refresh-token and chat upload (default 0; v0.12.0 uses 30)")
    p.add_argument("--guest-rate-limit", type=int, default=None, metavar="N",
                   help="the same for guest-join (default 0; v0.12.0 uses 5)")
    p.add_argument("--rate-limits", choices=["off", "v0.12"], default="off",
                   help="v0.12 sets the three limits above to Bedrud's 10/30/5 a minute (explicit numbers win)")
    p.add_argument("--rate-window", default="60", metavar="SECONDS", help="the rate limits' window (default 60)")
    p.add_argument("--refresh-latency", default="0.05", metavar="SECONDS",
                   help="time /auth/refresh spends between checking a token and rotating it; two refreshes of one "
                        "token inside it race and the second gets 409 (default 0.05)")
    p.add_argument("--request-log", metavar="FILE",
                   help="append one JSON line per /api request (method, path, body with secrets redacted)")
    p.add_argument("--refresh-interval", default="5m", help="how often refresh_token is sent to clients (default 5m)")
    p.add_argument("--join-timeout", default="60s", help="a client not ACTIVE this long after join gets JOIN_FAILURE (default 60s)")
    p.add_argument("--ice-host", action="append", default=[], metavar="ADDR",
                   help="host address for ICE candidates (repeatable; default 127.0.0.1)")
    p.add_argument("--loss", default="0%", help="default RTP loss towards subscribers, e.g. 5%%")
    p.add_argument("--reorder", default="0%", help="default fraction of RTP packets delayed past later ones")
    p.add_argument("--duplicate", default="0%", help="default fraction of RTP packets sent twice")
    p.add_argument("--jitter", default="0ms", help="default extra random delay per RTP packet, up to this (e.g. 30ms)")
    p.add_argument("--fault-seed", default="1", help="seed of the fault generator (default 1)")
    p.add_argument("--media", choices=["forward", "reencode"], default="forward",
                   help="forward publishers' RTP packets as LiveKit does (default), or decode and re-encode them")
    p.add_argument("--scripted-idle", choices=["silence", "dtx", "pause"], default="silence",
                   help="what a quiet scripted participant sends unless its scenario's `idle` line or its join's "
                        "idle= says otherwise: digital silence frames (default), libwebrtc's Opus DTX packets "
                        "(a 1-byte packet and a comfort-noise frame every 400 ms), or nothing")
    p.add_argument("--scripted-precode", action="store_true",
                   help="code each scenario clip with libopus once when the scenario loads and send the stored "
                        "packets (media.CodedClip) instead of coding every 20 ms frame live: much less CPU per "
                        "scripted speaker (scripts/bench-peers --rooms uses it); packets of a fresh encoder per clip")
    p.add_argument("--turn-url", action="append", default=[], metavar="URL",
                   help="a TURN server for ice_servers, e.g. turn:127.0.0.1:3478?transport=udp (repeatable; needs --turn-secret)")
    p.add_argument("--turn-secret", default="", help="coturn's static-auth-secret: credentials are time-limited (use-auth-secret)")
    p.add_argument("--turn-ttl", default="300s", help="lifetime of each TURN credential handed out (default 300s, as LiveKit 1.12)")
    # Bedrud after v0.12.0 (docs/DEVSERVER.md "After v0.12.0"): each switch names the commit it follows.
    p.add_argument("--room-delete-dedupe", choices=["off", "7ac5f0b"], default="off",
                   help="7ac5f0b (Bedrud PR #107): a second DELETE /api/room/ID while the first deletion is "
                        "queued is 409 \"Deletion already in progress\" (default off, as v0.12.0)")
    p.add_argument("--room-delete-delay", default="0.5", metavar="SECONDS",
                   help="with --room-delete-dedupe: how long a queued room deletion waits to run (default 0.5, "
                        "the queue's poll interval)")
    p.add_argument("--admin-set-password", choices=["off", "ff4c0a8"], default="off",
                   help="ff4c0a8: PUT /api/admin/users/ID/password {password} for superadmins, which clears the "
                        "user's refresh token (default off)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return p.parse_args(argv)


def build_config(args: argparse.Namespace) -> tuple[ServerConfig, FaultConfig]:
    cfg = ServerConfig(
        host=args.host, port=args.port, tls=args.tls, tls_dir=args.tls_dir,
        jwt_secret=args.jwt_secret, access_ttl=parse_duration(args.access_ttl),
        refresh_ttl=parse_duration(args.refresh_ttl), registration=args.registration == "on",
        lk_api_key=args.lk_api_key, lk_api_secret=args.lk_api_secret,
        lk_token_ttl=parse_duration(args.lk_token_ttl), lk_refresh_interval=parse_duration(args.refresh_interval),
        join_timeout=parse_duration(args.join_timeout), ice_hosts=args.ice_host or ["127.0.0.1"],
        media=args.media, scripted_idle=args.scripted_idle, scripted_precode=args.scripted_precode, turn_urls=args.turn_url, turn_secret=args.turn_secret, turn_ttl=parse_duration(args.turn_ttl),
        require_email_verification=args.require_email_verification, guest_login=args.guest_login == "on",
        room_min_age=_seconds(args.room_min_age, "--room-min-age"),
        room_idle_after=_seconds(args.room_idle_after, "--room-idle-after"),
        rate_window=_seconds(args.rate_window, "--rate-window"),
        lk_departure_timeout=_seconds(args.lk_departure_timeout, "--lk-departure-timeout"),
        lk_empty_timeout=_seconds(args.lk_empty_timeout, "--lk-empty-timeout"),
        refresh_latency=_seconds(args.refresh_latency, "--refresh-latency"),
        request_log=args.request_log,
    )
    cfg.room_delete_dedupe = "" if args.room_delete_dedupe == "off" else args.room_delete_dedupe
    cfg.room_delete_delay = _seconds(args.room_delete_delay, "--room-delete-delay")
    cfg.admin_set_password = "" if args.admin_set_password == "off" else args.admin_set_password
    defaults = (10, 30, 5) if args.rate_limits == "v0.12" else (0, 0, 0)
    for attr, flag, value, default in (("auth_rate_limit", "--auth-rate-limit", args.auth_rate_limit, defaults[0]),
                                       ("api_rate_limit", "--api-rate-limit", args.api_rate_limit, defaults[1]),
                                       ("guest_rate_limit", "--guest-rate-limit", args.guest_rate_limit, defaults[2])):
        if value is not None and value < 0:
            raise ValueError(f"{flag} must be 0 (off) or more")
        setattr(cfg, attr, default if value is None else value)
    if cfg.rate_window <= 0:
        raise ValueError("--rate-window must be more than 0")
    if cfg.turn_urls and not cfg.turn_secret:
        raise ValueError("--turn-url needs --turn-secret")
    if cfg.turn_ttl < 1:
        raise ValueError("--turn-ttl must be at least 1s")
    if not (0 <= args.port <= 65535):
        raise ValueError("--port must be 0..65535")
    if cfg.lk_refresh_interval < 1:
        raise ValueError("--refresh-interval must be at least 1s")
    faults = FaultConfig()
    faults.update({"loss": args.loss, "reorder": args.reorder, "duplicate": args.duplicate,
                   "jitter": args.jitter, "seed": args.fault_seed})
    return cfg, faults


def _seconds(text: str, flag: str) -> float:
    """A number of seconds, or a duration such as 5s or 2m."""
    try:
        value = float(text)
    except ValueError:
        try:
            value = parse_duration(text)
        except ValueError:
            raise ValueError(f"{flag} {text!r}: expected seconds, e.g. 5 or 2m") from None
    if value < 0 or value != value:
        raise ValueError(f"{flag} must not be negative")
    return value


def parse_seed_room(spec: str) -> tuple[str, bool, bool, str]:
    """NAME[:public|private][:norecord][:owner=EMAIL] -> (name, public, recordingsAllowed, owner email)."""
    from .store import validate_room_name
    name, *options = spec.split(":")
    public, record, owner = True, True, ""
    for option in options:
        if option in ("public", "private"):
            public = option == "public"
        elif option == "norecord":
            record = False
        elif option.startswith("owner=") and len(option) > 6:
            owner = option[6:].strip().lower()
        else:
            raise ValueError(f"--seed-room {spec!r}: expected NAME[:public|private][:norecord][:owner=EMAIL]")
    problem = validate_room_name(name)
    if problem:
        raise ValueError(f"--seed-room {name!r}: {problem}")
    return name, public, record, owner


def parse_seed_user(spec: str) -> tuple[str, str, str]:
    email, sep, rest = spec.partition(":")
    if not sep or not email or not rest:
        raise ValueError(f"--seed-user {spec!r}: expected EMAIL:PASSWORD[:NAME]")
    if ":" in rest:
        password, name = rest.rsplit(":", 1)
    else:
        password, name = rest, email.split("@")[0]
    if len(name) < 2:
        name = (name + "__")[:2]
    return email, password, name


def check_webhook_flags(args: argparse.Namespace) -> list[str]:
    """Usage errors of --superadmin and --webhook*; returns the events list."""
    from .webhooks import url_problem
    seeded = {parse_seed_user(spec)[0] for spec in args.seed_user}
    for email in args.superadmin:
        if email not in seeded:
            raise ValueError(f"--superadmin {email}: no --seed-user {email}")
    for url in args.webhook:
        if url_problem(url) is not None:
            raise ValueError(f"--webhook {url!r}: expected an absolute http:// or https:// URL")
    events = [e.strip() for e in args.webhook_events.split(",") if e.strip()]
    bad = [e for e in events if e not in WEBHOOK_EVENTS_ALL]
    if not events or bad:
        raise ValueError(f"--webhook-events: expected some of {', '.join(WEBHOOK_EVENTS_ALL)}")
    if args.webhook_secret_file and not args.webhook:
        raise ValueError("--webhook-secret-file needs --webhook")
    return events


def webhook_secret(path: Optional[str]) -> str:
    """--webhook-secret-file: the file's content (surrounding white space dropped), or a new
    secret (32 hex digits, as CreateWebhook makes them) written to it."""
    from .store import new_webhook_secret
    if not path:
        return new_webhook_secret()
    try:
        with open(path, encoding="utf-8") as f:
            secret = f.read().strip()
    except FileNotFoundError:
        secret = new_webhook_secret()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(secret + "\n")
        return secret
    except OSError as exc:
        raise ValueError(f"--webhook-secret-file {path}: cannot read: {exc.strerror}") from None
    if not secret:
        raise ValueError(f"--webhook-secret-file {path}: the file is empty")
    return secret


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def serve(args: argparse.Namespace) -> int:
    from aiohttp import web

    from . import patches
    from .app import build

    cfg, faults = build_config(args)
    patches.apply(cfg.ice_hosts)
    server = build(cfg)
    server.sfu.default_faults = faults
    store = server.store
    for spec in args.seed_user:
        email, password, name = parse_seed_user(spec)
        if store.user_by_email(email) is None:
            store.add_user(email, name, password, "local", ["user"], __import__("time").time())
    for email in args.superadmin:
        # usercli.PromoteUser with roleAccessSlice("superadmin") (usercli/usercli.go:26-41, 88-91).
        store.user_by_email(email).accesses = ["superadmin", "user"]
    events = check_webhook_flags(args)
    hook_secret = webhook_secret(args.webhook_secret_file) if args.webhook else ""

    ssl_ctx = None
    tls_dir: Optional[str] = None
    material = None
    if cfg.tls:
        from .tls import generate
        tls_dir = cfg.tls_dir or tempfile.mkdtemp(prefix="bedrud-devserver-tls-")
        material = generate(tls_dir)
        ssl_ctx = material.server_context()

    runner = web.AppRunner(server.app, access_log=None, handle_signals=False, shutdown_timeout=2.0)
    await runner.setup()
    site = web.TCPSite(runner, cfg.host, cfg.port, ssl_context=ssl_ctx)
    await site.start()
    sock = site._server.sockets[0]  # type: ignore[union-attr]
    port = sock.getsockname()[1]
    host = cfg.host if ":" not in cfg.host else f"[{cfg.host}]"
    cfg.base_url = f"{'https' if cfg.tls else 'http'}://{host}:{port}"
    out(cfg.base_url)
    if material is not None:
        out(f"ca_file={material.ca_file}")
        out(f"pin_sha256={material.pin_sha256}")
    out(f"livekit_host={cfg.livekit_host}")
    from .store import Webhook
    creator = next((store.user_by_email(e) for e in args.superadmin), None) or next(iter(store.users.values()), None)
    for n, url in enumerate(args.webhook, 1):
        # What POST /api/admin/webhooks stores (admin_handler.go:1385-1396), without the request.
        now = __import__("time").time()
        hook = Webhook(id=str(__import__("uuid").uuid4()), name=f"devserver --webhook {n}", url=url,
                       secret=hook_secret if args.webhook_secret_file else webhook_secret(None),
                       events=list(events), created_by=creator.id if creator else "", created_at=now, updated_at=now)
        store.webhooks[hook.id] = hook
        out(f"webhook={hook.id} secret={hook.secret} url={url}")

    import time as _time
    default_owner = next(iter(store.users.values()), None)
    for spec in args.seed_room:
        name, public, record, owner_email = parse_seed_room(spec)
        owner = store.user_by_email(owner_email) if owner_email else default_owner
        if owner_email and owner is None:
            raise ValueError(f"--seed-room {spec!r}: no --seed-user {owner_email}")
        if owner is None:
            owner = default_owner = store.add_user("owner@devserver.local", "Devserver Owner", "", "local", ["user"],
                                                   _time.time())
        from .store import default_settings
        settings = default_settings()
        settings["recordingsAllowed"] = record
        if store.active_room_named(name) is None:
            store.add_room(name, owner.id, public, "", settings, _time.time())
        server.sfu.create_room(name)

    from .scenario import ScenarioRunner
    scenarios = ScenarioRunner(server)
    server.extras["scenarios"] = scenarios
    for path in args.scenario:
        run = scenarios.start_file(path, start_override=None if args.scenario_start == "file" else args.scenario_start)
        out(f"scenario={run.name} room={run.room_name}")
    out("ready")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    logging.getLogger("devserver").info("shutting down")
    await runner.cleanup()
    if tls_dir and not cfg.tls_dir:
        shutil.rmtree(tls_dir, ignore_errors=True)
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("devserver").setLevel(args.log_level.upper())
    try:
        build_config(args)
        for spec in args.seed_user:
            parse_seed_user(spec)
        for spec in args.seed_room:
            parse_seed_room(spec)
        check_webhook_flags(args)
        from .scenario import ScenarioError, parse
        for path in args.scenario:
            try:
                with open(path, encoding="utf-8") as f:
                    parse(f.read(), path)
            except OSError as exc:
                raise ScenarioError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        print(f"devserver: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(args))
    except ValueError as exc:
        print(f"devserver: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"devserver: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
