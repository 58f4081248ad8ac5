"""Bedrud v0.12.0's outbound webhooks, its admin webhook routes, the admin rooms list and
the superadmin role, as the devserver models them (webhooks.py, rest.py `admin_*`).

Every delivery is received by the test's own HTTP server on 127.0.0.1 and its signature
checked with the endpoint's secret; waits are polls with a deadline, never a bare sleep."""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

import pytest

from .helpers import DevServer, jwt_claims

PW = "correct horse battery"
ADMIN = "admin@example.com"
ADMIN_PW = "admin-password-1"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")  # time.RFC3339 of a UTC time, whole seconds


class Receiver:
    """A webhook receiver on 127.0.0.1: records every POST (path, headers, raw body) and
    answers `status`, or never answers while `hang` is set."""

    def __init__(self, status: int = 200, hang: bool = False) -> None:
        self.got: list[dict] = []
        self.cond = threading.Condition()
        self.status = status
        self.release = threading.Event()
        if not hang:
            self.release.set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.cond:
                    receiver.got.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                         "at": time.monotonic()})
                    receiver.cond.notify_all()
                receiver.release.wait(60)
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, pred: Callable[[dict], bool], timeout: float = 15.0, what: str = "a delivery") -> dict:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for item in self.got:
                    if pred(item):
                        return item
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}; got {[self.summary(g) for g in self.got]}")
                self.cond.wait(left)

    def events(self, room_id: str, path: str) -> list[tuple[str, str]]:
        with self.cond:
            out = []
            for g in self.got:
                if g["path"] != path:
                    continue
                data = json.loads(g["body"]).get("data", {})
                if data.get("roomId") == room_id:
                    out.append((json.loads(g["body"])["event"], data["userId"]))
            return out

    @staticmethod
    def summary(g: dict) -> str:
        return f"{g['path']} {g['body'][:120]!r}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def event_is(event: str, room_id: Optional[str] = None, path: str = "/preset") -> Callable[[dict], bool]:
    def pred(g: dict) -> bool:
        body = json.loads(g["body"])
        return (g["path"] == path and body["event"] == event and
                (room_id is None or body["data"].get("roomId") == room_id))
    return pred


def check_signed(g: dict, secret: str, event: str) -> dict:
    """The delivery as handler_dispatch_webhook.go sends it; returns the parsed body."""
    h = {k.lower(): v for k, v in g["headers"].items()}
    expected = "sha256=" + hmac.new(secret.encode(), g["body"], hashlib.sha256).hexdigest()
    assert h["x-bedrud-signature"] == expected
    assert h["x-bedrud-event"] == event and h["content-type"] == "application/json"
    body = json.loads(g["body"])
    assert list(body) == ["data", "event", "timestamp"]  # Go marshals a map with sorted keys
    assert g["body"] == json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    assert body["event"] == event and STAMP.match(body["timestamp"]) and h["x-bedrud-timestamp"] == body["timestamp"]
    return body


@pytest.fixture(scope="module")
def rx():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture(scope="module")
def secret_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("hook") / "secret"
    path.write_text("pre-shared-secret-for-tests\n")
    return path


@pytest.fixture(scope="module")
def srv(rx, secret_file):
    s = DevServer("--seed-user", f"{ADMIN}:{ADMIN_PW}:Admin", "--superadmin", ADMIN,
                  "--webhook", rx.url + "/preset", "--webhook-secret-file", str(secret_file))
    yield s
    s.stop()


def admin_token(srv: DevServer) -> str:
    return srv.login(ADMIN, ADMIN_PW)["tokens"]["accessToken"]


def new_user(srv: DevServer, name: str = "Member") -> tuple[str, str]:
    body = srv.register(f"w{uuid.uuid4().hex[:10]}@example.com", name)
    return body["tokens"]["accessToken"], body["user"]["id"]


def create_room(srv: DevServer, token: str, **fields: Any) -> dict:
    r = srv.request("POST", "/api/room/create", {"name": f"w-{uuid.uuid4().hex[:8]}", "isPublic": True, **fields},
                    token=token)
    assert r.status == 200, r
    return r.json()


def hook(srv: DevServer, token: str, url: str, events: list[str], name: str = "test") -> dict:
    r = srv.request("POST", "/api/admin/webhooks", {"name": name, "url": url, "events": events}, token=token)
    assert r.status == 201, r
    return r.json()


def settled(srv: DevServer, timeout: float = 15.0) -> dict:
    """/_dev/webhooks once nothing is queued or being sent."""
    deadline = time.monotonic() + timeout
    while True:
        state = srv.request("GET", "/_dev/webhooks").json()
        if state["queued"] == 0 and all(d["outcome"] not in ("queued", "sending") for d in state["deliveries"]):
            return state
        assert time.monotonic() < deadline, f"deliveries did not settle: {state}"
        time.sleep(0.05)


# MARK: - the superadmin role

def test_superadmin_flag_sets_the_role_in_the_user_and_its_token(srv):
    login = srv.login(ADMIN, ADMIN_PW)
    assert login["user"]["accesses"] == ["superadmin", "user"]
    token = login["tokens"]["accessToken"]
    assert jwt_claims(token)["accesses"] == ["superadmin", "user"]
    me = srv.request("GET", "/api/auth/me", token=token).json()
    assert me["accesses"] == ["superadmin", "user"] and me["email"] == ADMIN


def test_superadmin_flag_needs_a_seed_user():
    import subprocess
    from .helpers import DEVSERVER
    p = subprocess.run([DEVSERVER, "--port", "0", "--superadmin", "nobody@example.com"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "--superadmin nobody@example.com: no --seed-user" in p.stderr and p.stdout == ""


ADMIN_CALLS = [("GET", "/api/admin/webhooks", None), ("POST", "/api/admin/webhooks", {}),
               ("PUT", "/api/admin/webhooks/x", {}), ("DELETE", "/api/admin/webhooks/x", None),
               ("POST", "/api/admin/webhooks/x/rotate-secret", None), ("POST", "/api/admin/webhooks/x/test", None),
               ("GET", "/api/admin/rooms", None)]


@pytest.mark.parametrize("method,path,body", ADMIN_CALLS)
def test_admin_routes_refuse_everyone_but_superadmins(srv, method, path, body):
    member, _ = new_user(srv)
    r = srv.request(method, path, body, token=member)
    assert (r.status, r.json()) == (403, {"error": "Insufficient access rights"})  # middleware/auth.go:118-120
    guest = srv.request("POST", "/api/auth/guest-login", {"name": "Guest"}).json()["tokens"]["accessToken"]
    assert srv.request(method, path, body, token=guest).status == 403
    assert (srv.request(method, path, body).json(), srv.request(method, path, body).status) == (
        {"error": "Missing authorization"}, 401)


# MARK: - webhook admin routes

def test_create_shows_the_secret_once_then_masked(srv, rx):
    token = admin_token(srv)
    created = hook(srv, token, "http://127.0.0.1:9/loopback-is-fine", ["room.created", "ping"], "once")
    assert list(created) == ["id", "name", "url", "secret", "events", "isActive", "createdBy", "createdAt", "updatedAt"]
    assert re.fullmatch(r"[0-9a-f]{32}", created["secret"]) and created["isActive"] is True
    assert created["createdBy"] == jwt_claims(token)["userId"] and "lastSeen" not in created
    listed = srv.request("GET", "/api/admin/webhooks", token=token).json()
    assert set(listed) == {"webhooks", "total", "page", "limit"} and (listed["page"], listed["limit"]) == (1, 50)
    mine = next(w for w in listed["webhooks"] if w["id"] == created["id"])
    assert mine["secret"] == "••••" + created["secret"][-4:]
    assert listed["webhooks"][0]["id"] == created["id"]  # newest first
    updated = srv.request("PUT", f"/api/admin/webhooks/{created['id']}", {"name": "renamed", "isActive": False},
                          token=token).json()
    assert (updated["name"], updated["isActive"], updated["secret"]) == ("renamed", False, mine["secret"])
    assert updated["events"] == ["room.created", "ping"] and updated["url"] == created["url"]


def test_rotate_secret_returns_only_the_new_secret(srv):
    token = admin_token(srv)
    created = hook(srv, token, "https://example.invalid/x", ["room.ended"])
    r = srv.request("POST", f"/api/admin/webhooks/{created['id']}/rotate-secret", token=token)
    assert r.status == 200 and list(r.json()) == ["secret"]
    new = r.json()["secret"]
    assert re.fullmatch(r"[0-9a-f]{32}", new) and new != created["secret"]
    listed = srv.request("GET", "/api/admin/webhooks?limit=100", token=token).json()["webhooks"]
    assert next(w for w in listed if w["id"] == created["id"])["secret"] == "••••" + new[-4:]


def test_delete_and_unknown_ids(srv):
    token = admin_token(srv)
    created = hook(srv, token, "http://127.0.0.1:9/", ["ping"])
    r = srv.request("DELETE", f"/api/admin/webhooks/{created['id']}", token=token)
    assert (r.status, r.json()) == (200, {"status": "deleted"})
    for method, path in (("DELETE", ""), ("PUT", ""), ("POST", "/rotate-secret"), ("POST", "/test")):
        r = srv.request(method, f"/api/admin/webhooks/{created['id']}{path}", {} if method == "PUT" else None,
                        token=token)
        assert (r.status, r.json()) == (404, {"error": "Webhook not found"}), (method, path)


@pytest.mark.parametrize("body,message", [
    ({"name": "x", "url": "http://127.0.0.1/", "events": []}, "at least one event must be specified"),
    ({"name": "x", "url": "http://127.0.0.1/"}, "at least one event must be specified"),
    ({"name": "x", "url": "http://127.0.0.1/", "events": ["room.created", "room.started"]},
     'unknown event type: "room.started"'),
    ({"url": "http://127.0.0.1/", "events": ["ping"]}, "name is required"),
    ({"name": "x", "events": ["ping"]}, "url is required"),
    ({"name": "x", "url": "/relative", "events": ["ping"]}, "Invalid URL: must be absolute http:// or https:// URL"),
    ({"name": "x", "url": "ftp://127.0.0.1/", "events": ["ping"]}, "URL scheme must be http:// or https://"),
    ({"name": "x", "url": "http://127.0.0.1/", "events": "ping"}, "Invalid request body"),
])
def test_create_validation(srv, body, message):
    r = srv.request("POST", "/api/admin/webhooks", body, token=admin_token(srv))
    assert (r.status, r.json()) == (400, {"error": message})


def test_every_model_event_is_accepted_including_the_reserved_one(srv):
    events = ["room.created", "room.ended", "participant.joined", "recording.completed", "ping"]
    assert hook(srv, admin_token(srv), "http://localhost:1/", events)["events"] == events


def test_update_validation_saves_nothing(srv):
    token = admin_token(srv)
    created = hook(srv, token, "http://127.0.0.1:9/", ["ping"], "keep")
    for body, message in (({"name": ""}, "name cannot be empty"), ({"url": ""}, "url cannot be empty"),
                          ({"url": "nope"}, "Invalid URL"), ({"url": "ws://h/"}, "URL scheme must be http:// or https://"),
                          ({"name": "changed", "events": ["nope"]}, 'unknown event type: "nope"')):
        r = srv.request("PUT", f"/api/admin/webhooks/{created['id']}", body, token=token)
        assert (r.status, r.json()) == (400, {"error": message})
    listed = srv.request("GET", "/api/admin/webhooks?limit=100", token=token).json()["webhooks"]
    assert next(w for w in listed if w["id"] == created["id"])["name"] == "keep"


def test_list_pagination_echoes_page_and_limit(srv):
    token = admin_token(srv)
    for n in range(3):
        hook(srv, token, f"http://127.0.0.1:9/{n}", ["ping"], f"page{n}")
    total = srv.request("GET", "/api/admin/webhooks", token=token).json()["total"]
    one = srv.request("GET", "/api/admin/webhooks?page=2&limit=1", token=token).json()
    assert (one["page"], one["limit"], one["total"], len(one["webhooks"])) == (2, 1, total, 1)
    assert one["webhooks"][0]["name"] == "page1"
    odd = srv.request("GET", "/api/admin/webhooks?page=0&limit=500", token=token).json()
    assert (odd["page"], odd["limit"], len(odd["webhooks"])) == (0, 500, min(total, 50))


def test_test_route_sends_a_signed_ping_and_reports_it(srv, rx):
    token = admin_token(srv)
    created = hook(srv, token, rx.url + "/ping-target", ["room.ended"])  # not subscribed to ping: sent anyway
    r = srv.request("POST", f"/api/admin/webhooks/{created['id']}/test", token=token)
    assert r.status == 200 and r.json()["status"] == "success" and r.json()["httpStatus"] == 200
    assert set(r.json()) == {"status", "httpStatus", "latencyMs"} and isinstance(r.json()["latencyMs"], int)
    g = rx.wait(lambda g: g["path"] == "/ping-target", what="the ping")
    body = check_signed(g, created["secret"], "ping")
    assert body["data"] == {}
    rotated = srv.request("POST", f"/api/admin/webhooks/{created['id']}/rotate-secret", token=token).json()["secret"]
    assert srv.request("POST", f"/api/admin/webhooks/{created['id']}/test", token=token).json()["status"] == "success"
    with rx.cond:
        last = [g for g in rx.got if g["path"] == "/ping-target"][-1]
    check_signed(last, rotated, "ping")


def test_test_route_reports_non_2xx_and_network_failures(srv):
    token = admin_token(srv)
    teapot = Receiver(status=418)
    try:
        created = hook(srv, token, teapot.url + "/", ["ping"])
        r = srv.request("POST", f"/api/admin/webhooks/{created['id']}/test", token=token).json()
        assert (r["status"], r["httpStatus"]) == ("non_2xx", 418)
    finally:
        teapot.close()
    closed = hook(srv, token, "http://127.0.0.1:9/", ["ping"])
    r = srv.request("POST", f"/api/admin/webhooks/{closed['id']}/test", token=token).json()
    assert r["status"] == "delivery_failed" and set(r) == {"status", "error", "latencyMs"}
    assert r["error"].startswith('Post "http://127.0.0.1:9/": ')


# MARK: - events

def test_room_lifecycle_events_reach_the_preset_endpoint(srv, rx, secret_file):
    secret = secret_file.read_text().strip()
    owner, owner_id = new_user(srv, "Owner")
    room = create_room(srv, owner)
    body = check_signed(rx.wait(event_is("room.created", room["id"])), secret, "room.created")
    assert body["data"] == {"roomId": room["id"], "roomName": room["name"], "userId": owner_id}
    member, member_id = new_user(srv)
    assert srv.request("POST", "/api/room/join", {"roomName": room["name"]}, token=member).status == 200
    body = check_signed(rx.wait(event_is("participant.joined", room["id"])), secret, "participant.joined")
    assert body["data"]["userId"] == member_id
    guest = srv.request("POST", "/api/room/guest-join", {"roomName": room["name"], "guestName": "Visitor"})
    assert guest.status == 200
    guest_id = jwt_claims(guest.json()["token"])["sub"]
    rx.wait(lambda g: event_is("participant.joined", room["id"])(g) and guest_id in g["body"].decode(),
            what="the guest's participant.joined")
    admin = admin_token(srv)
    assert srv.request("DELETE", f"/api/room/{room['id']}", token=admin).status == 202
    body = check_signed(rx.wait(event_is("room.ended", room["id"])), secret, "room.ended")
    assert body["data"] == {"roomId": room["id"], "roomName": room["name"], "userId": jwt_claims(admin)["userId"]}
    settled(srv)
    assert rx.events(room["id"], "/preset") == [("room.created", owner_id), ("participant.joined", member_id),
                                     ("participant.joined", guest_id), ("room.ended", jwt_claims(admin)["userId"])]


def test_only_active_subscribed_endpoints_get_an_event(srv, rx):
    token = admin_token(srv)
    ended_only = hook(srv, token, rx.url + "/ended-only", ["room.ended"])
    paused = hook(srv, token, rx.url + "/paused", ["room.created"])
    srv.request("PUT", f"/api/admin/webhooks/{paused['id']}", {"isActive": False}, token=token)
    room = create_room(srv, new_user(srv)[0])
    rx.wait(event_is("room.created", room["id"]))
    state = settled(srv)
    sent = [(d["webhookId"], d["event"]) for d in state["deliveries"] if room["id"] in d["body"]]
    assert (ended_only["id"], "room.created") not in sent and (paused["id"], "room.created") not in sent
    preset = [d for d in state["deliveries"] if room["id"] in d["body"] and d["url"].endswith("/preset")]
    assert [(d["event"], d["status"], d["outcome"]) for d in preset] == [("room.created", 200, "delivered")]


def test_a_scripted_participant_fires_participant_joined_and_counts(srv, rx):
    admin = admin_token(srv)
    name = f"scripted-{uuid.uuid4().hex[:6]}"
    r = srv.request("POST", f"/_dev/rooms/{name}/scenario", raw=b"at 0s join alice\nat 3s leave alice\n")
    assert r.status == 200, r
    created = rx.wait(lambda g: event_is("room.created")(g) and name in g["body"].decode(), what="room.created")
    room_id = json.loads(created["body"])["data"]["roomId"]
    joined = json.loads(rx.wait(event_is("participant.joined", room_id))["body"])
    assert joined["data"] == {"roomId": room_id, "roomName": name, "userId": "alice"}

    def count() -> int:
        rooms = srv.request("GET", f"/api/admin/rooms?q={name}", token=admin).json()["rooms"]
        return rooms[0]["participantsCount"]
    assert count() == 2  # the creator's row (room_repository.go:104-112) and alice's
    deadline = time.monotonic() + 15
    while count() != 1:  # alice left LiveKit: her row is inactive (livekit_webhook.go:171)
        assert time.monotonic() < deadline, "alice's row stayed active"
        time.sleep(0.1)


# MARK: - the admin rooms list

def test_admin_rooms_shape_filters_and_pagination(srv):
    admin = admin_token(srv)
    owner, owner_id = new_user(srv, "Roomy Owner")
    tag = uuid.uuid4().hex[:6]
    public = create_room(srv, owner, name=f"ar-{tag}-pub", maxParticipants=3)
    private = create_room(srv, owner, name=f"ar-{tag}-priv", isPublic=False)
    ended = create_room(srv, owner, name=f"ar-{tag}-end")
    for _ in range(2):
        member, _ = new_user(srv)
        assert srv.request("POST", "/api/room/join", {"roomName": public["name"]}, token=member).status == 200
    assert srv.request("DELETE", f"/api/room/{ended['id']}", token=owner).status == 202

    def get(query: str) -> dict:
        r = srv.request("GET", f"/api/admin/rooms?q={tag}&{query}", token=admin)
        assert r.status == 200, r
        return r.json()
    every = get("")
    assert set(every) == {"rooms", "total", "page", "limit"} and (every["page"], every["limit"]) == (1, 50)
    assert [r["name"] for r in every["rooms"]] == [ended["name"], private["name"], public["name"]]  # newest first
    first = every["rooms"][2]
    assert list(first) == ["id", "name", "createdBy", "isActive", "maxParticipants", "createdAt", "updatedAt",
                           "expiresAt", "adminId", "isPublic", "settings", "mode", "participantsCount",
                           "lastActivityAt", "ownerName", "ownerEmail"]
    assert (first["participantsCount"], first["ownerName"], first["createdBy"]) == (3, "Roomy Owner", owner_id)
    assert STAMP.match(first["lastActivityAt"][:19] + "Z")
    gone = every["rooms"][0]
    assert gone["participantsCount"] == 0 and gone["lastActivityAt"] is None and "deletedAt" in gone
    assert [r["name"] for r in get("status=active")["rooms"]] == [private["name"], public["name"]]
    assert [r["name"] for r in get("status=archived")["rooms"]] == [ended["name"]]
    assert get("status=active,archived")["total"] == 3
    assert [r["name"] for r in get("visibility=private")["rooms"]] == [private["name"]]
    assert [r["name"] for r in get("occupancy=1-5&sort=name&order=asc")["rooms"]] == [private["name"], public["name"]]
    assert [r["name"] for r in get("occupancy=empty")["rooms"]] == [ended["name"]]
    assert [r["name"] for r in get("sort=participantsCount")["rooms"]][0] == public["name"]
    page = get("limit=1&page=2")
    assert (page["total"], page["page"], page["limit"], [r["name"] for r in page["rooms"]]) == (
        3, 2, 1, [private["name"]])
    assert (get("limit=0&page=-3")["page"], get("limit=0")["limit"]) == (1, 50)
    for query, message in (("status=live", "Invalid status: live"), ("visibility=hidden", "Invalid visibility: hidden"),
                           ("occupancy=7", "Invalid occupancy filter"), ("sort=size", "Invalid sort field"),
                           ("order=up", "Invalid order, must be asc or desc"), ("created=1y", "Invalid created filter")):
        r = srv.request("GET", f"/api/admin/rooms?{query}", token=admin)
        assert (r.status, r.json()) == (400, {"error": message}), query


# MARK: - a receiver that never answers

def test_a_receiver_that_never_answers_holds_the_queue_not_the_server():
    hang, good = Receiver(hang=True), Receiver()
    s = DevServer("--seed-user", f"{ADMIN}:{ADMIN_PW}:Admin", "--webhook", hang.url + "/hang",
                  "--webhook", good.url + "/good")
    try:
        token = s.login(ADMIN, ADMIN_PW)["tokens"]["accessToken"]
        start = time.monotonic()
        room = create_room(s, token)
        hang.wait(event_is("room.created", room["id"], "/hang"), what="the hanging receiver's request")
        t0 = time.monotonic()
        assert s.request("GET", "/api/health", timeout=5).status == 200
        create_room(s, token)
        assert time.monotonic() - t0 < 3, "the devserver stalled behind a webhook"
        got = good.wait(event_is("room.created", room["id"], "/good"), timeout=20, what="the delivery after the hang")
        # One worker, as Bedrud's queue: the next job waits for the 10 s client timeout.
        assert 9.0 <= got["at"] - start <= 16.0, got["at"] - start
        state = s.request("GET", "/_dev/webhooks").json()
        first = next(d for d in state["deliveries"] if d["url"].endswith("/hang"))
        assert first["outcome"] == "delivery_failed" and "Client.Timeout exceeded" in first["error"]
        assert 9.5 <= first["finishedAt"] - first["startedAt"] <= 12
        assert sum(1 for g in hang.got if room["id"] in g["body"].decode()) == 1  # a single attempt
    finally:
        s.stop()
        hang.close()
        good.close()
