"""Bedrud REST API of the devserver (Bedrud v0.12.0), checked against bedrud-api.md.

The lifecycle, private rooms, verification, refresh races and rate limits have their
own file, test_rest_v012.py; the swagger conformance is test_conformance.py."""
from __future__ import annotations

import base64
import re
import ssl
import socket
import subprocess
import time
import hashlib
import uuid

import pytest

from .helpers import DEVSERVER, DevServer, jwt_claims

PW = "correct horse battery"


@pytest.fixture(scope="module")
def srv():
    s = DevServer("--seed-user", "owner@example.com:owner-password-1:Owner")
    yield s
    s.stop()


def fresh_email() -> str:
    return f"u{uuid.uuid4().hex[:10]}@example.com"


def new_user(srv: DevServer, name: str = "Tester") -> tuple[str, dict]:
    body = srv.register(fresh_email(), name)
    return body["tokens"]["accessToken"], body


# MARK: - routes the release binary has and has not

def test_health_and_ready(srv):
    for path, status in (("/api/health", "healthy"), ("/api/ready", "ready")):
        r = srv.request("GET", path)
        assert r.status == 200 and set(r.json()) == {"status", "time"} and r.json()["status"] == status
        assert abs(r.json()["time"] - time.time()) < 60
    redirect = srv.request("GET", "/health")
    assert (redirect.status, redirect.headers["Location"]) == (302, "/api/health")
    assert srv.request("GET", "/api/nope").text == "Cannot GET /api/nope"


def test_other_get_paths_serve_the_spa(srv):
    r = srv.request("GET", "/m/some-room")
    assert r.status == 200 and r.headers["Content-Type"].startswith("text/html")
    assert srv.request("POST", "/api/nope", {}).text == "Cannot POST /api/nope"


def test_auth_settings_is_public(srv):
    r = srv.request("GET", "/api/auth/settings")
    assert r.status == 200
    j = r.json()
    assert set(j) == {"serverName", "registrationEnabled", "tokenRegistrationOnly", "guestLoginEnabled",
                      "passkeysEnabled", "oauthProviders", "requireEmailVerification", "chatMaxMessageCount",
                      "chatMessageTTLHours", "chatUploadMaxBytes", "chatUploadMaxDimension", "recordingsEnabled",
                      "rnnoiseEnabled", "krispEnabled", "webxdc"}
    assert (j["guestLoginEnabled"], j["requireEmailVerification"], j["recordingsEnabled"]) == (True, False, False)


# MARK: - auth

def test_register_returns_login_shape_and_bedrud_claims(srv):
    email = fresh_email()
    body = srv.register(email, "Ada Lovelace")
    assert set(body) == {"user", "tokens"}
    assert set(body["tokens"]) == {"accessToken", "refreshToken"}
    user = body["user"]
    assert set(user) == {"id", "email", "name", "provider", "avatarUrl", "accesses", "isActive", "emailVerifiedAt",
                         "passwordChangedAt", "createdAt", "updatedAt"}
    assert user["emailVerifiedAt"] is None and user["passwordChangedAt"] is None
    assert user["provider"] == "local" and user["accesses"] == ["user"] and user["email"] == email
    claims = jwt_claims(body["tokens"]["accessToken"])
    assert claims["userId"] == user["id"] == claims["sub"]
    assert claims["iss"] == "bedrud" and claims["aud"] == ["bedrud"] and claims["provider"] == "local"
    assert claims["exp"] - claims["iat"] == 24 * 3600
    refresh = jwt_claims(body["tokens"]["refreshToken"])
    assert refresh["exp"] - refresh["iat"] == 7 * 24 * 3600 and "jti" in refresh


@pytest.mark.parametrize("payload,status,message", [
    ({"email": "not-an-email", "password": PW, "name": "Ab"}, 400, "Invalid email format"),
    ({"email": "a1@example.com", "password": PW, "name": "A"}, 400, "Name must be at least 2 characters"),
    ({"email": "a2@example.com", "password": "short", "name": "Ab"}, 400, "Password must be at least 12 characters"),
    ({"email": "a3@example.com", "password": "x" * 129, "name": "Ab"}, 400, "Password must be at most 128 characters"),
    ({"email": "owner@example.com", "password": PW, "name": "Ab"}, 400, "Unable to register with the provided details"),
    ({"email": "OWNER@example.com", "password": PW, "name": "Ab"}, 400, "Unable to register with the provided details"),
    ({"email": "a4@example.com", "password": PW, "name": "<A>"}, 400, "Name must be at least 2 characters"),
    ({"email": 5, "password": PW, "name": "Ab"}, 400, "Invalid input"),
])
def test_register_validation(srv, payload, status, message):
    r = srv.request("POST", "/api/auth/register", payload)
    assert (r.status, r.json()) == (status, {"error": message})


def test_register_needs_a_json_content_type(srv):
    r = srv.request("POST", "/api/auth/register", raw=b'{"email":"x@y.z"}', content_type="text/plain")
    assert (r.status, r.json()) == (400, {"error": "Invalid input"})


def test_login_and_its_errors(srv):
    ok = srv.request("POST", "/api/auth/login", {"EMAIL": "owner@example.com", "Password": "owner-password-1"})
    assert ok.status == 200 and ok.json()["user"]["name"] == "Owner"  # Go matches keys case-insensitively
    assert "access_token=" in ok.headers.get("Set-Cookie", "")
    bad = srv.request("POST", "/api/auth/login", {"email": "owner@example.com", "password": "wrong-password-1"})
    assert (bad.status, bad.json()) == (401, {"error": "Invalid credentials"})
    unknown = srv.request("POST", "/api/auth/login", {"email": "nobody@example.com", "password": "whatever-pass"})
    assert (unknown.status, unknown.json()) == (401, {"error": "Invalid credentials"})
    missing = srv.request("POST", "/api/auth/login", {"email": "owner@example.com"})
    assert (missing.status, missing.json()) == (400, {"error": "Email and password are required"})
    garbage = srv.request("POST", "/api/auth/login", raw=b"{not json", content_type="application/json")
    assert (garbage.status, garbage.json()) == (400, {"error": "Invalid input"})


def test_guest_login_creates_a_guest_user(srv):
    r = srv.request("POST", "/api/auth/guest-login", {"name": "Visitor"})
    assert r.status == 200
    user = r.json()["user"]
    assert user["provider"] == "guest" and user["accesses"] == ["guest"]
    assert re.fullmatch(r"guest_[0-9a-f-]{36}@bedrud\.guest", user["email"])
    assert jwt_claims(r.json()["tokens"]["accessToken"])["provider"] == "guest"
    empty = srv.request("POST", "/api/auth/guest-login", {"name": ""})
    assert (empty.status, empty.json()) == (400, {"error": "Name is required"})
    short = srv.request("POST", "/api/auth/guest-login", {"name": "A\u0007"})
    assert (short.status, short.json()) == (400, {"error": "Name must be between 2 and 50 characters"})


def test_refresh_is_snake_case_and_rotates(srv):
    body = srv.register(fresh_email())
    old = body["tokens"]["refreshToken"]
    time.sleep(1.05)  # a new iat, so the new access token differs
    r = srv.request("POST", "/api/auth/refresh", {"refresh_token": old})
    assert r.status == 200 and set(r.json()) == {"access_token", "refresh_token"}
    new = r.json()
    assert new["access_token"] != body["tokens"]["accessToken"]
    assert srv.request("GET", "/api/auth/me", token=new["access_token"]).status == 200
    replay = srv.request("POST", "/api/auth/refresh", {"refresh_token": old})
    assert (replay.status, replay.json()) == (401, {"error": "Invalid or expired refresh token"})
    camel = srv.request("POST", "/api/auth/refresh", {"refreshToken": new["refresh_token"]})
    assert (camel.status, camel.json()) == (400, {"error": "No refresh token provided"})
    cookie = srv.request("POST", "/api/auth/refresh", raw=b"", headers={"Cookie": f"refresh_token={new['refresh_token']}"})
    assert cookie.status == 200


def test_one_refresh_token_per_user(srv):
    email = fresh_email()
    first = srv.register(email)["tokens"]["refreshToken"]
    srv.login(email)  # a second device logs in
    r = srv.request("POST", "/api/auth/refresh", {"refresh_token": first})
    assert r.status == 401


def test_logout_revokes_access_and_refresh(srv):
    body = srv.register(fresh_email())
    access, refresh = body["tokens"]["accessToken"], body["tokens"]["refreshToken"]
    cookie_only = srv.request("POST", "/api/auth/logout", headers={"Cookie": f"access_token={access}"})
    assert (cookie_only.status, cookie_only.json()) == (
        401, {"error": "Authorization header required for state-changing requests"})
    out = srv.request("POST", "/api/auth/logout", {"refresh_token": refresh}, token=access)
    assert (out.status, out.json()) == (200, {"message": "Successfully logged out"})
    me = srv.request("GET", "/api/auth/me", token=access)
    assert (me.status, me.json()) == (401, {"error": "Invalid token"})
    assert srv.request("POST", "/api/auth/refresh", {"refresh_token": refresh}).status == 401


def test_me_auth_variants(srv):
    token, body = new_user(srv, "Grace")
    assert srv.request("GET", "/api/auth/me").json() == {"error": "Missing authorization"}
    assert srv.request("GET", "/api/auth/me", headers={"Authorization": f"bearer {token}"}).json()["name"] == "Grace"
    assert srv.request("GET", "/api/auth/me", headers={"Authorization": token}).status == 200
    assert srv.request("GET", "/api/auth/me", headers={"Cookie": f"access_token={token}"}).status == 200
    assert srv.request("GET", "/api/auth/me", token=token + "x").json() == {"error": "Invalid token"}
    put = srv.request("PUT", "/api/auth/me", {"name": "Grace H"}, token=token)
    assert put.status == 200 and put.json()["name"] == "Grace H"


def test_access_token_lifetime_is_configurable(srv):
    assert srv.request("POST", "/_dev/config", {"accessTtl": "1s"}).status == 200
    try:
        body = srv.register(fresh_email())
    finally:
        srv.request("POST", "/_dev/config", {"accessTtl": "24h"})
    access = body["tokens"]["accessToken"]
    claims = jwt_claims(access)
    assert claims["exp"] - claims["iat"] == 1
    deadline = time.monotonic() + 10
    while srv.request("GET", "/api/auth/me", token=access).status == 200:
        assert time.monotonic() < deadline, "access token never expired"
        time.sleep(0.2)
    assert srv.request("GET", "/api/auth/me", token=access).json() == {"error": "Invalid token"}
    refreshed = srv.request("POST", "/api/auth/refresh", {"refresh_token": body["tokens"]["refreshToken"]})
    assert refreshed.status == 200


# MARK: - rooms

def test_create_room_normalises_and_answers_the_create_shape(srv):
    token, _ = new_user(srv)
    name = f"My-Room-{uuid.uuid4().hex[:6]}"
    r = srv.request("POST", "/api/room/create", {"name": f"  {name} ", "isPublic": True, "maxParticipants": 5,
                                                 "settings": {"allowChat": False, "e2ee": True}}, token=token)
    assert r.status == 200, r
    room = r.json()
    assert set(room) == {"id", "name", "createdBy", "isActive", "isPublic", "maxParticipants", "settings",
                         "livekitHost", "mode"}
    assert room["name"] == name.lower() and room["mode"] == "standard" and room["isPublic"] is True
    assert room["maxParticipants"] == 5
    # Keys left out are false; recordingsAllowed is always on at create; isPersistent is superadmin-only.
    assert room["settings"] == {"allowChat": False, "allowVideo": False, "allowAudio": False, "requireApproval": False,
                                "e2ee": True, "isPersistent": False, "recordingsAllowed": True}
    assert room["livekitHost"] == srv.url + "/livekit"
    dup = srv.request("POST", "/api/room/create", {"name": name}, token=token)
    assert (dup.status, dup.json()) == (409, {"error": "a room with this name already exists"})


def test_create_room_generates_a_name(srv):
    token, _ = new_user(srv)
    r = srv.request("POST", "/api/room/create", {}, token=token)
    assert r.status == 200 and re.fullmatch(r"[a-z]{3}-[a-z]{4}-[a-z]{3}", r.json()["name"])


@pytest.mark.parametrize("name,message", [
    ("ab", "room name must be at least 3 characters"),
    ("a" * 64, "room name must be at most 63 characters"),
    ("bad--name", "room name must contain only lowercase letters, numbers, and hyphens"),
    ("-lead", "room name must contain only lowercase letters, numbers, and hyphens"),
    ("sp ace", "room name must contain only lowercase letters, numbers, and hyphens"),
])
def test_room_name_validation(srv, name, message):
    token, _ = new_user(srv)
    r = srv.request("POST", "/api/room/create", {"name": name}, token=token)
    assert (r.status, r.json()) == (400, {"error": message})


def test_list_is_callers_rooms_newest_first(srv):
    token, body = new_user(srv)
    other, _ = new_user(srv)
    names = [f"list-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for n in names:
        assert srv.request("POST", "/api/room/create", {"name": n}, token=token).status == 200
        time.sleep(0.01)
    srv.request("POST", "/api/room/create", {"name": f"other-{uuid.uuid4().hex[:8]}"}, token=other)
    rooms = srv.request("GET", "/api/room/list", token=token).json()
    assert [r["name"] for r in rooms] == names[::-1]
    assert all(r["createdBy"] == body["user"]["id"] and "adminId" in r and "expiresAt" in r for r in rooms)
    assert all("lastActivityAt" in r and "deletedAt" not in r for r in rooms)
    assert srv.request("GET", "/api/room/list", token=new_user(srv)[0]).json() == []


def test_join_mints_a_livekit_token(srv):
    token, body = new_user(srv, "Joiner")
    name = f"join-{uuid.uuid4().hex[:8]}"
    srv.request("POST", "/api/room/create", {"name": name}, token=token)
    r = srv.request("POST", "/api/room/join", {"roomName": f" {name.upper()} "}, token=token)
    assert r.status == 200, r
    j = r.json()
    assert set(j) == {"id", "name", "token", "createdBy", "adminId", "isActive", "isPublic", "maxParticipants",
                      "expiresAt", "settings", "livekitHost", "mode", "activeRecordingId"}
    assert j["livekitHost"] == srv.url + "/livekit" and j["activeRecordingId"] == ""
    c = jwt_claims(j["token"])
    assert c["sub"] == body["user"]["id"] and c["name"] == "Joiner" and c["iss"] == "devkey"
    assert c["metadata"] == '{"accesses":["user"]}'
    assert c["video"] == {"roomJoin": True, "room": name, "canUpdateOwnMetadata": True}
    assert c["exp"] - c["nbf"] == 2 * 3600
    missing = srv.request("POST", "/api/room/join", {"roomName": "no-such-room"}, token=token)
    assert (missing.status, missing.json()) == (404, {"error": "Room not found"})


def test_guest_join_rules(srv):
    token, body = new_user(srv)
    private = f"priv-{uuid.uuid4().hex[:8]}"
    public = f"pub-{uuid.uuid4().hex[:8]}"
    srv.request("POST", "/api/room/create", {"name": private}, token=token)
    srv.request("POST", "/api/room/create", {"name": public, "isPublic": True}, token=token)
    r = srv.request("POST", "/api/room/guest-join", {"roomName": private, "guestName": "G"})
    assert (r.status, r.json()) == (403, {"error": "This room is private"})
    r = srv.request("POST", "/api/room/guest-join", {"roomName": public, "guestName": "  "})
    assert (r.status, r.json()) == (400, {"error": "Guest name is required"})
    r = srv.request("POST", "/api/room/guest-join", {"roomName": "nope-nope", "guestName": "\u0000"})
    assert (r.status, r.json()) == (400, {"error": "Guest name is required"})  # sanitised to nothing
    r = srv.request("POST", "/api/room/guest-join", {"roomName": "nope-nope", "guestName": "x" * 51})
    assert (r.status, r.json()) == (400, {"error": "Guest name too long (max 50 characters)"})
    r = srv.request("POST", "/api/room/guest-join", {"roomName": "nope-nope", "guestName": "Nobody"})
    assert (r.status, r.json()) == (404, {"error": "Room not found"})
    r = srv.request("POST", "/api/room/guest-join", {"roomName": public, "guestName": " Guest One "})
    j = r.json()
    assert r.status == 200 and set(j) == {"id", "name", "token", "adminId", "isPublic", "livekitHost",
                                          "activeRecordingId", "accessToken", "refreshToken", "tokens"}
    assert j["tokens"] == {"accessToken": j["accessToken"], "refreshToken": j["refreshToken"]}
    c = jwt_claims(j["token"])
    assert re.fullmatch(r"guest-[a-z0-9]{8}", c["sub"]) and c["name"] == "Guest One" and "metadata" not in c
    assert c["video"]["canUpdateOwnMetadata"] is True
    bedrud = jwt_claims(j["accessToken"])
    assert (bedrud["userId"], bedrud["provider"], bedrud["accesses"]) == (c["sub"], "guest", ["guest"])
    assert srv.request("GET", "/api/auth/me", token=j["accessToken"]).json()["email"] == c["sub"] + "@bedrud.guest"
    assert srv.request("POST", f"/_dev/rooms/{public}/deactivate").status == 200
    r = srv.request("POST", "/api/room/guest-join", {"roomName": public, "guestName": "G"})
    assert (r.status, r.json()) == (410, {"error": "room is no longer active"})


def test_settings_need_the_wrapper_and_the_owner(srv):
    token, _ = new_user(srv)
    other, _ = new_user(srv)
    name = f"set-{uuid.uuid4().hex[:8]}"
    room_id = srv.request("POST", "/api/room/create", {"name": name, "settings": {"allowChat": True}},
                          token=token).json()["id"]
    flat = srv.request("PUT", f"/api/room/{room_id}/settings", {"allowChat": False}, token=token)
    assert flat.status == 200 and flat.json()["settings"]["allowChat"] is True  # the iOS app's silent no-op
    wrapped = srv.request("PUT", f"/api/room/{room_id}/settings",
                          {"settings": {"allowChat": False, "allowAudio": True}, "maxParticipants": 0}, token=token)
    assert wrapped.status == 200
    assert wrapped.json()["settings"] == {"allowChat": False, "allowVideo": False, "allowAudio": True,
                                          "requireApproval": False, "e2ee": False, "isPersistent": False,
                                          "recordingsAllowed": False}
    assert set(wrapped.json()) == {"id", "name", "createdBy", "isActive", "maxParticipants", "createdAt", "updatedAt",
                                   "expiresAt", "adminId", "isPublic", "settings", "mode", "lastActivityAt"}
    bad = srv.request("PUT", f"/api/room/{room_id}/settings", {"maxParticipants": 1001}, token=token)
    assert (bad.status, bad.json()) == (400, {"error": "maxParticipants must be between 0 and 1000"})
    assert wrapped.json()["maxParticipants"] == 0
    assert srv.request("PUT", f"/api/room/{room_id}/settings", {}, token=other).json() == {"error": "Insufficient permissions"}
    nf = srv.request("PUT", f"/api/room/{uuid.uuid4()}/settings", {}, token=token)
    assert (nf.status, nf.json()) == (404, {"error": "Room not found"})


def test_capacity_counts_active_rows(srv):
    token, _ = new_user(srv)
    name = f"cap-{uuid.uuid4().hex[:8]}"
    room_id = srv.request("POST", "/api/room/create", {"name": name, "isPublic": True}, token=token).json()["id"]
    srv.request("PUT", f"/api/room/{room_id}/settings", {"maxParticipants": 1}, token=token)
    r = srv.request("POST", "/api/room/join", {"roomName": name}, token=new_user(srv)[0])
    assert (r.status, r.json()) == (403, {"error": "room is full"})  # the creator's row is active


def test_delete_room(srv):
    token, _ = new_user(srv)
    other, _ = new_user(srv)
    name = f"del-{uuid.uuid4().hex[:8]}"
    room_id = srv.request("POST", "/api/room/create", {"name": name}, token=token).json()["id"]
    forbidden = srv.request("DELETE", f"/api/room/{room_id}", token=other)
    assert (forbidden.status, forbidden.json()) == (403, {"error": "Only the room creator can delete this room"})
    r = srv.request("DELETE", f"/api/room/{room_id}", token=token)
    assert (r.status, r.json()) == (202, {"message": "Room deletion queued"})
    # Archived, not gone: the creator is offered a new meeting, others get 410, the list hides it.
    again = srv.request("POST", "/api/room/join", {"roomName": name}, token=token)
    assert (again.status, again.json()["status"]) == (200, "archived_owned")
    assert srv.request("POST", "/api/room/join", {"roomName": name}, token=other).status == 410
    assert name not in [r["name"] for r in srv.request("GET", "/api/room/list", token=token).json()]
    nf = srv.request("DELETE", f"/api/room/{uuid.uuid4()}", token=token)
    assert (nf.status, nf.json()) == (404, {"error": "Room not found"})


def test_moderation_errors(srv):
    token, _ = new_user(srv)
    other, _ = new_user(srv)
    name = f"mod-{uuid.uuid4().hex[:8]}"
    room_id = srv.request("POST", "/api/room/create", {"name": name}, token=token).json()["id"]
    unknown = srv.request("POST", f"/api/room/{uuid.uuid4()}/kick/someone", token=token)
    assert (unknown.status, unknown.text) == (404, "Not Found")
    assert srv.request("POST", f"/api/room/{room_id}/kick/x", token=other).json() == {"error": "Insufficient permissions"}
    assert srv.request("POST", f"/api/room/{room_id}/spotlight/x", token=other).json() == {"error": "not authorized for this room"}
    absent = srv.request("POST", f"/api/room/{room_id}/kick/nobody", token=token)
    assert absent.status == 500 and "not found" in absent.json()["error"]
    assert srv.request("POST", f"/api/room/{room_id}/mute/nobody", token=token).json() == {"error": "Participant not found"}
    assert srv.request("POST", f"/api/room/{room_id}/stage/x/bring", token=token).status == 501
    ask = srv.request("POST", f"/api/room/{room_id}/ask/x/dance", token=token)
    assert (ask.status, ask.json()) == (400, {"error": "Unknown action"})
    assert srv.request("POST", f"/api/room/{room_id}/ask/x/unmute", token=token).json() == {"status": "success"}


def _multipart(field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = "devserverboundary1234"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{filename}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def _png(w: int, h: int) -> bytes:
    import struct, zlib
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\x00\x00\x00" * w for _ in range(h))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_chat_upload(srv):
    token, _ = new_user(srv)
    room_id = srv.request("POST", "/api/room/create", {"name": f"up-{uuid.uuid4().hex[:8]}", "isPublic": True,
                                                       "settings": {"allowChat": True}}, token=token).json()["id"]
    body, ctype = _multipart("file", "a.png", _png(3, 2))
    outsider = srv.request("POST", f"/api/room/{room_id}/chat/upload", raw=body, content_type=ctype,
                           token=new_user(srv)[0])
    assert (outsider.status, outsider.json()) == (403, {"error": "Not a participant in this room"})
    r = srv.request("POST", f"/api/room/{room_id}/chat/upload", raw=body, content_type=ctype, token=token)
    assert r.status == 200, r
    j = r.json()
    assert j["mime"] == "image/png" and (j["w"], j["h"]) == (3, 2) and j["url"].startswith("data:image/png;base64,")
    body, ctype = _multipart("file", "a.txt", b"hello")
    r = srv.request("POST", f"/api/room/{room_id}/chat/upload", raw=body, content_type=ctype, token=token)
    assert (r.status, r.json()) == (400, {"error": "unsupported image type: text/plain; charset=utf-8"})
    body, ctype = _multipart("other", "a.png", _png(1, 1))
    r = srv.request("POST", f"/api/room/{room_id}/chat/upload", raw=body, content_type=ctype, token=token)
    assert (r.status, r.json()) == (400, {"error": "Missing file field"})
    r = srv.request("POST", f"/api/room/{uuid.uuid4()}/chat/upload", raw=body, content_type=ctype, token=token)
    assert (r.status, r.json()) == (404, {"error": "Room not found"})


def test_body_limit_is_fiber_plain_text(srv):
    r = srv.request("POST", "/api/auth/login", raw=b"x" * (10 * 1024 * 1024 + 10), content_type="application/json")
    assert (r.status, r.text) == (413, "Request Entity Too Large")


# MARK: - process: CLI, registration switch, TLS

def test_registration_off_and_seed_room():
    s = DevServer("--registration", "off", "--seed-user", "a@example.com:abcdefghijklmn:Alpha",
                  "--seed-room", "standup", "--seed-room", "secret:private")
    try:
        r = s.request("POST", "/api/auth/register", {"email": "x@example.com", "password": PW, "name": "Xy"})
        assert (r.status, r.json()) == (403, {"error": "Registration is currently disabled"})
        token = s.login("a@example.com", "abcdefghijklmn")["tokens"]["accessToken"]
        rooms = {r["name"]: r for r in s.request("GET", "/api/room/list", token=token).json()}
        assert rooms["standup"]["isPublic"] is True and rooms["secret"]["isPublic"] is False
        assert s.lines[1] == f"livekit_host={s.url}/livekit" and s.lines[-1] == "ready"
    finally:
        assert s.stop() == 0


def test_bad_flags_exit_2_with_a_message():
    p = subprocess.run([DEVSERVER, "--access-ttl", "soon"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "bad duration 'soon'" in p.stderr
    p = subprocess.run([DEVSERVER, "--seed-user", "nopassword"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "EMAIL:PASSWORD" in p.stderr
    h = subprocess.run([DEVSERVER, "--help"], capture_output=True, text=True, timeout=60)
    assert h.returncode == 0 and "--scenario" in h.stdout and "/_dev/state" in h.stdout


def _wss_first_message(url: str, ctx: ssl.SSLContext) -> str:
    import asyncio
    import aiohttp
    from livekit.protocol import rtc as lkr

    async def go() -> str:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(url, ssl=ctx) as ws:
                msg = await ws.receive(timeout=10)
                return lkr.SignalResponse.FromString(msg.data).WhichOneof("message")
    return asyncio.run(asyncio.wait_for(go(), 30))


def test_tls_ca_file_and_pin():
    s = DevServer("--tls", "--seed-user", "t@example.com:tls-password-12:Tee", "--seed-room", "tlsroom")
    try:
        assert s.url.startswith("https://127.0.0.1:") and {"ca_file", "pin_sha256"} <= set(s.info)
        assert s.lines[1].startswith("ca_file=") and s.lines[2].startswith("pin_sha256=")
        assert s.request("GET", "/api/auth/settings").status == 200  # trusts ca_file only
        host, port = s.url[len("https://"):].split(":")
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                der = tls.getpeercert(binary_form=True)
        assert hashlib.sha256(der).hexdigest() == s.info["pin_sha256"]
        system = ssl.create_default_context()
        with pytest.raises(ssl.SSLCertVerificationError):
            with socket.create_connection((host, int(port)), timeout=10) as raw:
                system.wrap_socket(raw, server_hostname="127.0.0.1")
        token = s.login("t@example.com", "tls-password-12")["tokens"]["accessToken"]
        join = s.request("POST", "/api/room/join", {"roomName": "tlsroom"}, token=token).json()
        assert join["livekitHost"] == s.url + "/livekit"
        wss = join["livekitHost"].replace("https://", "wss://") + "/rtc?access_token=" + join["token"]
        assert _wss_first_message(wss, s.ssl_context) == "join"
        ca_dir = s.info["ca_file"].rsplit("/", 1)[0]
    finally:
        s.stop()
    import os
    assert not os.path.exists(ca_dir), "the temporary TLS directory is removed on exit"
