"""Settings of one devserver run (filled from the command line)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 0
    tls: bool = False
    tls_dir: Optional[str] = None
    # Bedrud auth (bedrud-api.md §0.4)
    jwt_secret: str = "devserver-jwt-secret-not-for-production-000000"
    access_ttl: float = 24 * 3600.0
    refresh_ttl: float = 7 * 24 * 3600.0
    registration: bool = True
    # Bedrud v0.12.0 switches (docs/DEVSERVER.md "Bedrud v0.12.0 rules").
    require_email_verification: bool = False  # config auth.requireEmailVerification
    guest_login: bool = True  # system setting guestLoginEnabled (models/settings.go:39)
    # Idle sweep (scheduler.go:237-303): a non-persistent room older than room_min_age
    # with nobody in LiveKit for room_idle_after seconds becomes inactive.
    room_min_age: float = 300.0
    room_idle_after: float = 60.0
    # LiveKit's own room timeouts (its defaults: 20 s after the last participant left,
    # 300 s when nobody came); 0 = the devserver's SFU keeps empty rooms open.
    lk_departure_timeout: float = 0.0
    lk_empty_timeout: float = 0.0
    # Requests per client address and route in rate_window seconds; 0 = no limit.
    # v0.12.0 has auth 10, api 30, guest-join 5 (middleware/ratelimit.go); the devserver
    # default is off because test suites log in far more often than 10 times a minute.
    auth_rate_limit: int = 0
    api_rate_limit: int = 0
    guest_rate_limit: int = 0
    rate_window: float = 60.0
    # How long /auth/refresh takes between checking a refresh token and rotating it:
    # two refreshes of one token inside this window race, and the loser gets 409
    # (auth_handler.go:486-492). Sequential reuse of a rotated token is 401.
    refresh_latency: float = 0.05
    # JSON lines of every /api request body (secrets redacted), for the conformance test.
    request_log: Optional[str] = None
    # LiveKit (livekit-protocol.md §4)
    lk_api_key: str = "devkey"
    lk_api_secret: str = "devserver-livekit-secret-not-for-production-0000"
    lk_token_ttl: float = 2 * 3600.0  # livekitTokenTTL, room.go:74
    lk_refresh_interval: float = 300.0
    join_timeout: float = 60.0
    renegotiation_timeout: float = 15.0
    ping_interval: int = 5
    ping_timeout: int = 15
    server_protocol: int = 16
    server_version: str = "1.9.0"
    ice_hosts: list[str] = field(default_factory=lambda: ["127.0.0.1"])
    speaker_interval: float = 0.5
    quality_interval: float = 5.0
    # "forward": subscribers get the publisher's packets (LiveKit's forwarder);
    # "reencode": decoded and encoded again per subscriber by aiortc.
    media: str = "forward"
    # What a scripted participant sends when quiet, unless its scenario's `idle` line or
    # its join's idle= says otherwise (media.py IDLE_MODES): "silence" frames (DTX off, the
    # devserver's behaviour before issue 33), libwebrtc's "dtx" packets, or "pause" (nothing).
    scripted_idle: str = "silence"
    # Code every scenario clip once when its scenario loads and send the stored packets
    # (media.CodedClip): far less CPU per speaker, for benchmarks of many rooms.
    scripted_precode: bool = False
    # Fault switches for `bedrud-bot smoke`'s tests (POST /_dev/config): the SFU refuses
    # every join token (401, as with a LiveKit secret that is not Bedrud's); /rtc answers
    # WebSocket upgrades with this HTTP status (0: off; `true` is 400, a proxy that drops
    # the Upgrade header; 401/403/404/5xx as LiveKit refuses, signalling.py `rtc`); SDP
    # carries a DTLS fingerprint that is not the certificate's.
    refuse_tokens: bool = False
    refuse_upgrades: int = 0
    bad_fingerprint: bool = False
    # A TURN server handed out in JoinResponse/ReconnectResponse.ice_servers with
    # time-limited credentials (coturn's use-auth-secret: username "<expiry>:<identity>",
    # password base64(HMAC-SHA1(secret, username))), each response a fresh pair valid
    # `turn_ttl` seconds, as LiveKit >= 1.12 does. Empty: no ICE servers (the default).
    turn_urls: list[str] = field(default_factory=list)
    turn_secret: str = ""
    turn_ttl: float = 300.0
    # Bedrud behaviours newer than v0.12.0, each named by the commit it follows
    # (docs/DEVSERVER.md "After v0.12.0"; upstream.py). "" = off, as v0.12.0.
    # room_delete_dedupe "7ac5f0b": PR #107's queue refuses a second DELETE /api/room/:id
    # with 409 while the first room_delete job is unfinished; the job runs
    # room_delete_delay seconds after it is queued (the queue worker's poll, default 0.5).
    room_delete_dedupe: str = ""
    room_delete_delay: float = 0.5
    # admin_set_password "ff4c0a8": PUT /api/admin/users/:id/password (superadmin).
    admin_set_password: str = ""
    # Filled in once the listening socket is bound.
    base_url: str = ""

    @property
    def livekit_host(self) -> str:
        return f"{self.base_url}/livekit"
