"""Rooms that end, private rooms, capacity and rejoin tokens, as Bedrud v0.12.0 has them
(lifecycle.py, rest.py join/refresh-token/create). Transcript style: each test drives a
devserver with the idle times at a second or two and checks every answer exactly."""
from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from ..lifecycle import IdleSweep, LiveKitTimeouts
from ..store import Room, default_settings
from .helpers import DevServer, jwt_claims

PW = "correct horse battery"


@pytest.fixture(scope="module")
def srv():
    """Bedrud's own idle times (5 min, 1 min): nothing ends by itself during a test."""
    s = DevServer()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def fast():
    """The idle rule at test speed: rooms older than 3 s with nobody in LiveKit for 1 s go inactive."""
    s = DevServer("--room-min-age", "3", "--room-idle-after", "1")
    yield s
    s.stop()


def user(srv: DevServer, name: str = "Tester") -> tuple[str, str]:
    """(access token, user id) of a new account."""
    body = srv.register(f"u{uuid.uuid4().hex[:10]}@example.com", name)
    return body["tokens"]["accessToken"], body["user"]["id"]


def create(srv: DevServer, token: str, name: str, **fields) -> dict:  # type: ignore[no-untyped-def]
    r = srv.request("POST", "/api/room/create", {"name": name, **fields}, token=token)
    assert r.status == 200, r
    return r.json()


def join(srv: DevServer, token: str, name: str):  # type: ignore[no-untyped-def]
    return srv.request("POST", "/api/room/join", {"roomName": name}, token=token)


def rejoin_token(srv: DevServer, token: str, name: str):  # type: ignore[no-untyped-def]
    return srv.request("POST", "/api/room/refresh-token", {"roomName": name}, token=token)


def room_state(srv: DevServer, room_id: str) -> dict:
    return next(r for r in srv.state()["bedrudRooms"] if r["id"] == room_id)


def wait_inactive(srv: DevServer, room_id: str, timeout: float = 15.0) -> None:
    srv.wait_for(lambda st: any(r["id"] == room_id and not r["isActive"] for r in st["bedrudRooms"]),
                 timeout, f"room {room_id} inactive")


def row(srv: DevServer, room_id: str, user_id: str) -> dict:
    return next(p for p in srv.state()["roomParticipants"] if p["roomId"] == room_id and p["userId"] == user_id)


# MARK: - the idle rule as a pure value

def _room(created: float, persistent: bool = False) -> Room:
    settings = default_settings()
    settings["isPersistent"] = persistent
    return Room(id="r1", name="standup", created_by="u", admin_id="u", created_at=created, updated_at=created,
                expires_at=created + 86400, settings=settings)


def test_idle_sweep_waits_for_the_age_and_the_empty_time():
    sweep = IdleSweep(min_age=300, idle_after=60)
    room = _room(created=1000)
    empty = lambda name: 0  # noqa: E731
    assert sweep.due([room], empty, 1299) == []      # younger than 5 min
    assert sweep.due([room], empty, 1300) == ["r1"]   # 5 min old, never anyone in LiveKit


def test_idle_sweep_counts_the_empty_time_from_the_last_occupied_sweep():
    sweep = IdleSweep(min_age=300, idle_after=60)
    room = _room(created=0)
    assert sweep.due([room], lambda name: 2, 400) == []   # someone in LiveKit
    assert sweep.due([room], lambda name: 0, 459) == []   # empty for 59 s
    assert sweep.due([room], lambda name: 1, 459.5) == []  # back again: the clock restarts
    assert sweep.due([room], lambda name: 0, 519) == []
    assert sweep.due([room], lambda name: 0, 519.5) == ["r1"]


def test_idle_sweep_spares_persistent_and_inactive_rooms():
    sweep = IdleSweep(min_age=1, idle_after=1)
    persistent = _room(created=0, persistent=True)
    inactive = _room(created=0)
    inactive.id, inactive.is_active = "r2", False
    assert sweep.due([persistent, inactive], lambda name: 0, 10_000) == []


def test_livekit_closes_a_room_after_its_last_participant_or_when_nobody_came():
    t = LiveKitTimeouts(departure=20, empty=300)
    assert t.due([("RM_a", "a", 0.0, 1)], 10.0) == []
    assert t.due([("RM_a", "a", 0.0, 0)], 29.0) == []      # left at 10 s: 19 s ago
    assert t.due([("RM_a", "a", 0.0, 0)], 30.0) == ["a"]
    assert t.due([("RM_b", "b", 0.0, 0)], 299.0) == []     # nobody ever came
    assert t.due([("RM_b", "b", 0.0, 0)], 300.0) == ["b"]
    assert LiveKitTimeouts().due([("RM_c", "c", 0.0, 0)], 1e9) == []  # both off


def test_livekit_departure_timeout_ends_the_bedrud_room_whatever_its_age():
    s = DevServer("--lk-departure-timeout", "1", "--lk-empty-timeout", "2")
    try:
        owner = s.register(f"u{uuid.uuid4().hex[:10]}@example.com")["tokens"]["accessToken"]
        busy = create(s, owner, f"dep-{uuid.uuid4().hex[:8]}")
        r = s.request("POST", f"/_dev/rooms/{busy['name']}/scenario",
                      raw=f"room {busy['name']}\nat 0 join bob\nat 1 leave bob\n".encode())
        assert r.status == 200, r
        empty = create(s, owner, f"emp-{uuid.uuid4().hex[:8]}")
        wait_inactive(s, empty["id"])
        wait_inactive(s, busy["id"])  # a fresh room: the idle rule (300 s) has nothing to do with it
        assert busy["name"] not in [rm["name"] for rm in s.state()["rooms"]]  # LiveKit closed it
        assert join(s, owner, busy["name"]).json()["status"] == "archived_owned"
    finally:
        s.stop()


# MARK: - inactive rooms: archived_owned, 410, recreate

def test_an_idle_room_answers_archived_owned_to_its_creator_and_410_to_others(fast):
    srv = fast
    owner, owner_id = user(srv, "Owner")
    other, _ = user(srv, "Other")
    name = f"idle-{uuid.uuid4().hex[:8]}"
    room = create(srv, owner, name, isPublic=True, mode="webinar", settings={"allowAudio": True, "allowChat": True})
    assert join(srv, other, name).status == 200  # young and active
    assert room_state(srv, room["id"])["isActive"] is True
    wait_inactive(srv, room["id"])

    mine = join(srv, owner, name)
    assert (mine.status, mine.json()) == (200, {
        "status": "archived_owned", "name": name, "mode": "webinar",
        "settings": {"allowChat": True, "allowVideo": False, "allowAudio": True, "requireApproval": False,
                     "e2ee": False, "isPersistent": False, "recordingsAllowed": True}})
    theirs = join(srv, other, name)
    assert (theirs.status, theirs.json()) == (410, {"error": "room is no longer active"})
    for token in (owner, other):
        r = rejoin_token(srv, token, name)
        assert (r.status, r.json()) == (410, {"error": "room is no longer active"})
    # The idle sweep also set every participant row inactive (room_repository.go:857-861).
    assert row(srv, room["id"], owner_id)["isActive"] is False
    listed = srv.request("GET", "/api/room/list", token=owner).json()
    assert [(r["name"], r["isActive"]) for r in listed if r["name"] == name] == [(name, False)]

    # "Start new meeting": create with the same name, mode and settings, then join.
    again = create(srv, owner, name, isPublic=True, mode="webinar", settings=mine.json()["settings"])
    assert again["id"] != room["id"] and again["isActive"] is True and again["mode"] == "webinar"
    joined = join(srv, owner, name)
    assert joined.status == 200 and joined.json()["id"] == again["id"]
    assert join(srv, other, name).json()["id"] == again["id"]
    listed = srv.request("GET", "/api/room/list", token=owner).json()
    assert [(r["id"], r["isActive"]) for r in listed if r["name"] == name] == [(again["id"], True)]
    dup = srv.request("POST", "/api/room/create", {"name": name}, token=other)
    assert (dup.status, dup.json()) == (409, {"error": "a room with this name already exists"})


def test_anyone_may_take_the_name_of_an_inactive_room(srv):
    # room_repository.go:55-63: only an active room holds its name; there is no owner check.
    owner, _ = user(srv)
    other, other_id = user(srv)
    name = f"take-{uuid.uuid4().hex[:8]}"
    first = create(srv, owner, name)
    assert srv.request("POST", f"/_dev/rooms/{name}/deactivate").status == 200
    taken = create(srv, other, name)
    assert taken["createdBy"] == other_id and taken["id"] != first["id"]
    r = join(srv, owner, name)  # the former owner is now an outsider of a private room
    assert (r.status, r.json()) == (403, {"error": "This room is private"})


def test_someone_in_livekit_keeps_a_room_active(fast):
    srv = fast
    owner, _ = user(srv)
    name = f"busy-{uuid.uuid4().hex[:8]}"
    room = create(srv, owner, name)
    r = srv.request("POST", f"/_dev/rooms/{name}/scenario", raw=f"room {name}\nat 0 join bob\n".encode())
    assert r.status == 200, r
    srv.wait_for(lambda st: any(p["identity"] == "bob" for rm in st["rooms"] if rm["name"] == name
                                for p in rm["participants"]), 10, "bob in LiveKit")
    # Well past the 3 s age and the 1 s empty time, the room stays active while bob is in it.
    until = time.monotonic() + 4
    while time.monotonic() < until:
        assert room_state(srv, room["id"])["isActive"] is True
        time.sleep(0.2)
    assert srv.request("POST", f"/_dev/rooms/{name}/kick/bob").status == 200
    wait_inactive(srv, room["id"])


def test_deleting_a_room_archives_it_and_ends_the_meeting(srv):
    owner, _ = user(srv)
    other, _ = user(srv)
    name = f"gone-{uuid.uuid4().hex[:8]}"
    room = create(srv, owner, name, isPublic=True)
    r = srv.request("DELETE", f"/api/room/{room['id']}", token=owner)
    assert (r.status, r.json()) == (202, {"message": "Room deletion queued"})
    archived = room_state(srv, room["id"])
    assert archived["isActive"] is False and "deletedAt" in archived
    assert join(srv, owner, name).json()["status"] == "archived_owned"
    assert join(srv, other, name).status == 410
    assert name not in [r["name"] for r in srv.request("GET", "/api/room/list", token=owner).json()]
    again = create(srv, owner, name)
    assert again["id"] != room["id"]


# MARK: - private rooms, capacity, rejoin tokens

def test_private_rooms_admit_the_creator_and_active_participants_only(srv):
    owner, owner_id = user(srv)
    member, member_id = user(srv)
    name = f"priv-{uuid.uuid4().hex[:8]}"
    room = create(srv, owner, name)
    assert join(srv, owner, name).status == 200
    assert rejoin_token(srv, owner, name).status == 200
    r = join(srv, member, name)
    assert (r.status, r.json()) == (403, {"error": "This room is private"})
    r = rejoin_token(srv, member, name)
    assert (r.status, r.json()) == (403, {"error": "This room is private"})
    settings = {"allowChat": True, "allowVideo": True, "allowAudio": True, "requireApproval": True}
    assert srv.request("PUT", f"/api/room/{room['id']}/settings", {"settings": settings}, token=owner).status == 200
    r = join(srv, member, name)
    assert (r.status, r.json()) == (403, {"error": "This room requires approval to join"})
    r = rejoin_token(srv, member, name)  # refresh-token has no approval text (room.go:831-833)
    assert (r.status, r.json()) == (403, {"error": "This room is private"})

    # Public for a moment: the member joins and so has an active row; private again.
    srv.request("PUT", f"/api/room/{room['id']}/settings", {"isPublic": True}, token=owner)
    first = join(srv, member, name)
    assert first.status == 200
    srv.request("PUT", f"/api/room/{room['id']}/settings", {"isPublic": False}, token=owner)
    assert join(srv, member, name).status == 200
    fresh = rejoin_token(srv, member, name)
    assert fresh.status == 200 and set(fresh.json()) == {"token"}

    # The member's LiveKit session ends: participant_left makes the row inactive, access is gone.
    from .lkclient import LKClient

    async def visit() -> None:
        c = LKClient(first.json()["livekitHost"], first.json()["token"])
        try:
            await c.connect()
            await c.wait_for(lambda: c.answers_sent, 15, "answer")
        finally:
            await c.leave()
    asyncio.run(asyncio.wait_for(visit(), 60))
    srv.wait_for(lambda st: any(p["roomId"] == room["id"] and p["userId"] == member_id and not p["isActive"]
                                for p in st["roomParticipants"]), 10, "member row inactive")
    r = join(srv, member, name)
    assert (r.status, r.json()) == (403, {"error": "This room requires approval to join"})
    r = rejoin_token(srv, member, name)
    assert (r.status, r.json()) == (403, {"error": "This room is private"})
    assert row(srv, room["id"], owner_id)["isActive"] is True


def test_capacity_counts_active_participants_only(srv):
    owner, _ = user(srv)
    b, _ = user(srv)
    c, _ = user(srv)
    name = f"cap-{uuid.uuid4().hex[:8]}"
    room = create(srv, owner, name, isPublic=True, maxParticipants=2)
    assert join(srv, b, name).status == 200
    r = join(srv, c, name)
    assert (r.status, r.json()) == (403, {"error": "room is full"})
    assert rejoin_token(srv, b, name).status == 200  # no enrolment, no capacity check
    # Bedrud counts before it looks for the caller's row (room_repository.go:240-251), so even
    # a member's second /room/join is refused while the room is full; refresh-token is not.
    r = join(srv, b, name)
    assert (r.status, r.json()) == (403, {"error": "room is full"})
    srv.request("PUT", f"/api/room/{room['id']}/settings", {"maxParticipants": 3}, token=owner)
    assert join(srv, c, name).status == 200


def test_refresh_token_answers(srv):
    owner, owner_id = user(srv, "Olga")
    name = f"rt-{uuid.uuid4().hex[:8]}"
    create(srv, owner, name, isPublic=True)
    r = rejoin_token(srv, owner, f"  {name.upper()} ")
    assert r.status == 200 and set(r.json()) == {"token"}
    claims = jwt_claims(r.json()["token"])
    assert (claims["sub"], claims["name"], claims["exp"] - claims["nbf"]) == (owner_id, "Olga", 2 * 3600)
    assert claims["video"] == {"roomJoin": True, "room": name, "canUpdateOwnMetadata": True}
    assert claims["metadata"] == '{"accesses":["user"]}'
    for body, status, message in (({"roomName": ""}, 400, "roomName required"),
                                  ({}, 400, "roomName required"),
                                  ({"roomName": "no-such-room"}, 404, "Room not found")):
        r = srv.request("POST", "/api/room/refresh-token", body, token=owner)
        assert (r.status, r.json()) == (status, {"error": message})
    r = srv.request("POST", "/api/room/refresh-token", raw=b"{", content_type="application/json", token=owner)
    assert (r.status, r.json()) == (400, {"error": "Invalid body"})
    r = srv.request("POST", "/api/room/refresh-token", {"roomName": name})
    assert (r.status, r.json()) == (401, {"error": "Missing authorization"})


def test_a_banned_member_gets_no_token(srv):
    owner, _ = user(srv)
    member, member_id = user(srv)
    name = f"ban-{uuid.uuid4().hex[:8]}"
    room = create(srv, owner, name, isPublic=True)
    assert join(srv, member, name).status == 200
    r = srv.request("POST", f"/_dev/rooms/{name}/scenario",
                    raw=f"room {name}\nat 0 join {member_id}\n".encode())
    assert r.status == 200, r
    srv.wait_for(lambda st: any(p["identity"] == member_id for rm in st["rooms"] if rm["name"] == name
                                for p in rm["participants"]), 10, "member in LiveKit")
    assert srv.request("POST", f"/api/room/{room['id']}/ban/{member_id}", token=owner).json() == {"status": "success"}
    for call in (join, rejoin_token):
        r = call(srv, member, name)
        assert (r.status, r.json()) == (403, {"error": "you are banned from this room"})
