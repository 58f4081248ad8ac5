"""The chat image upload as Bedrud v0.12.0 does it: POST /api/room/{roomId}/chat/upload
(handlers/room.go:2657-2783) answers an image of 512,000 bytes or more with a
/uploads/chat/{room}/{user}/{sha256}.{ext} URL (storage/chat_upload.go:290-310, 383-388),
and GET of that URL (cmd/server/main.go:453-491) serves it to the room's participants only."""
from __future__ import annotations

import base64
import hashlib
import os
import struct
import uuid
import zlib

import pytest

from .helpers import DevServer


@pytest.fixture(scope="module")
def srv():
    s = DevServer()
    yield s
    s.stop()


def _user(srv: DevServer) -> tuple[str, str]:
    body = srv.register(f"u{uuid.uuid4().hex[:10]}@example.com", "Uploader")
    return body["tokens"]["accessToken"], body["user"]["id"]


def _room(srv: DevServer, token: str, allow_chat: bool = True) -> str:
    r = srv.request("POST", "/api/room/create", {"name": f"up-{uuid.uuid4().hex[:8]}", "isPublic": True,
                                                 "settings": {"allowChat": allow_chat}}, token=token)
    assert r.status == 200, r
    return r.json()["id"]


def _multipart(data: bytes, field: str = "file", filename: str = "a.png") -> tuple[bytes, str]:
    boundary = "uploadtestboundary5678"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{filename}\"\r\n"
            f"Content-Type: image/png\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def png(w: int, h: int, size: int) -> bytes:
    """A PNG with a valid IHDR (w x h) padded with random IDAT bytes to `size` bytes."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    tail = chunk(b"IEND", b"")
    return head + chunk(b"IDAT", os.urandom(size - len(head) - len(tail) - 12)) + tail


def upload(srv: DevServer, room_id: str, token: str, data: bytes):
    body, ctype = _multipart(data)
    return srv.request("POST", f"/api/room/{room_id}/chat/upload", raw=body, content_type=ctype, token=token)


def test_large_image_is_stored_and_served_back(srv):
    token, user_id = _user(srv)
    room_id = _room(srv, token)
    data = png(640, 480, 700_000)
    r = upload(srv, room_id, token, data)
    assert r.status == 200, r
    sha = hashlib.sha256(data).hexdigest()
    assert r.json() == {"kind": "image", "url": f"/uploads/chat/{room_id}/{user_id}/{sha}.png", "mime": "image/png",
                        "size": 700_000, "w": 640, "h": 480}
    got = srv.request("GET", r.json()["url"], token=token)
    assert got.status == 200 and got.headers["Content-Type"] == "image/png"
    assert hashlib.sha256(got.body).hexdigest() == sha
    # Content-addressed: the same bytes again give the same URL (chat_upload.go:274-288).
    assert upload(srv, room_id, token, data).json()["url"] == r.json()["url"]


def test_the_inline_limit_is_512000_bytes(srv):
    token, _ = _user(srv)
    room_id = _room(srv, token)
    below, at = png(10, 10, 511_999), png(10, 10, 512_000)
    j = upload(srv, room_id, token, below).json()
    assert j["url"] == "data:image/png;base64," + base64.b64encode(below).decode() and j["size"] == 511_999
    assert upload(srv, room_id, token, at).json()["url"].startswith(f"/uploads/chat/{room_id}/")


def test_who_may_read_an_upload(srv):
    token, _ = _user(srv)
    room_id = _room(srv, token)
    url = upload(srv, room_id, token, png(4, 4, 600_000)).json()["url"]
    assert srv.request("GET", url).json() == {"error": "Missing authorization"}
    outsider, _ = _user(srv)
    r = srv.request("GET", url, token=outsider)
    assert (r.status, r.json()) == (403, {"error": "Not a participant in this room"})
    # A guest who joined the room is a participant and may read it (and upload: the route has no RejectGuest).
    name = srv.request("GET", "/api/room/list", token=token).json()[0]["name"]
    guest = srv.request("POST", "/api/room/guest-join", {"roomName": name, "guestName": "Visitor"})
    assert guest.status == 200, guest
    gtoken = guest.json()["tokens"]["accessToken"]
    assert srv.request("GET", url, token=gtoken).status == 200
    assert upload(srv, room_id, gtoken, png(4, 4, 600_001)).status == 200
    missing = url.rsplit("/", 1)[0] + "/" + "0" * 64 + ".png"
    r = srv.request("GET", missing, token=token)
    assert (r.status, r.json()) == (404, {"error": "Not found"})
    for bad in (f"/uploads/chat/{room_id}/x.png", f"/uploads/chat/{room_id}/a/b/c.png"):
        r = srv.request("GET", bad, token=token)
        assert (r.status, r.json()) == (400, {"error": "Invalid path"}), bad


def test_refusals(srv):
    token, _ = _user(srv)
    room_id = _room(srv, token)
    r = upload(srv, room_id, token, png(8193, 10, 600_000))
    assert (r.status, r.json()) == (400, {"error": "Image dimensions too large (max 8192x8192)"})
    r = upload(srv, room_id, token, b"GIF89a" + b"\x00" * 600_000)
    assert r.status == 200 and r.json()["mime"] == "image/gif"
    r = upload(srv, room_id, token, b"\x00\x00\x00\x00zzzz" + b"\x00" * 600_000)
    assert (r.status, r.json()) == (400, {"error": "unsupported image type: application/octet-stream"})
    closed = _room(srv, token, allow_chat=False)
    r = upload(srv, closed, token, png(4, 4, 600_000))
    assert (r.status, r.json()) == (403, {"error": "Chat is disabled for this room"})
    # Just under 10 MiB of file is over Fiber's BodyLimit with its multipart framing: Fiber's
    # plain-text 413 before the handler (server.go:219-229).
    r = upload(srv, room_id, token, png(4, 4, 10 * 1024 * 1024 - 100))
    assert (r.status, r.text) == (413, "Request Entity Too Large")
    r = upload(srv, room_id, "", png(4, 4, 600_000))
    assert r.status == 401


def test_an_upload_survives_the_request_log(tmp_path):
    # --request-log reads every /api body before the handler: the upload must still see its file.
    s = DevServer("--request-log", str(tmp_path / "requests.jsonl"))
    try:
        token, _ = _user(s)
        room_id = _room(s, token)
        data = png(32, 32, 650_000)
        r = upload(s, room_id, token, data)
        assert r.status == 200, r
        got = s.request("GET", r.json()["url"], token=token)
        assert hashlib.sha256(got.body).digest() == hashlib.sha256(data).digest()
    finally:
        s.stop()


def test_the_file_field_is_found_among_others(srv):
    token, _ = _user(srv)
    room_id = _room(srv, token)
    data = png(3, 3, 520_000)
    boundary = "b0und"
    body = (f"preamble\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"asFile\"\r\n\r\n0\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.png\"\r\n"
            f"Content-Type: image/png\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    r = srv.request("POST", f"/api/room/{room_id}/chat/upload", raw=body,
                    content_type=f"multipart/form-data; boundary=\"{boundary}\"", token=token)
    assert r.status == 200 and r.json()["size"] == 520_000, r
    r = srv.request("POST", f"/api/room/{room_id}/chat/upload", raw=data, content_type="image/png", token=token)
    assert (r.status, r.json()) == (400, {"error": "Missing file field"})
