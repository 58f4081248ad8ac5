"""LiveKit signalling and media on loopback, with the aiortc test client (lkclient.py).

These exercise what the Swift bot does (v0, dual PC, subscriber primary) and the
bad inputs a real LiveKit server must survive.
"""
from __future__ import annotations

import asyncio
import json
import time
import uuid

import aiohttp
import pytest
from livekit.protocol import models as lkm
from livekit.protocol import rtc as lkr

from .. import jwt_hs256, patches
from ..config import ServerConfig
from ..media import ScriptedAudioTrack, tone_clip
from ..sids import check_sid
from .helpers import DevServer, jwt_claims
from .lkclient import LKClient, dominant_frequency, rms

patches.apply(["127.0.0.1"])

OWNER = ("owner@example.com", "owner-password-1")


@pytest.fixture(scope="module")
def srv():
    s = DevServer("--seed-user", f"{OWNER[0]}:{OWNER[1]}:Owner")
    yield s
    s.stop()


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, 120))


def owner_token(srv: DevServer) -> str:
    return srv.login(*OWNER)["tokens"]["accessToken"]


def new_room(srv: DevServer, scenario: str = "", public: bool = True) -> tuple[str, str, str]:
    """(room name, room id, owner's Bedrud token). A scenario is started in it if given."""
    token = owner_token(srv)
    name = f"r-{uuid.uuid4().hex[:10]}"
    room = srv.request("POST", "/api/room/create", {"name": name, "isPublic": public}, token=token).json()
    if scenario:
        r = srv.request("POST", f"/_dev/rooms/{name}/scenario", raw=scenario.encode())
        assert r.status == 200, r
    return name, room["id"], token


def guest(srv: DevServer, room: str, name: str = "Guest") -> dict:
    r = srv.request("POST", "/api/room/guest-join", {"roomName": room, "guestName": name})
    assert r.status == 200, r
    return r.json()


def lk_token(room: str, identity: str = "tester", **overrides) -> str:  # type: ignore[no-untyped-def]
    cfg = ServerConfig()
    now = int(time.time())
    claims = {"iss": cfg.lk_api_key, "sub": identity, "nbf": now, "exp": now + 600, "name": identity,
              "video": {"roomJoin": True, "room": room}}
    claims.update(overrides)
    secret = claims.pop("_secret", cfg.lk_api_secret)
    return jwt_hs256.encode(claims, secret)


def participants(state: dict, room: str) -> dict:
    rooms = {r["name"]: r for r in state["rooms"]}
    return {p["identity"]: p for p in rooms[room]["participants"]} if room in rooms else {}


# MARK: - before the upgrade

def test_validate_and_handshake_errors(srv):
    name, _, _ = new_room(srv)
    base = "/livekit/rtc/validate"

    def check(query: str = "", headers=None):  # type: ignore[no-untyped-def]
        return srv.request("GET", f"{base}?{query}", headers=headers)

    assert (check().status, check().text) == (401, "permissions denied")
    assert check("access_token=abc").status == 401 and check("access_token=abc").text.startswith("invalid authorization token")
    assert check(f"access_token={lk_token(name, iss='other')}").text == "invalid API key"
    bad_sig = check(f"access_token={lk_token(name, _secret='x' * 40)}")
    assert bad_sig.status == 401 and bad_sig.text.startswith("invalid authorization token")
    expired = check(f"access_token={lk_token(name, exp=int(time.time()) - 120)}")
    assert expired.status == 401 and expired.text.startswith("invalid authorization token")
    no_join = check(f"access_token={lk_token(name, video={'room': name})}")
    assert (no_join.status, no_join.text) == (401, "permissions denied")
    missing = check(f"access_token={lk_token('no-such-room')}")
    assert (missing.status, missing.text) == (404, "requested room does not exist")
    header = check(headers={"Authorization": lk_token(name)})
    assert (header.status, header.text) == (401, "invalid authorization header. Must start with Bearer ")
    assert check(headers={"Authorization": "Bearer " + lk_token(name)}).text == "success"
    assert srv.request("GET", f"/rtc/validate?access_token={lk_token(name)}").text == "success"
    for path in ("/livekit/rtc/v1", "/rtc/v1", "/livekit/rtc/v1/validate"):
        assert srv.request("GET", f"{path}?access_token={lk_token(name)}").status == 404
    plain_get = srv.request("GET", f"/livekit/rtc?access_token={lk_token(name)}")
    assert (plain_get.status, plain_get.body) == (404, b"")


def test_websocket_handshake_fails_with_the_validate_status(srv):
    name, _, _ = new_room(srv)

    async def go() -> int:
        client = LKClient(srv.url + "/livekit", lk_token(name, _secret="y" * 40))
        try:
            await client.connect(timeout=10)
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status
        finally:
            await client.close()
        return 0

    assert run(go()) == 401


# MARK: - join, SDP, media

def test_join_offer_media_and_stats(srv):
    name, _, _ = new_room(srv, "at 0s join alice name=Alice\nat 0s tone alice 523Hz 30s amplitude=0.25\n")
    join = guest(srv, name)

    async def go() -> None:
        c = LKClient(join["livekitHost"], join["token"], header_auth=True)
        try:
            first = await c.connect()
            assert first.WhichOneof("message") == "join"
            j = first.join
            check_sid(j.room.sid, "RM")
            check_sid(j.participant.sid, "PA")
            assert j.room.name == name and j.subscriber_primary and (j.ping_interval, j.ping_timeout) == (5, 15)
            assert j.server_info.protocol == 16 and j.participant.identity == jwt_claims(join["token"])["sub"]
            assert j.participant.permission.can_update_metadata  # guest-join tokens allow it since v0.12.0 (room.go:680-684)
            others = {p.identity: p for p in j.other_participants}
            alice = others["alice"]
            check_sid(alice.sid, "PA")
            assert alice.state == lkm.ParticipantInfo.ACTIVE and alice.name == "Alice"
            track = alice.tracks[0]
            check_sid(track.sid, "TR")
            assert (track.type, track.source, track.mime_type) == (lkm.TrackType.AUDIO, lkm.TrackSource.MICROPHONE, "audio/opus")

            offer = (await c.wait_for(lambda: c.of("offer"), 10, "offer"))[0]
            sdp = offer.sdp
            assert "a=rtpmap:111 opus/48000/2" in sdp and "a=fmtp:111 minptime=10;useinbandfec=1" in sdp
            stream = f"{alice.sid}|{track.sid}"
            assert f"cname:{stream}" in sdp and f"msid:{stream} {track.sid}" in sdp
            assert "sdes:mid" not in sdp and "a=candidate" not in sdp and "m=application 9 " in sdp
            assert dict(offer.mid_to_track_id) == {"0": track.sid} and offer.id == 1
            trickles = await c.wait_for(lambda: c.of("trickle"), 10, "trickle")
            init = json.loads(trickles[0].candidateInit)
            assert set(init) == {"candidate", "sdpMid", "sdpMLineIndex", "usernameFragment"}
            assert init["candidate"].startswith("candidate:") and isinstance(init["sdpMid"], str)
            assert init["usernameFragment"] is None and trickles[0].target == lkr.SignalTarget.SUBSCRIBER
            # The end-of-candidates trickle comes after the others, possibly later than the
            # first: wait for it rather than assume it is already in.
            finals = await c.wait_for(lambda: [t for t in c.of("trickle") if t.final], 10, "final trickle")
            assert len(finals) == 1 and c.of("trickle")[-1].final
            assert c.of("refresh_token") and jwt_claims(c.of("refresh_token")[0])["sub"] == j.participant.identity

            await c.wait_for(lambda: len(c.audio.get(track.sid, [])) > 100, 20, "2 s of audio")
            x = c.samples(track.sid)[-48000:]
            assert abs(dominant_frequency(x) - 523) < 3 and 0.15 < rms(x) < 0.2
            me = await c.wait_for(lambda: [u for m in c.of("update") for u in m.participants
                                           if u.identity == j.participant.identity and u.state == lkm.ParticipantInfo.ACTIVE],
                                  10, "own ACTIVE update")
            assert me

            await c.send(lkr.SignalRequest(ping_req=lkr.Ping(timestamp=1234, rtt=5)))
            await c.send(lkr.SignalRequest(ping=99))
            pong = await c.wait_for(lambda: c.of("pong_resp"), 5, "pong_resp")
            assert pong[0].last_ping_timestamp == 1234 and abs(pong[0].timestamp - time.time() * 1000) < 5000
            assert (await c.wait_for(lambda: c.of("pong"), 5, "pong"))[0] > 1e12

            def subscription():  # type: ignore[no-untyped-def]
                me = participants(srv.state(), name).get(j.participant.identity, {})
                subs = me.get("subscriptions", [])
                return subs[0] if subs and subs[0]["rtcp_receiver_reports"] > 0 else None
            deadline = time.monotonic() + 20
            sub = None
            while sub is None and time.monotonic() < deadline:
                sub = await asyncio.get_running_loop().run_in_executor(None, subscription)
                await asyncio.sleep(0.3)
            assert sub and sub["packetsSent"] > 50 and sub["publisher"] == "alice", sub
            speakers = [s for m in c.of("speakers_changed") for s in m.speakers]
            assert speakers and all(check_sid(s.sid, "PA") for s in speakers)
        finally:
            await c.leave()

    run(go())


def test_publish_forward_and_client_chat(srv):
    name, _, _ = new_room(srv)
    a_join, b_join = guest(srv, name, "A"), guest(srv, name, "B")

    async def go() -> None:
        listener = LKClient(b_join["livekitHost"], b_join["token"])
        speaker = LKClient(a_join["livekitHost"], a_join["token"])
        mic = ScriptedAudioTrack()
        mic.play(tone_clip(330.0, 20.0, 0.3))
        try:
            await listener.connect()
            await speaker.connect()
            info = await speaker.publish(mic)
            check_sid(info.sid, "TR")
            await listener.wait_for(lambda: len(listener.audio.get(info.sid, [])) > 100, 20, "forwarded audio")
            x = listener.samples(info.sid)[-48000:]
            assert abs(dominant_frequency(x) - 330) < 3 and rms(x) > 0.15
            await speaker.send_chat("hi everyone")
            got = await listener.wait_for(lambda: [p for _, p in listener.data if p.user.topic == "chat"], 10, "chat")
            assert got[0].participant_identity == speaker.of("join")[0].participant.identity
            assert got[0].participant_sid == speaker.sid and json.loads(got[0].user.payload)["message"] == "hi everyone"
            state = participants(srv.state(), name)
            me = state[speaker.of("join")[0].participant.identity]
            assert me["tracks"][0]["sid"] == info.sid and me["publisherState"] == "connected"
            assert srv.state()["rooms"] and any(d["topic"] == "chat" for r in srv.state()["rooms"] for d in r["data"])
        finally:
            await speaker.leave()
            left = await listener.wait_for(
                lambda: [u for m in listener.of("update") for u in m.participants
                         if u.state == lkm.ParticipantInfo.DISCONNECTED], 10, "speaker DISCONNECTED")
            assert left[0].disconnect_reason == lkm.DisconnectReason.CLIENT_INITIATED
            await listener.leave()
            mic.stop()

    run(go())


# MARK: - leave reasons

def test_rest_kick_mute_and_delete_reach_the_client(srv):
    name, room_id, owner = new_room(srv)
    a_join, b_join = guest(srv, name, "A"), guest(srv, name, "B")

    async def go() -> None:
        a = LKClient(a_join["livekitHost"], a_join["token"])
        b = LKClient(b_join["livekitHost"], b_join["token"])
        mic = ScriptedAudioTrack()
        try:
            await a.connect()
            await b.connect()
            info = await a.publish(mic)
            a_id = a.of("join")[0].participant.identity
            loop = asyncio.get_running_loop()
            r = await loop.run_in_executor(None, lambda: srv.request("POST", f"/api/room/{room_id}/mute/{a_id}", token=owner))
            assert r.json() == {"status": "success"}
            mute = await a.wait_for(lambda: a.of("mute"), 10, "server mute")
            assert mute[0].sid == info.sid and mute[0].muted
            await b.wait_for(lambda: [t for m in b.of("update") for u in m.participants for t in u.tracks
                                      if t.sid == info.sid and t.muted], 10, "muted update")
            r = await loop.run_in_executor(None, lambda: srv.request("POST", f"/api/room/{room_id}/kick/{a_id}", token=owner))
            assert r.json() == {"status": "success"}
            leave = (await a.wait_for(lambda: a.of("leave"), 10, "leave"))[0]
            assert leave.reason == lkm.DisconnectReason.PARTICIPANT_REMOVED and leave.action == lkr.LeaveRequest.DISCONNECT
            await a.wait_for(lambda: a.closed_by_server.is_set(), 10, "socket closed")
            kick_msg = await b.wait_for(lambda: [p for _, p in b.data if p.user.topic == "system"], 10, "system kick")
            assert json.loads(kick_msg[0].user.payload)["event"] == "kick" and kick_msg[0].participant_identity == ""
            assert a_id not in participants(srv.state(), name)
            r = await loop.run_in_executor(None, lambda: srv.request("DELETE", f"/api/room/{room_id}", token=owner))
            assert (r.status, r.json()) == (202, {"message": "Room deletion queued"})
            leave = (await b.wait_for(lambda: b.of("leave"), 10, "leave"))[0]
            assert leave.reason == lkm.DisconnectReason.ROOM_DELETED
        finally:
            await a.close()
            await b.close()
            mic.stop()

    run(go())


def test_duplicate_identity_replaces_the_older_session(srv):
    name, _, _ = new_room(srv)
    token = lk_token(name, identity="twin")

    async def go() -> None:
        first, second = LKClient(srv.url + "/livekit", token), LKClient(srv.url + "/livekit", token)
        try:
            await first.connect()
            await first.wait_for(lambda: first.answers_sent, 10, "answer")
            await second.connect()
            try:
                leave = (await first.wait_for(lambda: first.of("leave"), 10, "leave"))[0]
            except AssertionError as exc:
                raise AssertionError(f"{exc}; devserver log: {srv.stderr_tail()}") from None
            assert leave.reason == lkm.DisconnectReason.DUPLICATE_IDENTITY
            p = participants(srv.state(), name)["twin"]
            assert p["sid"] == second.sid != first.sid
        finally:
            await first.close()
            await second.leave()

    run(go())


def test_a_client_that_never_answers_gets_join_failure(srv):
    name, _, _ = new_room(srv)
    assert srv.request("POST", "/_dev/config", {"joinTimeout": "2s"}).status == 200

    async def go() -> None:
        c = LKClient(srv.url + "/livekit", lk_token(name, identity="silent"), answer_offers=False)
        try:
            await c.connect()
            leave = (await c.wait_for(lambda: c.of("leave"), 15, "JOIN_FAILURE"))[0]
            assert leave.reason == lkm.DisconnectReason.JOIN_FAILURE and leave.action == lkr.LeaveRequest.DISCONNECT
            assert "silent" not in participants(srv.state(), name)
        finally:
            await c.close()

    try:
        run(go())
    finally:
        srv.request("POST", "/_dev/config", {"joinTimeout": "60s"})


# MARK: - resume and dropped connections

def test_resume_and_unknown_session(srv):
    name, _, _ = new_room(srv, "at 0s join alice\nat 0s tone alice 440Hz 60s\n")

    async def go() -> None:
        c = LKClient(srv.url + "/livekit", lk_token(name, identity="resumer"))
        stranger = LKClient(srv.url + "/livekit", lk_token(name, identity="stranger"))
        try:
            await c.connect()
            track = c.of("join")[0].other_participants[0].tracks[0].sid
            await c.wait_for(lambda: len(c.audio.get(track, [])) > 20, 20, "audio")
            old_ws = c.ws
            await old_ws.close()
            await asyncio.sleep(0.2)
            assert "resumer" in participants(srv.state(), name), "an ACTIVE participant survives a signal loss"
            first = await c.connect(reconnect=True)
            assert first.WhichOneof("message") == "reconnect"
            assert first.reconnect.server_info.protocol == 16
            before = len(c.audio[track])
            await c.wait_for(lambda: len(c.of("offer")) >= 2, 10, "re-offer after resume")
            await c.wait_for(lambda: len(c.audio[track]) > before + 50, 20, "audio after resume")
            stranger.sid = "PA_unknownsess1"
            leave = await stranger.connect(reconnect=True)
            assert leave.WhichOneof("message") == "leave"
            assert leave.leave.reason == lkm.DisconnectReason.STATE_MISMATCH
            assert leave.leave.action == lkr.LeaveRequest.RECONNECT and leave.leave.can_reconnect
        finally:
            await c.leave()
            await stranger.close()

    run(go())


def test_resume_of_a_closed_peer_connection_is_refused_at_once(srv):
    # LiveKit v1.10.1 pkg/service/roommanager.go:313-343: a participant whose session
    # cannot continue gets leave STATE_MISMATCH / RECONNECT on resume, so the client
    # rejoins at once (before: a `reconnect`, then InvalidStateError in _negotiate and
    # a client waiting for an offer that never came).
    name, _, _ = new_room(srv, "at 0s join alice\nat 0s tone alice 440Hz 60s\n")

    async def go() -> None:
        c = LKClient(srv.url + "/livekit", lk_token(name, identity="closer"))
        try:
            await c.connect()
            track = c.of("join")[0].other_participants[0].tracks[0].sid
            await c.wait_for(lambda: len(c.audio.get(track, [])) > 20, 20, "audio")
            # The client's PC ends (DTLS close_notify): aiortc on the server closes its own.
            await c.sub_pc.close()
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, lambda: srv.wait_for(
                lambda st: participants(st, name).get("closer", {}).get("subscriberState") == "closed", 15, "server PC closed"))
            await c.ws.close()
            first = await c.connect(reconnect=True)
            assert first.WhichOneof("message") == "leave", first
            assert first.leave.reason == lkm.DisconnectReason.STATE_MISMATCH
            assert first.leave.action == lkr.LeaveRequest.RECONNECT and first.leave.can_reconnect
            await loop.run_in_executor(None, lambda: srv.wait_for(
                lambda st: "closer" not in participants(st, name), 10, "the ghost removed"))
        finally:
            await c.close()

    run(go())


def test_drop_connection_blocks_signal_and_media_for_a_while(srv):
    name, _, _ = new_room(srv, "at 0s join alice\nat 0s tone alice 440Hz 60s\n")

    async def go() -> None:
        c = LKClient(srv.url + "/livekit", lk_token(name, identity="dropper"))
        try:
            await c.connect()
            track = c.of("join")[0].other_participants[0].tracks[0].sid
            await c.wait_for(lambda: len(c.audio.get(track, [])) > 20, 20, "audio")
            loop = asyncio.get_running_loop()
            r = await loop.run_in_executor(None, lambda: srv.request("POST", f"/_dev/rooms/{name}/drop/dropper",
                                                                    {"seconds": 3}))
            assert r.status == 200
            await c.wait_for(lambda: c.closed_by_server.is_set(), 10, "signal cut")
            assert not c.of("leave"), "a network drop sends no leave"
            with pytest.raises((aiohttp.WSServerHandshakeError, aiohttp.ClientError, asyncio.TimeoutError)):
                await c.connect(reconnect=True, timeout=5)
            await loop.run_in_executor(None, lambda: srv.wait_for(
                lambda st: participants(st, name)["dropper"]["faults"]["blackholed"] > 0, 10, "media blackholed"))
            deadline = time.monotonic() + 15
            while True:
                try:
                    first = await c.connect(reconnect=True, timeout=5)
                    break
                except (aiohttp.ClientError, asyncio.TimeoutError):
                    assert time.monotonic() < deadline, "resume never accepted after the drop"
                    await asyncio.sleep(0.5)
            assert first.WhichOneof("message") == "reconnect"
            before = len(c.audio[track])
            await c.wait_for(lambda: len(c.audio[track]) > before + 50, 20, "audio after the drop")
        finally:
            await c.leave()

    run(go())


# MARK: - bad input

def test_garbage_frames_close_only_that_connection(srv):
    name, _, _ = new_room(srv, "at 0s join alice\nat 0s tone alice 440Hz 60s\n")

    async def go() -> None:
        good = LKClient(srv.url + "/livekit", lk_token(name, identity="good"))
        try:
            await good.connect()
            track = good.of("join")[0].other_participants[0].tracks[0].sid
            async with aiohttp.ClientSession() as session:
                for i, junk in enumerate([b"\xff\xff\xff\xff", b"\x0a\xff", "not json {", b"\x12" * 3]):
                    ws = await session.ws_connect(LKClient(srv.url + "/livekit", lk_token(name, identity=f"bad{i}")).url())
                    first = lkr.SignalResponse.FromString((await ws.receive(timeout=10)).data)
                    assert first.WhichOneof("message") == "join"
                    if isinstance(junk, str):
                        await ws.send_str(junk)
                    else:
                        await ws.send_bytes(junk)
                    deadline = time.monotonic() + 10
                    while not ws.closed:
                        msg = await ws.receive(timeout=max(0.1, deadline - time.monotonic()))
                        if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                            break
                    await ws.close()
                # A text frame with valid JSON switches replies to JSON, like LiveKit.
                ws = await session.ws_connect(LKClient(srv.url + "/livekit", lk_token(name, identity="jsonc")).url())
                await ws.receive(timeout=10)
                await ws.send_str(json.dumps({"pingReq": {"timestamp": "77"}}))
                deadline = time.monotonic() + 10
                reply = None
                while reply is None and time.monotonic() < deadline:
                    msg = await ws.receive(timeout=10)
                    if msg.type == aiohttp.WSMsgType.TEXT and "pongResp" in msg.data:
                        reply = json.loads(msg.data)
                assert reply["pongResp"]["lastPingTimestamp"] == "77"
                await ws.close()
            # Odd but well-formed requests on the good connection are shrugged off.
            for init in ("not json", "[]", json.dumps({"candidate": "candidate:1 1 udp 1 x.local 9 typ host",
                                                       "sdpMid": "0", "sdpMLineIndex": 0}),
                         json.dumps({"candidate": "candidate:garbage", "sdpMid": 5})):
                await good.send(lkr.SignalRequest(trickle=lkr.TrickleRequest(candidateInit=init, target=1)))
            await good.send(lkr.SignalRequest(answer=lkr.SessionDescription(type="answer", sdp="v=0", id=99)))
            await good.send(lkr.SignalRequest(mute=lkr.MuteTrackRequest(sid="TR_doesnotexist", muted=True)))
            await good.send(lkr.SignalRequest(subscription=lkr.UpdateSubscription(track_sids=["TR_nope"], subscribe=True)))
            await good.wait_for(lambda: good.of("subscription_response"), 10, "subscription_response")
            before = len(good.audio[track])
            await good.wait_for(lambda: len(good.audio[track]) > before + 50, 20, "audio still flowing")
            assert srv.state()["counters"]["bad_frames"] >= 4
            assert srv.request("GET", "/api/auth/settings").status == 200
        finally:
            await good.leave()

    run(go())


def test_faults_on_the_media_path(srv):
    name, _, _ = new_room(srv, "at 0s join alice\nat 0s tone alice 440Hz 60s\n")

    async def go() -> None:
        c = LKClient(srv.url + "/livekit", lk_token(name, identity="lossy"))
        try:
            loop = asyncio.get_running_loop()
            r = await loop.run_in_executor(None, lambda: srv.request(
                "POST", f"/_dev/rooms/{name}/faults", {"loss": "20%", "reorder": "10%", "duplicate": "10%", "jitter": "20ms"}))
            assert r.status == 200 and r.json()["faults"]["loss"] == 0.2
            bad = await loop.run_in_executor(None, lambda: srv.request("POST", f"/_dev/rooms/{name}/faults", {"loss": "120%"}))
            assert bad.status == 400
            await c.connect()
            track = c.of("join")[0].other_participants[0].tracks[0].sid
            await c.wait_for(lambda: len(c.audio.get(track, [])) > 100, 30, "audio despite faults")
            f = participants(srv.state(), name)["lossy"]["faults"]
            assert f["lost"] > 0 and f["duplicated"] > 0 and f["reordered"] > 0 and f["submitted"] > 100
            assert 0.1 < f["lost"] / f["submitted"] < 0.3
            quality = await c.wait_for(lambda: c.of("connection_quality"), 15, "connection quality")
            assert quality[0].updates[0].quality == lkm.ConnectionQuality.POOR
        finally:
            await c.leave()

    run(go())


def test_metadata_updates_follow_the_grant_and_tokens_refresh(srv):
    name, _, owner = new_room(srv)
    member = srv.request("POST", "/api/room/join", {"roomName": name}, token=owner).json()
    assert srv.request("POST", "/_dev/config", {"refreshInterval": "1s"}).status == 200

    async def go() -> None:
        a = LKClient(member["livekitHost"], member["token"])
        # A grant without canUpdateOwnMetadata (guest-join grants it since v0.12.0, room.go:680-684).
        b = LKClient(member["livekitHost"], lk_token(name, identity="visitor"))
        try:
            await a.connect()
            await b.connect()
            await a.send(lkr.SignalRequest(update_metadata=lkr.UpdateParticipantMetadata(
                metadata='{"accesses":["user"],"deafened":true}', request_id=7)))
            ok = await a.wait_for(lambda: [r for r in a.of("request_response") if r.request_id == 7], 10, "response")
            assert ok[0].reason == lkr.RequestResponse.OK
            seen = await b.wait_for(lambda: [u for m in b.of("update") for u in m.participants
                                             if "deafened" in u.metadata], 10, "metadata update")
            assert seen[0].identity == a.of("join")[0].participant.identity
            await b.send(lkr.SignalRequest(update_metadata=lkr.UpdateParticipantMetadata(metadata="{}", request_id=8)))
            denied = await b.wait_for(lambda: [r for r in b.of("request_response") if r.request_id == 8], 10, "denial")
            assert denied[0].reason == lkr.RequestResponse.NOT_ALLOWED
            tokens = await a.wait_for(lambda: len(a.of("refresh_token")) >= 3, 10, "periodic refresh tokens")
            claims = jwt_claims(a.of("refresh_token")[-1])
            assert claims["sub"] == a.of("join")[0].participant.identity and claims["video"]["room"] == name
            assert "deafened" in claims["metadata"] and claims["exp"] - claims["nbf"] >= 600
        finally:
            await a.leave()
            await b.leave()

    try:
        run(go())
    finally:
        srv.request("POST", "/_dev/config", {"refreshInterval": "5m"})


def test_full_livekit_room_answers_join_failure_first(srv):
    token = owner_token(srv)
    name = f"full-{uuid.uuid4().hex[:8]}"
    assert srv.request("POST", "/api/room/create", {"name": name, "maxParticipants": 1}, token=token).status == 200

    async def go() -> None:
        first = LKClient(srv.url + "/livekit", lk_token(name, identity="one"))
        second = LKClient(srv.url + "/livekit", lk_token(name, identity="two"))
        try:
            assert (await first.connect()).WhichOneof("message") == "join"
            msg = await second.connect()
            assert msg.WhichOneof("message") == "leave" and msg.leave.reason == lkm.DisconnectReason.JOIN_FAILURE
            assert set(participants(srv.state(), name)) == {"one"}
        finally:
            await first.leave()
            await second.close()

    run(go())


def test_turn_credentials_are_time_limited_and_fresh_on_every_resume():
    # LiveKit >= 1.12: ice_servers in join and in each ReconnectResponse, credentials that
    # expire (TURN REST API / coturn use-auth-secret, what the Swift TURN tests run).
    import base64
    import hashlib
    import hmac
    secret, url = "turn-secret-for-tests", "turn:127.0.0.1:3478?transport=udp"
    srv = DevServer("--turn-url", url, "--turn-secret", secret, "--turn-ttl", "30s", "--seed-room", "turnroom")

    def check(server: lkr.ICEServer, identity: str, after: float) -> int:
        assert list(server.urls) == [url]
        expiry, _, name = server.username.partition(":")
        assert name == identity and after + 30 <= int(expiry) + 1 <= time.time() + 31
        assert server.credential == base64.b64encode(
            hmac.new(secret.encode(), server.username.encode(), hashlib.sha1).digest()).decode()
        return int(expiry)

    try:
        async def go() -> None:
            c = LKClient(srv.url + "/livekit", lk_token("turnroom", identity="relayed"))
            try:
                started = time.time()
                first = await c.connect()
                assert len(first.join.ice_servers) == 1
                expiry = check(first.join.ice_servers[0], "relayed", started)
                await c.wait_for(lambda: participants(srv.state(), "turnroom").get("relayed", {}).get("state") == "ACTIVE",
                                 20, "ACTIVE")
                while time.time() < expiry - 29 + 0.05:   # a second later: the next credentials expire later
                    await asyncio.sleep(0.05)
                await c.ws.close()
                resumed_at = time.time()
                again = await c.connect(reconnect=True)
                assert again.WhichOneof("message") == "reconnect"
                assert check(again.reconnect.ice_servers[0], "relayed", resumed_at) > expiry
            finally:
                await c.leave()

        asyncio.run(asyncio.wait_for(go(), 60))
    finally:
        srv.stop()
    with pytest.raises(RuntimeError, match="--turn-url needs --turn-secret"):
        DevServer("--turn-url", url)
