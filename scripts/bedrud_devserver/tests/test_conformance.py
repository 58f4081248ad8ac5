"""The devserver against Bedrud's own API description (swagger_check.py): for every route
the bot uses, each documented answer — success and each failure the devserver can be
driven into — is produced and its JSON checked against the schema, strictly (a renamed,
missing or extra field fails). Statuses Bedrud documents that the devserver cannot
produce (500s, a deletion already in flight) are listed with the reason."""
from __future__ import annotations

import os
import threading
import uuid
from typing import Callable

import pytest

from .helpers import DevServer, Reply
from .swagger_check import ANSWER_DIFFERENCES, Spec

PW = "correct horse battery"

# (method, swagger path) of every route the bot calls (Sources/BedrudCore/API/RoomAPI.swift,
# Auth/AuthManager.swift), plus /api/health for `instance add`.
BOT_ROUTES = [
    ("get", "/api/health"), ("post", "/auth/login"), ("post", "/auth/register"), ("post", "/auth/guest-login"),
    ("post", "/auth/refresh"), ("post", "/auth/logout"), ("get", "/auth/me"), ("get", "/auth/settings"),
    ("post", "/room/create"), ("post", "/room/join"), ("post", "/room/refresh-token"), ("post", "/room/guest-join"),
    ("get", "/room/list"), ("put", "/room/{roomId}/settings"), ("delete", "/room/{roomId}"),
    ("post", "/room/{roomId}/chat/upload"),
    # `bedrud-bot webhooks` and `serve` (superadmin routes)
    ("get", "/admin/webhooks"), ("post", "/admin/webhooks"), ("put", "/admin/webhooks/{id}"),
    ("delete", "/admin/webhooks/{id}"), ("post", "/admin/webhooks/{id}/rotate-secret"),
    ("post", "/admin/webhooks/{id}/test"), ("get", "/admin/rooms"),
]
ROOT, ROOT_PW = "root@example.com", "root-password-12"

NOT_PRODUCIBLE = {
    ("post", "/room/create", "201"): "swagger says 201; the handler answers 200 (c.JSON, room.go:410)",
    ("delete", "/room/{roomId}", "409"): "deletion in flight: the devserver's delete finishes inside the request",
    ("post", "/room/{roomId}/chat/upload", "413"): "with the default limits a body over 10 MiB is refused by Fiber's "
                                                   "BodyLimit first, as plain text (server.go:219-229); the handler's "
                                                   "JSON 413 needs an admin upload limit below it",
}
# Every 500 ("failed to ...") needs a broken database or LiveKit: not modelled.


class Ctx:
    def __init__(self, srv: DevServer) -> None:
        self.srv = srv

    def user(self, name: str = "Conformance") -> tuple[str, str, str, str]:
        """(email, access token, refresh token, user id) of a new account."""
        address = f"c{uuid.uuid4().hex[:10]}@example.com"
        body = self.srv.register(address, name)
        return address, body["tokens"]["accessToken"], body["tokens"]["refreshToken"], body["user"]["id"]

    def room(self, token: str, **fields) -> dict:  # type: ignore[no-untyped-def]
        r = self.srv.request("POST", "/api/room/create", {"name": f"c-{uuid.uuid4().hex[:10]}", **fields}, token=token)
        assert r.status == 200, r
        return r.json()

    def config(self, **values) -> None:  # type: ignore[no-untyped-def]
        assert self.srv.request("POST", "/_dev/config", values).status == 200

    def over_limit(self, kind: str, call: Callable[[], Reply]) -> Reply:
        """The second call with that limit at 1 a minute."""
        self.config(**{kind: 1})
        try:
            call()
            return call()
        finally:
            self.config(**{kind: 0})

    def unverified(self, call: Callable[[str], Reply]) -> Reply:
        _, token, _, _ = self.user()
        self.config(requireEmailVerification=True)
        try:
            return call(token)
        finally:
            self.config(requireEmailVerification=False)

    def root(self) -> str:
        """A superadmin's access token (--superadmin)."""
        return self.srv.login(ROOT, ROOT_PW)["tokens"]["accessToken"]

    def webhook(self) -> dict:
        r = self.srv.request("POST", "/api/admin/webhooks", {"name": "c", "url": "http://127.0.0.1:9/",
                                                             "events": ["ping"]}, token=self.root())
        assert r.status == 201, r
        return r.json()

    def guest(self) -> str:
        return self.srv.request("POST", "/api/auth/guest-login", {"name": "Guest"}).json()["tokens"]["accessToken"]

    def inactive_room(self) -> tuple[str, dict]:
        _, token, _, _ = self.user()
        room = self.room(token, isPublic=True)
        assert self.srv.request("POST", f"/_dev/rooms/{room['name']}/deactivate").status == 200
        return token, room


CASES: list[tuple[str, str, int, str, Callable[[Ctx], Reply]]] = []


def case(method: str, path: str, status: int, label: str = ""):  # type: ignore[no-untyped-def]
    def register(driver: Callable[[Ctx], Reply]) -> Callable[[Ctx], Reply]:
        CASES.append((method, path, status, label or driver.__name__, driver))
        return driver
    return register


def post(c: Ctx, path: str, body=None, token=None, **kw) -> Reply:  # type: ignore[no-untyped-def]
    return c.srv.request("POST", path, body, token=token, **kw)


# MARK: - health and auth

case("get", "/api/health", 200, "health")(lambda c: c.srv.request("GET", "/api/health"))

case("post", "/auth/login", 200, "login")(lambda c: post(c, "/api/auth/login", {"email": c.user()[0], "password": PW}))
case("post", "/auth/login", 400, "login without password")(
    lambda c: post(c, "/api/auth/login", {"email": "x@example.com"}))
case("post", "/auth/login", 401, "login wrong password")(
    lambda c: post(c, "/api/auth/login", {"email": c.user()[0], "password": "not the password"}))


@case("post", "/auth/login", 403, "login unverified")
def _login_unverified(c: Ctx) -> Reply:
    address = c.user()[0]
    c.config(requireEmailVerification=True)
    try:
        return post(c, "/api/auth/login", {"email": address, "password": PW})
    finally:
        c.config(requireEmailVerification=False)


case("post", "/auth/login", 429, "login over the limit")(
    lambda c: c.over_limit("authRateLimit", lambda: post(c, "/api/auth/login", {"email": "x@example.com",
                                                                               "password": PW})))
case("post", "/auth/register", 200, "register")(
    lambda c: post(c, "/api/auth/register", {"email": f"r{uuid.uuid4().hex[:8]}@example.com", "password": PW,
                                             "name": "Reg"}))


@case("post", "/auth/register", 200, "register needing verification")
def _register_verification(c: Ctx) -> Reply:
    c.config(requireEmailVerification=True)
    try:
        return post(c, "/api/auth/register", {"email": f"r{uuid.uuid4().hex[:8]}@example.com", "password": PW,
                                              "name": "Reg"})
    finally:
        c.config(requireEmailVerification=False)


case("post", "/auth/register", 400, "register bad email")(
    lambda c: post(c, "/api/auth/register", {"email": "nope", "password": PW, "name": "Reg"}))


@case("post", "/auth/register", 403, "register while registration is off")
def _register_off(c: Ctx) -> Reply:
    c.config(registration=False)
    try:
        return post(c, "/api/auth/register", {"email": f"r{uuid.uuid4().hex[:8]}@example.com", "password": PW,
                                              "name": "Reg"})
    finally:
        c.config(registration=True)


case("post", "/auth/register", 429, "register over the limit")(
    lambda c: c.over_limit("authRateLimit", lambda: post(c, "/api/auth/register", {"email": "bad"})))
case("post", "/auth/guest-login", 200, "guest login")(lambda c: post(c, "/api/auth/guest-login", {"name": "Guest"}))
case("post", "/auth/guest-login", 400, "guest login without a name")(
    lambda c: post(c, "/api/auth/guest-login", {"name": ""}))


@case("post", "/auth/guest-login", 403, "guest login switched off")
def _guest_off(c: Ctx) -> Reply:
    c.config(guestLogin=False)
    try:
        return post(c, "/api/auth/guest-login", {"name": "Guest"})
    finally:
        c.config(guestLogin=True)


case("post", "/auth/guest-login", 429, "guest login over the limit")(
    lambda c: c.over_limit("authRateLimit", lambda: post(c, "/api/auth/guest-login", {"name": "Guest"})))
case("post", "/auth/refresh", 200, "refresh")(lambda c: post(c, "/api/auth/refresh", {"refresh_token": c.user()[2]}))
case("post", "/auth/refresh", 400, "refresh without a token")(lambda c: post(c, "/api/auth/refresh", {}))
case("post", "/auth/refresh", 401, "refresh with garbage")(
    lambda c: post(c, "/api/auth/refresh", {"refresh_token": "not.a.token"}))


@case("post", "/auth/refresh", 403, "refresh of a deactivated account")
def _refresh_deactivated(c: Ctx) -> Reply:
    address, _, refresh, _ = c.user()
    assert c.srv.request("POST", f"/_dev/users/{address}/deactivate").status == 200
    return post(c, "/api/auth/refresh", {"refresh_token": refresh})


@case("post", "/auth/refresh", 409, "two refreshes of one token at once")
def _refresh_race(c: Ctx) -> Reply:
    refresh = c.user()[2]
    c.config(refreshLatency=0.5)
    replies: list[Reply] = []
    gate = threading.Barrier(2)

    def go() -> None:
        gate.wait()
        replies.append(post(c, "/api/auth/refresh", {"refresh_token": refresh}))
    try:
        threads = [threading.Thread(target=go) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        c.config(refreshLatency=0.05)
    assert sorted(r.status for r in replies) == [200, 409], replies
    return next(r for r in replies if r.status == 409)


case("post", "/auth/refresh", 429, "refresh over the limit")(
    lambda c: c.over_limit("authRateLimit", lambda: post(c, "/api/auth/refresh", {})))


@case("post", "/auth/logout", 200, "logout")
def _logout(c: Ctx) -> Reply:
    _, token, refresh, _ = c.user()
    return post(c, "/api/auth/logout", {"refresh_token": refresh}, token=token)


case("post", "/auth/logout", 401, "logout without a token")(lambda c: post(c, "/api/auth/logout", {}))
case("get", "/auth/me", 200, "me")(lambda c: c.srv.request("GET", "/api/auth/me", token=c.user()[1]))
case("get", "/auth/me", 401, "me with a bad token")(lambda c: c.srv.request("GET", "/api/auth/me", token="x.y.z"))
case("get", "/auth/me", 403, "me unverified")(
    lambda c: c.unverified(lambda t: c.srv.request("GET", "/api/auth/me", token=t)))
case("get", "/auth/settings", 200, "auth settings")(lambda c: c.srv.request("GET", "/api/auth/settings"))

# MARK: - rooms

case("post", "/room/create", 200, "create")(
    lambda c: post(c, "/api/room/create", {"name": f"c-{uuid.uuid4().hex[:8]}", "isPublic": True,
                                           "settings": {"allowChat": True}}, token=c.user()[1]))
case("post", "/room/create", 400, "create with a bad name")(
    lambda c: post(c, "/api/room/create", {"name": "no"}, token=c.user()[1]))
case("post", "/room/create", 401, "create without a token")(lambda c: post(c, "/api/room/create", {}))
case("post", "/room/create", 403, "create unverified")(
    lambda c: c.unverified(lambda t: post(c, "/api/room/create", {}, token=t)))


@case("post", "/room/create", 409, "create a name an active room holds")
def _create_taken(c: Ctx) -> Reply:
    token = c.user()[1]
    return post(c, "/api/room/create", {"name": c.room(token)["name"]}, token=token)


@case("post", "/room/create", 429, "create over the limit")
def _create_limit(c: Ctx) -> Reply:
    token = c.user()[1]
    return c.over_limit("apiRateLimit", lambda: post(c, "/api/room/create", {}, token=token))


@case("post", "/room/join", 200, "join")
def _join(c: Ctx) -> Reply:
    token = c.user()[1]
    return post(c, "/api/room/join", {"roomName": c.room(token)["name"]}, token=token)


@case("post", "/room/join", 200, "join an inactive room as its creator")
def _join_archived(c: Ctx) -> Reply:
    token, room = c.inactive_room()
    r = post(c, "/api/room/join", {"roomName": room["name"]}, token=token)
    assert r.json().get("status") == "archived_owned", r
    return r


case("post", "/room/join", 400, "join with a bad body")(
    lambda c: post(c, "/api/room/join", raw=b"[", content_type="application/json", token=c.user()[1]))
case("post", "/room/join", 401, "join without a token")(lambda c: post(c, "/api/room/join", {"roomName": "x"}))


@case("post", "/room/join", 403, "join a private room")
def _join_private(c: Ctx) -> Reply:
    room = c.room(c.user()[1])
    return post(c, "/api/room/join", {"roomName": room["name"]}, token=c.user()[1])


case("post", "/room/join", 404, "join a missing room")(
    lambda c: post(c, "/api/room/join", {"roomName": "no-such-room"}, token=c.user()[1]))


@case("post", "/room/join", 410, "join an inactive room")
def _join_inactive(c: Ctx) -> Reply:
    _, room = c.inactive_room()
    return post(c, "/api/room/join", {"roomName": room["name"]}, token=c.user()[1])


@case("post", "/room/refresh-token", 200, "refresh-token")
def _rt(c: Ctx) -> Reply:
    token = c.user()[1]
    return post(c, "/api/room/refresh-token", {"roomName": c.room(token)["name"]}, token=token)


case("post", "/room/refresh-token", 400, "refresh-token without a room")(
    lambda c: post(c, "/api/room/refresh-token", {}, token=c.user()[1]))
case("post", "/room/refresh-token", 401, "refresh-token without a token")(
    lambda c: post(c, "/api/room/refresh-token", {"roomName": "x"}))


@case("post", "/room/refresh-token", 403, "refresh-token for a private room")
def _rt_private(c: Ctx) -> Reply:
    room = c.room(c.user()[1])
    return post(c, "/api/room/refresh-token", {"roomName": room["name"]}, token=c.user()[1])


case("post", "/room/refresh-token", 404, "refresh-token for a missing room")(
    lambda c: post(c, "/api/room/refresh-token", {"roomName": "no-such-room"}, token=c.user()[1]))


@case("post", "/room/refresh-token", 410, "refresh-token for an inactive room")
def _rt_inactive(c: Ctx) -> Reply:
    token, room = c.inactive_room()
    return post(c, "/api/room/refresh-token", {"roomName": room["name"]}, token=token)


@case("post", "/room/refresh-token", 429, "refresh-token over the limit")
def _rt_limit(c: Ctx) -> Reply:
    token = c.user()[1]
    return c.over_limit("apiRateLimit", lambda: post(c, "/api/room/refresh-token", {}, token=token))


@case("post", "/room/guest-join", 200, "guest-join")
def _gj(c: Ctx) -> Reply:
    room = c.room(c.user()[1], isPublic=True)
    return post(c, "/api/room/guest-join", {"roomName": room["name"], "guestName": "Guest"})


case("post", "/room/guest-join", 400, "guest-join without a name")(
    lambda c: post(c, "/api/room/guest-join", {"roomName": "x"}))


@case("post", "/room/guest-join", 403, "guest-join a private room")
def _gj_private(c: Ctx) -> Reply:
    return post(c, "/api/room/guest-join", {"roomName": c.room(c.user()[1])["name"], "guestName": "Guest"})


case("post", "/room/guest-join", 404, "guest-join a missing room")(
    lambda c: post(c, "/api/room/guest-join", {"roomName": "no-such-room", "guestName": "Guest"}))


@case("post", "/room/guest-join", 410, "guest-join an inactive room")
def _gj_inactive(c: Ctx) -> Reply:
    _, room = c.inactive_room()
    return post(c, "/api/room/guest-join", {"roomName": room["name"], "guestName": "Guest"})


case("post", "/room/guest-join", 429, "guest-join over the limit")(
    lambda c: c.over_limit("guestRateLimit", lambda: post(c, "/api/room/guest-join", {"roomName": "x"})))


@case("get", "/room/list", 200, "list")
def _list(c: Ctx) -> Reply:
    token = c.user()[1]
    c.room(token)
    _, room = c.inactive_room()  # an inactive room of someone else's is not listed
    return c.srv.request("GET", "/api/room/list", token=token)


case("get", "/room/list", 401, "list without a token")(lambda c: c.srv.request("GET", "/api/room/list"))
case("get", "/room/list", 403, "list as a guest")(lambda c: c.srv.request("GET", "/api/room/list", token=c.guest()))


def _settings(c: Ctx, body, as_other: bool = False, room_id: str = "") -> Reply:  # type: ignore[no-untyped-def]
    token = c.user()[1]
    rid = room_id or c.room(token)["id"]
    return c.srv.request("PUT", f"/api/room/{rid}/settings", body, token=c.user()[1] if as_other else token)


case("put", "/room/{roomId}/settings", 200, "settings")(
    lambda c: _settings(c, {"isPublic": True, "settings": {"allowChat": True, "recordingsAllowed": False}}))
case("put", "/room/{roomId}/settings", 400, "settings with a wrong type")(lambda c: _settings(c, {"isPublic": "yes"}))
case("put", "/room/{roomId}/settings", 401, "settings without a token")(
    lambda c: c.srv.request("PUT", f"/api/room/{uuid.uuid4()}/settings", {}))
case("put", "/room/{roomId}/settings", 403, "settings of someone else's room")(
    lambda c: _settings(c, {"isPublic": True}, as_other=True))
case("put", "/room/{roomId}/settings", 404, "settings of a missing room")(
    lambda c: _settings(c, {}, room_id=str(uuid.uuid4())))


@case("delete", "/room/{roomId}", 202, "delete")
def _delete(c: Ctx) -> Reply:
    token = c.user()[1]
    return c.srv.request("DELETE", f"/api/room/{c.room(token)['id']}", token=token)


case("delete", "/room/{roomId}", 401, "delete without a token")(
    lambda c: c.srv.request("DELETE", f"/api/room/{uuid.uuid4()}"))
case("delete", "/room/{roomId}", 403, "delete someone else's room")(
    lambda c: c.srv.request("DELETE", f"/api/room/{c.room(c.user()[1])['id']}", token=c.user()[1]))
case("delete", "/room/{roomId}", 404, "delete a missing room")(
    lambda c: c.srv.request("DELETE", f"/api/room/{uuid.uuid4()}", token=c.user()[1]))

PNG_1x1 = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
                        "53de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082")


def _upload(c: Ctx, data: bytes, *, member: bool = True, room_id: str = "", token: str = "") -> Reply:
    owner = c.user()[1]
    rid = room_id or c.room(owner, settings={"allowChat": True})["id"]
    boundary = "conformance1234"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n"
            f"Content-Type: image/png\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    who = token or (owner if member else c.user()[1])
    return c.srv.request("POST", f"/api/room/{rid}/chat/upload", raw=body,
                         content_type=f"multipart/form-data; boundary={boundary}", token=who)


case("post", "/room/{roomId}/chat/upload", 200, "upload")(lambda c: _upload(c, PNG_1x1))
case("post", "/room/{roomId}/chat/upload", 400, "upload of text")(lambda c: _upload(c, b"hello"))
case("post", "/room/{roomId}/chat/upload", 401, "upload without a token")(
    lambda c: c.srv.request("POST", f"/api/room/{uuid.uuid4()}/chat/upload", raw=b""))
case("post", "/room/{roomId}/chat/upload", 403, "upload by an outsider")(lambda c: _upload(c, PNG_1x1, member=False))
case("post", "/room/{roomId}/chat/upload", 404, "upload to a missing room")(
    lambda c: _upload(c, PNG_1x1, room_id=str(uuid.uuid4())))


# MARK: - admin

WH = "/api/admin/webhooks"
for _m, _p, _path in (("get", "/admin/webhooks", WH), ("post", "/admin/webhooks", WH),
                      ("put", "/admin/webhooks/{id}", WH + "/x"), ("delete", "/admin/webhooks/{id}", WH + "/x"),
                      ("post", "/admin/webhooks/{id}/rotate-secret", WH + "/x/rotate-secret"),
                      ("post", "/admin/webhooks/{id}/test", WH + "/x/test"), ("get", "/admin/rooms", "/api/admin/rooms")):
    case(_m, _p, 401, f"{_m} {_p} without a token")(
        lambda c, m=_m, path=_path: c.srv.request(m.upper(), path, {} if m in ("post", "put") else None))
    case(_m, _p, 403, f"{_m} {_p} by a non-superadmin")(
        lambda c, m=_m, path=_path: c.srv.request(m.upper(), path, {} if m in ("post", "put") else None,
                                                  token=c.user()[1]))
case("get", "/admin/webhooks", 200, "list webhooks")(lambda c: (c.webhook(), c.srv.request("GET", WH, token=c.root()))[1])
case("post", "/admin/webhooks", 201, "create webhook")(
    lambda c: post(c, WH, {"name": "c", "url": "http://127.0.0.1:9/", "events": ["room.created"]}, token=c.root()))
case("post", "/admin/webhooks", 400, "create webhook with an unknown event")(
    lambda c: post(c, WH, {"name": "c", "url": "http://127.0.0.1:9/", "events": ["nope"]}, token=c.root()))
case("put", "/admin/webhooks/{id}", 200, "update webhook")(
    lambda c: c.srv.request("PUT", f"{WH}/{c.webhook()['id']}", {"isActive": False}, token=c.root()))
case("put", "/admin/webhooks/{id}", 400, "update webhook with an empty name")(
    lambda c: c.srv.request("PUT", f"{WH}/{c.webhook()['id']}", {"name": ""}, token=c.root()))
case("put", "/admin/webhooks/{id}", 404, "update a missing webhook")(
    lambda c: c.srv.request("PUT", f"{WH}/{uuid.uuid4()}", {}, token=c.root()))
case("delete", "/admin/webhooks/{id}", 200, "delete webhook")(
    lambda c: c.srv.request("DELETE", f"{WH}/{c.webhook()['id']}", token=c.root()))
case("delete", "/admin/webhooks/{id}", 404, "delete a missing webhook")(
    lambda c: c.srv.request("DELETE", f"{WH}/{uuid.uuid4()}", token=c.root()))
case("post", "/admin/webhooks/{id}/rotate-secret", 200, "rotate secret")(
    lambda c: post(c, f"{WH}/{c.webhook()['id']}/rotate-secret", token=c.root()))
case("post", "/admin/webhooks/{id}/rotate-secret", 404, "rotate a missing webhook's secret")(
    lambda c: post(c, f"{WH}/{uuid.uuid4()}/rotate-secret", token=c.root()))
case("post", "/admin/webhooks/{id}/test", 200, "test webhook (nobody listens)")(
    lambda c: post(c, f"{WH}/{c.webhook()['id']}/test", token=c.root()))
case("post", "/admin/webhooks/{id}/test", 404, "test a missing webhook")(
    lambda c: post(c, f"{WH}/{uuid.uuid4()}/test", token=c.root()))


@case("get", "/admin/rooms", 200, "admin rooms")
def _admin_rooms(c: Ctx) -> Reply:
    owner = c.user()[1]
    c.room(owner)
    gone = c.room(owner)
    assert c.srv.request("DELETE", f"/api/room/{gone['id']}", token=owner).status == 202
    reply = c.srv.request("GET", "/api/admin/rooms", token=c.root())
    assert any("deletedAt" in r for r in reply.json()["rooms"]) and any("deletedAt" not in r for r in reply.json()["rooms"])
    return reply


case("get", "/admin/rooms", 400, "admin rooms with a bad filter")(
    lambda c: c.srv.request("GET", "/api/admin/rooms?status=live", token=c.root()))


# MARK: - the tests

@pytest.fixture(scope="module")
def spec() -> Spec:
    return Spec()


@pytest.fixture(scope="module")
def ctx():
    s = DevServer("--seed-user", f"{ROOT}:{ROOT_PW}:Root", "--superadmin", ROOT)
    yield Ctx(s)
    s.stop()


@pytest.mark.parametrize("method,path,status,label,driver", CASES, ids=[c[3] for c in CASES])
def test_answer_conforms(ctx, spec, method, path, status, label, driver):
    reply = driver(ctx)
    assert reply.status == status, f"{label}: expected {status}, got {reply!r}"
    schema, origin = spec.answer_schema(method, path, status)
    try:
        body = reply.json()
    except ValueError:
        pytest.fail(f"{label}: answer is not JSON: {reply.text[:200]!r}")
    problems = spec.check(schema, body)
    assert not problems, f"{method.upper()} {path} {status} ({label}) against {origin}:\n  " + "\n  ".join(problems)
    if status >= 400 and "error" in body:
        assert isinstance(body["error"], str) and body["error"]


def test_every_documented_answer_of_the_bots_routes_is_driven(spec):
    driven = {(m, p, str(s)) for m, p, s, _, _ in CASES}
    missing = []
    for method, path in BOT_ROUTES:
        for status in sorted(spec.documented_statuses(method, path)):
            key = (method, path, status)
            if key in driven or key in NOT_PRODUCIBLE or status == "500":
                continue
            missing.append(f"{method.upper()} {path} {status}")
    assert not missing, "documented answers with no case: " + ", ".join(missing)


def test_the_checked_schemas_pin_every_field(spec):
    """A schema without properties would accept any renamed field: every answer and
    every request body the bot sends must be checked against a closed one."""
    loose = [f"{m.upper()} {p} {s}" for m, p, s, _, _ in CASES
             if not spec.is_closed(spec.answer_schema(m, p, s)[0])]
    assert not loose, "answers checked against an open schema: " + ", ".join(loose)


def test_the_differences_name_real_answers(spec):
    driven = {(m, p, str(s)) for m, p, s, _, _ in CASES}
    stale = [k for k in ANSWER_DIFFERENCES if k not in driven and k[1] not in ("/api/ready",)]
    assert not stale, f"differences no case exercises: {stale}"


def test_the_fixture_records_its_source(spec):
    import hashlib
    from .swagger_check import SPEC_FILE
    source = Spec.source()
    assert source["repository"] == "github.com/themadorg/bedrud" and source["path"] == "server/docs/swagger.json"
    assert len(source["commit"]) == 40 and source["ref"]
    with open(SPEC_FILE, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == source["sha256"]
    assert spec.doc["swagger"] == "2.0" and spec.doc["basePath"] == "/api"


def test_refresh_script_reads_a_local_clone(tmp_path):
    """scripts/refresh-bedrud-spec against a throwaway git repository (no network)."""
    import json as _json
    import subprocess
    from .helpers import REPO
    script = os.path.join(REPO, "scripts", "refresh-bedrud-spec")
    repo, out = tmp_path / "bedrud", tmp_path / "out"
    (repo / "server" / "docs").mkdir(parents=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")

    def commit(spec: dict, tag: str) -> None:
        (repo / "server" / "docs" / "swagger.json").write_text(_json.dumps(spec))
        for args in (["add", "-A"], ["commit", "-q", "-m", tag], ["tag", tag]):
            subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)

    subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)
    commit({"swagger": "2.0", "paths": {"/room/join": {"post": {}}}}, "v1")
    commit({"swagger": "2.0", "paths": {"/room/join": {"post": {"x": 1}}}}, "v2")
    run = lambda *a: subprocess.run([script, "--out", str(out), *a], capture_output=True, text=True, timeout=60)  # noqa: E731
    first = run(str(repo), "v1")
    assert first.returncode == 0, first.stderr
    source = _json.loads((out / "bedrud-swagger.source.json").read_text())
    assert source["ref"] == "v1" and len(source["commit"]) == 40
    second = run(str(repo), "v2")
    assert second.returncode == 0 and "changed: /room/join" in second.stdout
    assert _json.loads((out / "bedrud-swagger.json").read_text())["paths"]["/room/join"]["post"] == {"x": 1}
    missing = run(str(repo), "v9")
    assert missing.returncode == 1 and missing.stderr.startswith("refresh-bedrud-spec: ")
    assert run(str(repo)).returncode == 2


def test_request_log_redacts_secrets(tmp_path):
    import json as _json
    log = tmp_path / "requests.jsonl"
    s = DevServer("--request-log", str(log))
    try:
        body = s.register("log@example.com", "Logger")
        s.request("POST", "/api/auth/refresh", {"refresh_token": body["tokens"]["refreshToken"]})
        s.request("GET", "/api/auth/me", token=body["tokens"]["accessToken"])
        s.request("GET", "/_dev/state")
    finally:
        s.stop()
    entries = [_json.loads(line) for line in log.read_text().splitlines()]
    assert [(e["method"], e["path"]) for e in entries] == [
        ("POST", "/api/auth/register"), ("POST", "/api/auth/refresh"), ("GET", "/api/auth/me")]
    assert entries[0]["body"] == {"email": "log@example.com", "password": "<redacted>", "name": "Logger"}
    assert entries[1]["body"] == {"refresh_token": "<redacted>"} and entries[1]["json"] is True
    assert entries[2]["body"] is None and entries[2]["bytes"] == 0
    assert "correct horse battery" not in log.read_text()
