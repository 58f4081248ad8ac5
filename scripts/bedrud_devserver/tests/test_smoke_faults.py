"""The fault switches `bedrud-bot smoke`'s tests use (POST /_dev/config): refuseTokens,
refuseUpgrades (true: 400, or the status to answer), badFingerprint. Each is off by
default, on when set, off again after."""
from __future__ import annotations

import asyncio

import aiohttp
import pytest

from ..sdp import edit_description, wrong_fingerprint
from .helpers import DevServer
from .test_signal import guest, new_room

OWNER = ("owner@example.com", "owner-password-1")


@pytest.fixture(scope="module")
def srv():
    s = DevServer("--seed-user", f"{OWNER[0]}:{OWNER[1]}:Owner")
    yield s
    s.stop()


def ws_status(url: str) -> int:
    """The HTTP status of a WebSocket upgrade to `url` (101 when it is accepted)."""
    async def go() -> int:
        async with aiohttp.ClientSession() as s:
            try:
                ws = await s.ws_connect(url, timeout=aiohttp.ClientWSTimeout(ws_close=5))
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status
            await ws.close()
            return 101
    return asyncio.run(asyncio.wait_for(go(), 30))


def rtc_url(join: dict) -> str:
    return join["livekitHost"].replace("http", "ws", 1) + "/rtc?access_token=" + join["token"]


def test_refuse_tokens_makes_validate_and_upgrade_answer_401(srv):
    name, _, _ = new_room(srv)
    join = guest(srv, name)
    validate = join["livekitHost"] + "/rtc/validate?access_token=" + join["token"]
    assert srv.request("GET", validate[len(srv.url):]).status == 200
    assert srv.request("POST", "/_dev/config", {"refuseTokens": True}).status == 200
    try:
        r = srv.request("GET", validate[len(srv.url):])
        assert (r.status, r.text) == (401, "invalid authorization token: signature is invalid")
        assert ws_status(rtc_url(join)) == 401
    finally:
        assert srv.request("POST", "/_dev/config", {"refuseTokens": False}).status == 200
    assert srv.request("GET", validate[len(srv.url):]).status == 200


def test_refuse_upgrades_answers_400_to_the_websocket_but_validate_works(srv):
    name, _, _ = new_room(srv)
    join = guest(srv, name)
    assert srv.request("POST", "/_dev/config", {"refuseUpgrades": True}).status == 200
    try:
        assert ws_status(rtc_url(join)) == 400
        assert srv.request("GET", (join["livekitHost"] + "/rtc/validate?access_token=" + join["token"])[len(srv.url):]).status == 200
    finally:
        assert srv.request("POST", "/_dev/config", {"refuseUpgrades": False}).status == 200
    assert ws_status(rtc_url(join)) == 101


def ws_refusal(url: str) -> tuple[int, str]:
    """The status and body of a refused WebSocket upgrade to `url`."""
    async def go() -> tuple[int, str]:
        async with aiohttp.ClientSession() as s:
            headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                       "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
            async with s.get(url.replace("ws", "http", 1), headers=headers) as r:
                return r.status, await r.text()
    return asyncio.run(asyncio.wait_for(go(), 30))


@pytest.mark.parametrize("status,text", [
    (400, "Bad Request"),
    (403, "no permissions to access the room"),
    (404, "requested room does not exist"),
    (500, "could not start the session"),
    (503, "node has exceeded its configured limit"),
])
def test_refuse_upgrades_with_a_status_answers_it_with_livekits_text(srv, status, text):
    name, _, _ = new_room(srv)
    join = guest(srv, name)
    assert srv.request("POST", "/_dev/config", {"refuseUpgrades": status}).status == 200
    try:
        assert ws_refusal(rtc_url(join)) == (status, text)
    finally:
        assert srv.request("POST", "/_dev/config", {"refuseUpgrades": False}).status == 200
    assert ws_status(rtc_url(join)) == 101


def test_refuse_upgrades_401_quotes_the_token_like_a_verifier_error(srv):
    name, _, _ = new_room(srv)
    join = guest(srv, name)
    assert srv.request("POST", "/_dev/config", {"refuseUpgrades": 401}).status == 200
    try:
        assert ws_refusal(rtc_url(join)) == (401, "invalid authorization token: could not verify " + join["token"])
    finally:
        assert srv.request("POST", "/_dev/config", {"refuseUpgrades": False}).status == 200


@pytest.mark.parametrize("value", ["yes", 200, 101, 600, 1.5, None])
def test_refuse_upgrades_rejects_what_is_not_a_switch_or_a_refusal(srv, value):
    r = srv.request("POST", "/_dev/config", {"refuseUpgrades": value})
    assert r.status == 400 and "refuseUpgrades must be true, false or an HTTP status from 400 to 599" in r.text


def test_bad_fingerprint_switch_and_its_sdp_edit(srv):
    r = srv.request("POST", "/_dev/config", {"badFingerprint": "yes"})
    assert r.status == 400 and "badFingerprint must be true or false" in r.text
    assert srv.request("POST", "/_dev/config", {"badFingerprint": True}).status == 200
    assert srv.request("POST", "/_dev/config", {"badFingerprint": False}).status == 200
    line = "a=fingerprint:sha-256 0A:1B:F0"
    assert wrong_fingerprint(line) == "a=fingerprint:sha-256 F5:E4:0F"
    sdp = "v=0\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\n" + line + "\r\n"
    assert line in edit_description(sdp, {}).sdp
    bad = edit_description(sdp, {}, bad_fingerprint=True).sdp
    assert "a=fingerprint:sha-256 F5:E4:0F" in bad and line not in bad
