"""Bedrud v0.12.0's account rules in the devserver: email verification, refresh rotation
(401 against 409), deactivated and deleted accounts, guests, the rate limits and the
flags that switch them (rest.py, ratelimit.py, __main__.py)."""
from __future__ import annotations

import subprocess
import threading
import time
import uuid

import pytest

from ..ratelimit import RateLimiter
from .helpers import DEVSERVER, DevServer

PW = "correct horse battery"


def email() -> str:
    return f"u{uuid.uuid4().hex[:10]}@example.com"


@pytest.fixture(scope="module")
def srv():
    s = DevServer("--refresh-latency", "0.5")
    yield s
    s.stop()


# MARK: - email verification

def test_verification_withholds_tokens_until_the_address_is_verified():
    s = DevServer("--require-email-verification")
    try:
        address = email()
        r = s.request("POST", "/api/auth/register", {"email": address, "password": PW, "name": "Vera"})
        assert (r.status, r.json()) == (200, {"requiresVerification": True,
                                              "message": "Please check your email to verify your account",
                                              "email": address})
        assert "Set-Cookie" not in r.headers
        r = s.request("POST", "/api/auth/login", {"email": address, "password": PW})
        assert (r.status, r.json()) == (403, {"error": "Please verify your email before signing in",
                                              "requiresVerification": True, "email": address})
        wrong = s.request("POST", "/api/auth/login", {"email": address, "password": "not the password"})
        assert (wrong.status, wrong.json()) == (401, {"error": "Invalid credentials"})
        assert s.request("GET", "/api/auth/settings").json()["requireEmailVerification"] is True
        assert s.request("POST", f"/_dev/users/{address}/verify").status == 200
        body = s.login(address)
        assert body["user"]["emailVerifiedAt"] is not None
        token = body["tokens"]["accessToken"]
        assert s.request("POST", "/api/room/create", {"name": f"v-{uuid.uuid4().hex[:6]}"}, token=token).status == 200
        missing = s.request("POST", "/_dev/users/nobody@example.com/verify")
        assert (missing.status, missing.json()) == (404, {"error": "no such user"})
    finally:
        s.stop()


def test_an_unverified_token_is_refused_by_the_room_api(srv):
    # Tokens issued while verification was off stop working once it is on (middleware/auth.go:165-197).
    body = srv.register(email(), "Uma")
    token, refresh = body["tokens"]["accessToken"], body["tokens"]["refreshToken"]
    owner = srv.register(email())["tokens"]["accessToken"]
    name = f"ver-{uuid.uuid4().hex[:6]}"
    assert srv.request("POST", "/api/room/create", {"name": name, "isPublic": True}, token=owner).status == 200
    guest = srv.request("POST", "/api/auth/guest-login", {"name": "Gus"}).json()["tokens"]["accessToken"]
    assert srv.request("POST", "/_dev/config", {"requireEmailVerification": True}).status == 200
    try:
        for method, path, payload in (("POST", "/api/room/join", {"roomName": name}),
                                      ("POST", "/api/room/refresh-token", {"roomName": name}),
                                      ("GET", "/api/room/list", None), ("GET", "/api/auth/me", None)):
            r = srv.request(method, path, payload, token=token)
            assert (r.status, r.json()) == (403, {"error": "Email not verified"}), path
        r = srv.request("POST", "/api/auth/refresh", {"refresh_token": refresh})
        assert (r.status, r.json()) == (403, {"error": "Please verify your email before signing in"})
        # Guests have no address and are exempt.
        assert srv.request("POST", "/api/room/join", {"roomName": name}, token=guest).status == 200
    finally:
        srv.request("POST", "/_dev/config", {"requireEmailVerification": False})


# MARK: - refresh rotation

def _refresh(srv: DevServer, token: str):  # type: ignore[no-untyped-def]
    return srv.request("POST", "/api/auth/refresh", {"refresh_token": token})


def test_two_refreshes_of_one_token_at_once_get_200_and_409(srv):
    token = srv.register(email())["tokens"]["refreshToken"]
    results: list = []
    gate = threading.Barrier(2)

    def go() -> None:
        gate.wait()
        results.append(_refresh(srv, token))
    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    outcomes = sorted((r.status, r.json()) for r in results)
    assert outcomes[1] == (409, {"error": "Refresh token has already been rotated"})
    assert outcomes[0][0] == 200 and set(outcomes[0][1]) == {"access_token", "refresh_token"}
    # The winner's new token works; the old one, reused later, is simply invalid.
    assert _refresh(srv, outcomes[0][1]["refresh_token"]).status == 200
    late = _refresh(srv, token)
    assert (late.status, late.json()) == (401, {"error": "Invalid or expired refresh token"})


def test_a_deactivated_account_is_refused_everywhere(srv):
    address = email()
    body = srv.register(address)
    token, refresh = body["tokens"]["accessToken"], body["tokens"]["refreshToken"]
    assert srv.request("POST", f"/_dev/users/{address}/deactivate").status == 200
    r = _refresh(srv, refresh)
    assert (r.status, r.json()) == (403, {"error": "Account is deactivated"})
    for method, path in (("GET", "/api/auth/me"), ("GET", "/api/room/list")):
        r = srv.request(method, path, token=token)
        assert (r.status, r.json()) == (403, {"error": "Account is deactivated"})
    r = srv.request("POST", "/api/auth/login", {"email": address, "password": PW})
    assert (r.status, r.json()) == (401, {"error": "Invalid credentials"})


def test_me_for_a_deleted_account_is_401(srv):
    address = email()
    token = srv.register(address)["tokens"]["accessToken"]
    assert srv.request("POST", f"/_dev/users/{address}/delete").status == 200
    r = srv.request("GET", "/api/auth/me", token=token)
    assert (r.status, r.json()) == (401, {"error": "User not found"})


# MARK: - guests

def test_guests_cannot_manage_rooms(srv):
    guest = srv.request("POST", "/api/auth/guest-login", {"name": "Gail"}).json()["tokens"]["accessToken"]
    owner = srv.register(email())["tokens"]["accessToken"]
    room = srv.request("POST", "/api/room/create", {"name": f"g-{uuid.uuid4().hex[:6]}", "isPublic": True},
                       token=owner).json()
    for method, path, payload in (("POST", "/api/room/create", {"name": f"g-{uuid.uuid4().hex[:6]}"}),
                                  ("GET", "/api/room/list", None),
                                  ("PUT", f"/api/room/{room['id']}/settings", {"isPublic": False}),
                                  ("DELETE", f"/api/room/{room['id']}", None)):
        r = srv.request(method, path, payload, token=guest)
        assert (r.status, r.json()) == (403, {"error": "Guests cannot create or manage rooms"}), path
    assert srv.request("POST", "/api/room/join", {"roomName": room["name"]}, token=guest).status == 200


def test_guest_login_can_be_switched_off(srv):
    assert srv.request("POST", "/_dev/config", {"guestLogin": False}).status == 200
    try:
        r = srv.request("POST", "/api/auth/guest-login", {"name": "Gail"})
        assert (r.status, r.json()) == (403, {"error": "Guest login is currently disabled"})
        r = srv.request("POST", "/api/room/guest-join", {"roomName": "any-room", "guestName": "Gail"})
        assert (r.status, r.json()) == (403, {"error": "Guest login is currently disabled"})
        assert srv.request("GET", "/api/auth/settings").json()["guestLoginEnabled"] is False
    finally:
        srv.request("POST", "/_dev/config", {"guestLogin": True})


# MARK: - rate limits

def test_fixed_window_limiter():
    limiter = RateLimiter(limit=2, window=60)
    first = limiter.hit("1.2.3.4", 100.0)
    assert first is not None and (first.allowed, first.remaining, first.reset_in) == (True, 1, 60)
    assert limiter.hit("1.2.3.4", 110.0).allowed is True
    third = limiter.hit("1.2.3.4", 130.5)
    assert (third.allowed, third.remaining, third.reset_in) == (False, 0, 30)
    assert limiter.hit("5.6.7.8", 130.5).allowed is True  # per address
    assert limiter.hit("1.2.3.4", 160.0).allowed is True  # a new window
    assert RateLimiter(limit=0).hit("x", 0.0) is None


def test_auth_routes_are_limited_per_route_and_address():
    s = DevServer("--auth-rate-limit", "3", "--rate-window", "3")
    try:
        address = email()
        s.register(address)  # one register: the login route still has all 3
        for n in range(3):
            r = s.request("POST", "/api/auth/login", {"email": address, "password": PW})
            assert r.status == 200 and r.headers["X-RateLimit-Remaining"] == str(2 - n)
        r = s.request("POST", "/api/auth/login", {"email": address, "password": PW})
        assert (r.status, r.json()) == (429, {"error": "too many requests, please try again later"})
        assert 1 <= int(r.headers["Retry-After"]) <= 3
        assert s.request("POST", "/api/auth/guest-login", {"name": "Other route"}).status == 200
        deadline = time.monotonic() + 10
        while s.request("POST", "/api/auth/login", {"email": address, "password": PW}).status == 429:
            assert time.monotonic() < deadline, "the window never ended"
            time.sleep(0.25)
    finally:
        s.stop()


def test_v012_rate_limits_preset():
    s = DevServer("--rate-limits", "v0.12", "--api-rate-limit", "1", "--guest-rate-limit", "0")
    try:
        token = s.register(email())["tokens"]["accessToken"]
        r = s.request("POST", "/api/auth/login", {"email": "x@example.com", "password": "whatever-pass"})
        assert r.headers["X-RateLimit-Limit"] == "10"
        r = s.request("POST", "/api/room/guest-join", {"roomName": "none-here", "guestName": "G"})
        assert r.status == 404 and "X-RateLimit-Limit" not in r.headers  # explicitly off
        assert s.request("POST", "/api/room/create", {}, token=token).status == 200
        r = s.request("POST", "/api/room/create", {}, token=token)
        assert (r.status, r.json()) == (429, {"error": "too many requests"})
    finally:
        s.stop()


@pytest.mark.parametrize("flags,message", [
    (["--room-min-age", "soon"], "devserver: --room-min-age 'soon': expected seconds, e.g. 5 or 2m"),
    (["--room-idle-after", "-1"], "devserver: --room-idle-after must not be negative"),
    (["--auth-rate-limit", "-2"], "devserver: --auth-rate-limit must be 0 (off) or more"),
    (["--rate-window", "0"], "devserver: --rate-window must be more than 0"),
    (["--seed-room", "standup:loud"],
     "devserver: --seed-room 'standup:loud': expected NAME[:public|private][:norecord][:owner=EMAIL]"),
])
def test_bad_v012_flags_exit_2(flags, message):
    proc = subprocess.run([DEVSERVER, "--port", "0", *flags], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr.strip().splitlines()[-1]) == (2, message)


def test_seed_room_options_and_dev_recreate():
    s = DevServer("--seed-user", "boss@example.com:boss-password-1:Boss", "--seed-user", "bot@example.com:bot-password-12:Bot",
                  "--seed-room", "standup:private:norecord:owner=bot@example.com", "--seed-room", "daily")
    try:
        rooms = {r["name"]: r for r in s.state()["bedrudRooms"]}
        users = {u["email"]: u["id"] for u in s.state()["users"]}
        assert rooms["standup"]["createdBy"] == users["bot@example.com"] and rooms["standup"]["isPublic"] is False
        assert rooms["standup"]["settings"]["recordingsAllowed"] is False
        assert rooms["daily"]["createdBy"] == users["boss@example.com"] and rooms["daily"]["isPublic"] is True
        assert rooms["daily"]["settings"]["recordingsAllowed"] is True
        r = s.request("POST", "/_dev/rooms/standup/recreate")
        assert (r.status, r.json()) == (400, {"error": "the room is active"})
        assert s.request("POST", "/_dev/rooms/standup/deactivate").status == 200
        r = s.request("POST", "/_dev/rooms/standup/recreate")
        assert r.status == 200 and r.json()["room"]["id"] != rooms["standup"]["id"]
        assert r.json()["room"]["settings"] == rooms["standup"]["settings"]
        new_id = r.json()["room"]["id"]
        r = s.request("POST", "/_dev/rooms/standup/settings", {"recordingsAllowed": True})
        assert r.json()["settings"]["recordingsAllowed"] is True
        bot = s.login("bot@example.com", "bot-password-12")["tokens"]["accessToken"]
        j = s.request("POST", "/api/room/join", {"roomName": "standup"}, token=bot)
        assert j.status == 200 and j.json()["id"] == new_id and j.json()["settings"]["recordingsAllowed"] is True
    finally:
        s.stop()
