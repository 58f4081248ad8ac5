"""Bedrud behaviours after v0.12.0 behind their switches (upstream.py, docs/DEVSERVER.md
"After v0.12.0"): each answer checked exactly, and each switch off gives v0.12.0."""
from __future__ import annotations

import time
import uuid

import pytest

from .helpers import DevServer

PW = "correct horse battery"


@pytest.fixture(scope="module")
def master():
    s = DevServer("--room-delete-dedupe", "7ac5f0b", "--room-delete-delay", "1.5", "--admin-set-password", "ff4c0a8")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def v012():
    s = DevServer()
    yield s
    s.stop()


def account(srv: DevServer) -> tuple[str, dict]:
    email = f"u{uuid.uuid4().hex[:10]}@example.com"
    return email, srv.register(email)


def room_of(srv: DevServer, token: str) -> str:
    r = srv.request("POST", "/api/room/create", {"name": f"r-{uuid.uuid4().hex[:8]}", "isPublic": True}, token=token)
    assert r.status == 200, r
    return r.json()["id"]


def test_a_second_delete_while_the_first_is_queued_is_409(master):
    _, body = account(master)
    token = body["tokens"]["accessToken"]
    room = room_of(master, token)
    first = master.request("DELETE", f"/api/room/{room}", token=token)
    assert (first.status, first.json()) == (202, {"message": "Room deletion queued"})
    second = master.request("DELETE", f"/api/room/{room}", token=token)
    assert (second.status, second.json()) == (409, {"error": "Deletion already in progress"})
    assert second.headers["Content-Type"].startswith("application/json")
    # Once the job has run (archived), the queue holds nothing: a new delete is queued again.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        rooms = master.request("GET", "/api/room/list", token=token).json()
        if not any(r["id"] == room for r in rooms):
            break
        time.sleep(0.2)
    time.sleep(0.2)
    third = master.request("DELETE", f"/api/room/{room}", token=token)
    assert (third.status, third.json()) == (202, {"message": "Room deletion queued"})


def test_without_the_switch_a_second_delete_is_202_as_in_v012(v012):
    _, body = account(v012)
    token = body["tokens"]["accessToken"]
    room = room_of(v012, token)
    for _ in range(2):
        r = v012.request("DELETE", f"/api/room/{room}", token=token)
        assert (r.status, r.json()) == (202, {"message": "Room deletion queued"})


def superadmin(srv: DevServer) -> str:
    email, _ = account(srv)
    r = srv.request("POST", f"/_dev/users/{email}/accesses", {"accesses": ["user", "superadmin"]})
    assert r.status == 200, r
    return srv.login(email)["tokens"]["accessToken"]


def test_an_admin_password_reset_ends_the_users_sessions(master):
    admin = superadmin(master)
    email, body = account(master)
    user_id, refresh = body["user"]["id"], body["tokens"]["refreshToken"]
    new = "a new password, long enough"
    r = master.request("PUT", f"/api/admin/users/{user_id}/password", {"password": new}, token=admin)
    assert (r.status, r.json()) == (200, {"message": "Password updated successfully"})
    r = master.request("POST", "/api/auth/refresh", {"refresh_token": refresh})
    assert (r.status, r.json()) == (401, {"error": "Invalid or expired refresh token"})
    r = master.request("POST", "/api/auth/login", {"email": email, "password": PW})
    assert (r.status, r.json()) == (401, {"error": "Invalid credentials"})
    assert master.login(email, new)["user"]["id"] == user_id


def test_the_admin_password_rules(master):
    admin = superadmin(master)
    _, body = account(master)
    user_id, token = body["user"]["id"], body["tokens"]["accessToken"]
    path = f"/api/admin/users/{user_id}/password"
    cases = [
        (token, {"password": "x" * 20}, 403, "Insufficient access rights"),  # not a superadmin
        (admin, {"password": "short"}, 400, "Password must be at least 12 characters"),
        (admin, {"password": "é" * 65}, 400, "Password must be at most 128 characters"),  # 130 bytes
        (admin, {"password": 12345678901234}, 400, "Invalid input"),
    ]
    for who, body_, status, message in cases:
        r = master.request("PUT", path, body_, token=who)
        assert (r.status, r.json()) == (status, {"error": message}), body_
    r = master.request("PUT", f"/api/admin/users/{uuid.uuid4()}/password", {"password": "x" * 20}, token=admin)
    assert (r.status, r.json()) == (404, {"error": "User not found"})
    r = master.request("PUT", path, {"password": "x" * 20})
    assert (r.status, r.json()) == (401, {"error": "Missing authorization"})


def test_without_the_switch_there_is_no_admin_password_route(v012):
    r = v012.request("PUT", f"/api/admin/users/{uuid.uuid4()}/password", {"password": "x" * 20})
    assert r.status == 404
