#!/usr/bin/env python3
"""Conformance fixtures for bedrud-bot's hand-written LiveKit protobuf messages.

The official `livekit-protocol` package (scripts/requirements.txt) is the oracle.

  generate [--out DIR]    write <name>.bin + manifest.json (default: the committed
                          fixtures in Tests/BedrudProtocolTests/Fixtures/livekit)
  verify                  regenerate into a temporary directory and compare with the
                          committed fixtures (they must be this script's output)
  check-roundtrip DIR     DIR holds Swift's re-encoding of every fixture (same names);
                          each must decode to the same values as the original
  check-encoded DIR       DIR holds what Swift encodes for the client-sent messages in
                          CLIENT_MESSAGES; each must decode to the expected message and
                          match its bytes exactly

Decode direction: every fixture's `expected` is this script's *description* of the
message: set fields only, keyed by .proto field name; integers and enums as decimal
strings, floats as numbers, bytes as hex, repeated fields as lists, maps and messages as
objects, and "__unknown__" = sorted field numbers the Swift model keeps as unknown
(fields appended here on purpose, plus fields listed in UNMODELED). The Swift side
builds the same view from its decoded value (ProtoMirror) and compares field by field.

Regression fixtures (`regression.*`) are inputs that once broke the Swift codec, kept
byte for byte. Their `expected` is what the official package decodes from them once the
payloads Swift keeps opaque (UNMODELED fields) are emptied; `official_rejects_input`
marks one the official package refuses as it is (a corrupt payload in such a field).

Generation is deterministic: same package version, same bytes.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
from pathlib import Path

from google.protobuf import unknown_fields as pb_unknown
from google.protobuf.descriptor import FieldDescriptor as FD
from livekit.protocol import models, rtc

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "Tests" / "BedrudProtocolTests" / "Fixtures" / "livekit"

# Swift type name → official class. The Swift names are LiveKit.<name>.
TYPES = {
    "SignalRequest": rtc.SignalRequest,
    "SignalResponse": rtc.SignalResponse,
    "JoinRequest": rtc.JoinRequest,
    "WrappedJoinRequest": rtc.WrappedJoinRequest,
    "ConnectionSettings": rtc.ConnectionSettings,
    "JoinResponse": rtc.JoinResponse,
    "ReconnectResponse": rtc.ReconnectResponse,
    "SessionDescription": rtc.SessionDescription,
    "TrickleRequest": rtc.TrickleRequest,
    "LeaveRequest": rtc.LeaveRequest,
    "SyncState": rtc.SyncState,
    "SimulateScenario": rtc.SimulateScenario,
    "RequestResponse": rtc.RequestResponse,
    "RoomMovedResponse": rtc.RoomMovedResponse,
    "ParticipantInfo": models.ParticipantInfo,
    "TrackInfo": models.TrackInfo,
    "Room": models.Room,
    "ClientInfo": models.ClientInfo,
    "DataPacket": models.DataPacket,
    "UserPacket": models.UserPacket,
    "RpcResponse": models.RpcResponse,
    "DataStream.Header": models.DataStream.Header,
}

# Fields the Swift model deliberately does not know (kept in unknownFields there).
UNMODELED = {
    "livekit.ParticipantInfo": {"data_tracks"},
    "livekit.SyncState": {"publish_data_tracks", "data_subscription"},
    "livekit.SignalRequest": {
        "publish_data_track_request", "unpublish_data_track_request", "update_data_subscription",
        "store_data_blob_request", "get_data_blob_request",
    },
    "livekit.SignalResponse": {
        "subscribed_audio_codec_update", "publish_data_track_response", "unpublish_data_track_response",
        "data_track_subscriber_handles", "store_data_blob_response", "get_data_blob_response",
    },
    "livekit.DataPacket": {"metrics"},
    "livekit.RequestResponse": {"publish_data_track", "unpublish_data_track"},
}

INT_TYPES_SIGNED = {FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_SINT32, FD.TYPE_SINT64, FD.TYPE_SFIXED32, FD.TYPE_SFIXED64}
INT_TYPES_UNSIGNED = {FD.TYPE_UINT32, FD.TYPE_UINT64, FD.TYPE_FIXED32, FD.TYPE_FIXED64}


# MARK: - Description (the shape the Swift ProtoMirror is compared with)

def is_map(field) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def describe_scalar(field, value):
    t = field.type
    if t == FD.TYPE_ENUM or t in INT_TYPES_SIGNED or t in INT_TYPES_UNSIGNED:
        return str(int(value))
    if t == FD.TYPE_BOOL:
        return bool(value)
    if t in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
        return float(value)
    if t == FD.TYPE_STRING:
        return value
    if t == FD.TYPE_BYTES:
        return bytes(value).hex()
    raise ValueError(f"unsupported type {t} for {field.full_name}")


def describe(msg) -> tuple[dict, bool]:
    """Returns (description, reencode_identical). The flag is False when an unmodeled
    field sits among known ones, so Swift (which appends unknowns last) cannot reproduce
    the exact byte order."""
    d = msg.DESCRIPTOR
    out: dict = {}
    identical = True
    unknown = [f.field_number for f in pb_unknown.UnknownFieldSet(msg)]
    unmodeled = UNMODELED.get(d.full_name, set())
    for field, value in msg.ListFields():
        if field.name in unmodeled:
            # One unknown record per element of a repeated field.
            unknown += [field.number] * (len(value) if field.is_repeated else 1)
            identical = False
            continue
        if is_map(field):
            vfield = field.message_type.fields_by_name["value"]
            if vfield.message_type is not None:
                raise ValueError("only map<string,string> is modelled")
            out[field.name] = {str(k): describe_scalar(vfield, v) for k, v in value.items()}
        elif field.is_repeated:
            if field.message_type is not None:
                items = []
                for item in value:
                    sub, ok = describe(item)
                    items.append(sub)
                    identical = identical and ok
                out[field.name] = items
            else:
                out[field.name] = [describe_scalar(field, v) for v in value]
        elif field.message_type is not None:
            sub, ok = describe(value)
            out[field.name] = sub
            identical = identical and ok
        else:
            out[field.name] = describe_scalar(field, value)
    if unknown:
        out["__unknown__"] = sorted(unknown)
    return out, identical


# MARK: - Deterministic filler: every field set to a distinct value

class Filler:
    MAX_DEPTH = 6

    def __init__(self, seed: int):
        self.n = seed

    def tick(self) -> int:
        self.n += 1
        return self.n

    def scalar(self, field):
        n = self.tick()
        t = field.type
        if t == FD.TYPE_STRING:
            return f"{field.name}-{n}" + (" ü—✓" if n % 5 == 0 else "")
        if t == FD.TYPE_BYTES:
            return bytes([n % 256, (n * 7) % 256, 0, 255])
        if t == FD.TYPE_BOOL:
            return True
        if t in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32):
            return -n if n % 2 else n * 1000
        if t in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
            return -(n * 1_000_000_007) if n % 3 == 0 else n * 1_000_000_007
        if t in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
            return (n * 100_003) % (1 << 32)
        if t in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
            return (n * 10**15) % (1 << 64)
        if t == FD.TYPE_FLOAT:
            return n + 0.5
        if t == FD.TYPE_DOUBLE:
            return n + 0.25
        if t == FD.TYPE_ENUM:
            values = [v.number for v in field.enum_type.values]
            # Every seventh enum gets a number the schema does not define (open enums).
            return 100 + n if n % 7 == 0 else max(values)
        raise ValueError(f"unsupported type {t}")

    def fill(self, msg, depth: int = 0, choose: dict | None = None):
        d = msg.DESCRIPTOR
        picks = {}
        for o in d.oneofs:
            if o.name.startswith("_"):  # synthetic oneof of a proto3 `optional`
                continue
            picks[o.name] = (choose or {}).get(o.name, o.fields[0].name)
        for field in d.fields:
            o = field.containing_oneof
            if o is not None and not o.name.startswith("_") and picks[o.name] != field.name:
                continue
            if field.message_type is not None and not is_map(field) and depth >= self.MAX_DEPTH:
                continue
            if is_map(field):
                m = getattr(msg, field.name)
                kfield = field.message_type.fields_by_name["key"]
                vfield = field.message_type.fields_by_name["value"]
                for _ in range(2):
                    key = self.scalar(kfield)
                    if vfield.message_type is not None:
                        self.fill(m[key], depth + 1)
                    else:
                        m[key] = self.scalar(vfield)
            elif field.is_repeated:
                rep = getattr(msg, field.name)
                for _ in range(2):
                    if field.message_type is not None:
                        self.fill(rep.add(), depth + 1)
                    else:
                        rep.append(self.scalar(field))
            elif field.message_type is not None:
                self.fill(getattr(msg, field.name), depth + 1)
            else:
                setattr(msg, field.name, self.scalar(field))
        return msg


# MARK: - Fixtures

def with_unknown(msg, extra: bytes):
    """A copy of msg whose serialization ends with the raw records `extra`."""
    clone = type(msg)()
    clone.ParseFromString(msg.SerializeToString() + extra)
    return clone


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def record(number: int, wire: int, payload: bytes) -> bytes:
    return varint(number << 3 | wire) + payload


def unknown_records(base: int) -> bytes:
    """One unknown record of every wire type (varint, fixed64, bytes, fixed32, group)."""
    return (
        record(base, 0, varint(300))
        + record(base + 1, 1, (12345).to_bytes(8, "little"))
        + record(base + 2, 2, varint(3) + b"abc")
        + record(base + 3, 5, (7).to_bytes(4, "little"))
        + record(base + 4, 3, record(1, 0, varint(1))) + record(base + 4, 4, b"")
    )


def oneof_fixtures():
    """One fully filled message per member of every oneof we model."""
    out = []
    seed = 1000
    for tname, cls, oneof in [
        ("SignalResponse", rtc.SignalResponse, "message"),
        ("SignalRequest", rtc.SignalRequest, "message"),
        ("DataPacket", models.DataPacket, "value"),
        ("RequestResponse", rtc.RequestResponse, "request"),
        ("SimulateScenario", rtc.SimulateScenario, "scenario"),
        ("RpcResponse", models.RpcResponse, "value"),
        ("DataStream.Header", models.DataStream.Header, "content_header"),
    ]:
        for field in cls.DESCRIPTOR.oneofs_by_name[oneof].fields:
            seed += 1000
            msg = Filler(seed).fill(cls(), choose={oneof: field.name})
            out.append((f"{snake(tname)}.{field.name}", tname, msg))
    for tname in ["JoinRequest", "WrappedJoinRequest", "ClientInfo", "ConnectionSettings"]:
        seed += 1000
        out.append((f"{snake(tname)}.full", tname, Filler(seed).fill(TYPES[tname]())))
    return out


def snake(name: str) -> str:
    s = "".join("_" + c.lower() if c.isupper() else c for c in name.replace(".", "")).lstrip("_")
    return s


def bedrud_join():
    """A join as a Bedrud (LiveKit 1.10.1) server sends it to a bot."""
    room = models.Room(name="standup", empty_timeout=300, departure_timeout=20, max_participants=20,
                       creation_time=1767225600, creation_time_ms=1767225600123, num_participants=2,
                       enabled_codecs=[models.Codec(mime="audio/opus"), models.Codec(mime="audio/red")])
    me = models.ParticipantInfo(sid="PA_bot", identity="7b0c2f0e-bot", state=models.ParticipantInfo.JOINED,
                                name="Recorder", metadata='{"accesses":["user"]}', joined_at=1767225601,
                                joined_at_ms=1767225601500, version=1,
                                permission=models.ParticipantPermission(can_subscribe=True, can_publish=True,
                                                                        can_publish_data=True,
                                                                        can_update_metadata=True))
    mic = models.TrackInfo(sid="TR_alice_mic", type=models.AUDIO, name="microphone", source=models.MICROPHONE,
                           mime_type="audio/opus", mid="1", stereo=True, audio_features=[models.TF_STEREO,
                                                                                         models.TF_NO_DTX],
                           codecs=[models.SimulcastCodecInfo(mime_type="audio/opus", mid="1", cid="mic-cid")])
    cam = models.TrackInfo(sid="TR_alice_cam", type=models.VIDEO, source=models.CAMERA, muted=True,
                           width=1280, height=720, mime_type="video/VP8", simulcast=True,
                           layers=[models.VideoLayer(quality=models.LOW, width=320, height=180, bitrate=150000,
                                                     ssrc=1111),
                                   models.VideoLayer(quality=models.HIGH, width=1280, height=720,
                                                     bitrate=1700000, ssrc=2222)])
    alice = models.ParticipantInfo(sid="PA_alice", identity="alice-uuid", state=models.ParticipantInfo.ACTIVE,
                                   name="Alice Ünal", metadata='{"accesses":["user","moderator"]}',
                                   joined_at=1767225500, version=7, is_publisher=True, tracks=[mic, cam],
                                   attributes={"team": "ops", "lang": "tr"})
    guest = models.ParticipantInfo(sid="PA_guest", identity="guest-ab12cd34", state=models.ParticipantInfo.ACTIVE,
                                   name="Guest", version=2, kind=models.ParticipantInfo.STANDARD)
    join = rtc.JoinResponse(room=room, participant=me, other_participants=[alice, guest],
                            server_version="1.10.1", subscriber_primary=True, ping_timeout=15, ping_interval=5,
                            ice_servers=[rtc.ICEServer(urls=["turn:203.0.113.7:3478?transport=udp"],
                                                       username="1767229200:bot", credential="c3VwZXJzZWNyZXQ="),
                                         rtc.ICEServer(urls=["stun:stun.l.google.com:19302"])],
                            client_configuration=models.ClientConfiguration(
                                resume_connection=models.ENABLED, force_relay=models.UNSET),
                            server_info=models.ServerInfo(version="1.10.1", protocol=17, node_id="ND_node1"),
                            fast_publish=True)
    return rtc.SignalResponse(join=join)


def scenario_fixtures():
    out = []

    def add(name, tname, msg, raw: bytes | None = None):
        out.append((f"scenario.{name}", tname, msg, raw))

    add("join_bedrud", "SignalResponse", bedrud_join())
    add("offer_with_mids", "SignalResponse", rtc.SignalResponse(offer=rtc.SessionDescription(
        type="offer", sdp="v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n", id=3,
        mid_to_track_id={"1": "TR_alice_mic", "0": "", "2": "TR_bob_mic"})))
    add("trickle_server", "SignalResponse", rtc.SignalResponse(trickle=rtc.TrickleRequest(
        candidateInit='{"candidate":"candidate:1 1 udp 2130706431 203.0.113.7 50123 typ host","sdpMid":"0",'
                      '"sdpMLineIndex":0,"usernameFragment":null}',
        target=rtc.SUBSCRIBER, final=True)))
    add("leave_kicked", "SignalResponse", rtc.SignalResponse(leave=rtc.LeaveRequest(
        reason=models.PARTICIPANT_REMOVED, action=rtc.LeaveRequest.DISCONNECT)))
    add("leave_resume", "SignalResponse", rtc.SignalResponse(leave=rtc.LeaveRequest(
        can_reconnect=True, reason=models.CONNECTION_TIMEOUT, action=rtc.LeaveRequest.RESUME,
        regions=rtc.RegionSettings(regions=[rtc.RegionInfo(region="eu", url="wss://eu.example", distance=12)]))))
    add("leave_legacy_can_reconnect", "SignalResponse", rtc.SignalResponse(leave=rtc.LeaveRequest(
        can_reconnect=True, reason=models.STATE_MISMATCH)))
    add("update_left", "SignalResponse", rtc.SignalResponse(update=rtc.ParticipantUpdate(participants=[
        models.ParticipantInfo(sid="PA_guest", identity="guest-ab12cd34", state=models.ParticipantInfo.DISCONNECTED,
                               version=9, disconnect_reason=models.CLIENT_INITIATED)])))
    add("speakers_changed", "SignalResponse", rtc.SignalResponse(speakers_changed=rtc.SpeakersChanged(speakers=[
        models.SpeakerInfo(sid="PA_alice", level=0.75, active=True),
        models.SpeakerInfo(sid="PA_guest", level=0.0, active=False)])))
    add("refresh_token", "SignalResponse", rtc.SignalResponse(refresh_token="eyJhbGciOiJIUzI1NiJ9.e30.sig"))
    add("pong_resp", "SignalResponse", rtc.SignalResponse(pong_resp=rtc.Pong(last_ping_timestamp=1700000000000,
                                                                              timestamp=1700000000042)))
    add("pong_negative", "SignalResponse", rtc.SignalResponse(pong=-1))
    add("reconnect", "SignalResponse", rtc.SignalResponse(reconnect=rtc.ReconnectResponse(
        ice_servers=[rtc.ICEServer(urls=["stun:127.0.0.1:3478"])], last_message_seq=41,
        server_info=models.ServerInfo(protocol=17, version="1.10.1"))))
    add("room_update_sid", "SignalResponse", rtc.SignalResponse(room_update=rtc.RoomUpdate(room=models.Room(
        sid="RM_abc", name="standup", num_participants=3, active_recording=False, metadata=""))))
    add("connection_quality", "SignalResponse", rtc.SignalResponse(connection_quality=rtc.ConnectionQualityUpdate(
        updates=[rtc.ConnectionQualityInfo(participant_sid="PA_alice", quality=models.EXCELLENT, score=4.5),
                 rtc.ConnectionQualityInfo(participant_sid="PA_guest", quality=models.LOST, score=1.0)])))
    add("empty_response", "SignalResponse", rtc.SignalResponse())
    # Enum numbers the schema does not define: decoded as .unrecognized(n), kept.
    add("unknown_enums", "SignalResponse", rtc.SignalResponse(update=rtc.ParticipantUpdate(participants=[
        models.ParticipantInfo(sid="PA_x", identity="x", state=17, kind=42, disconnect_reason=99,
                               tracks=[models.TrackInfo(sid="TR_x", type=9, source=42, audio_features=[0, 77])])])))
    # Unknown fields at several depths, one of every wire type.
    track = with_unknown(models.TrackInfo(sid="TR_u", mime_type="audio/opus"), unknown_records(900))
    part = with_unknown(models.ParticipantInfo(sid="PA_u", identity="u", tracks=[track]), unknown_records(800))
    join = with_unknown(rtc.JoinResponse(participant=part, ping_interval=5), unknown_records(700))
    add("unknown_fields_nested", "SignalResponse", with_unknown(rtc.SignalResponse(join=join), b""))
    # A future oneof member (27, data tracks) must come out as .unknown(27).
    add("future_member", "SignalResponse", rtc.SignalResponse(
        publish_data_track_response=rtc.PublishDataTrackResponse()))
    # A future non-oneof field next to a known member must not hide the member.
    add("future_envelope_field", "SignalResponse",
        with_unknown(rtc.SignalResponse(pong=5), record(100, 0, varint(1))))
    # ParticipantInfo.data_tracks (19) is not modelled: kept as unknown.
    add("data_tracks_unmodelled", "ParticipantInfo", models.ParticipantInfo(
        sid="PA_dt", identity="dt", data_tracks=[models.DataTrackInfo(sid="DTR_1", name="telemetry")],
        client_protocol=2))
    # Repeated enums written unpacked (legal; parsers must accept both forms).
    raw = record(1, 2, varint(4) + b"TR_p") + record(19, 0, varint(0)) + record(19, 0, varint(1)) \
        + record(9, 0, varint(2))
    unpacked = models.TrackInfo()
    unpacked.ParseFromString(raw)
    add("unpacked_enums", "TrackInfo", unpacked, raw)
    # Bedrud chat and moderation packets as the data channel delivers them.
    chat = {"type": "chat", "id": "5f1c", "timestamp": 1767225700123, "senderName": "Alice Ünal",
            "senderIdentity": "alice-uuid", "message": "hello 👋",
            "attachments": [{"kind": "image", "url": "https://meet.example/uploads/chat/ab.png",
                             "mime": "image/png", "w": 64, "h": 48, "size": 1234}]}
    add("data_chat_bedrud", "DataPacket", models.DataPacket(
        kind=models.DataPacket.RELIABLE, participant_identity="alice-uuid", participant_sid="PA_alice", sequence=12,
        user=models.UserPacket(participant_sid="PA_alice", participant_identity="alice-uuid", topic="chat",
                               payload=json.dumps(chat, ensure_ascii=False).encode())))
    system = {"type": "system", "event": "kick", "actor": "owner-uuid", "target": "guest-ab12cd34"}
    add("data_system_kick", "DataPacket", models.DataPacket(
        kind=models.DataPacket.RELIABLE, sequence=0,
        user=models.UserPacket(topic="system", payload=json.dumps(system).encode())))
    add("data_legacy_v15", "DataPacket", models.DataPacket(
        kind=models.DataPacket.LOSSY, user=models.UserPacket(participant_sid="PA_old", payload=b"\x00\x01\xff")))
    return out


# MARK: - Regression inputs (mutated fixtures that once broke the Swift codec)

# Each is the input ProtoFuzzTests.mutatedFixturesNeverCrash built for that seed
# (BEDRUD_FUZZ_SEED), as the fuzz log printed it; (name, type, what it caught, hex).
REGRESSIONS = [
    ("seed_757264840", "DataPacket",
     "issue 15: metrics (8) replaced by rpc_response (12) came back after re-encoding",
     "0ad0040a3a12077374616e64757018d00520a0e16728ae1118ac0220142880f2d6ca063a0c0a0a617564696f2f6f7075"
     "733a0b0a09617564696f2f7265644802701478fbd0eab6b733125370731a250a0850415f6775657374120a0650415f62"
     "6f74120c37623063326630652d626f7418012a157b226163636573736573223a5b2275736572225d7d3081f2d6ca064a"
     "085265636f7264657250015a0808011001180150018801dcdbeab6b7331a82020a0850415f616c696365120a616c6963"
     "652d757569641802224c0a0c54525f616c6963655f6d69631a0a6d6963726f70686f6e6548025a0a617564696f2f6f70"
     "757362dcdbea01316a180a0a617564696f2f6f7075731201311a076d69632d63696470019a0102000122470a18b40120"
     "f09309280c54525f616c6963655f63616d1001200128800a30d00538014801520d10c00218b40120f0930928d708520f"
     "080210800a18d00520a0e16728ae115a09766964656f2f5650382a217b226163636573736573223a5b2275736572222c"
     "226d6f64657261746f72225d7d309cf1d6ca064a0b416c69636520c39c6e616c500768017a0a0a046c616e6712027472"
     "7a0b0a047465616d12036f70731a250a0850415f6775657374120e67756573742d616231326364333418024a05477565"
     "737450022206312e31302e312a470a237475726e3a3230332e302e3131332e373a333437383f7472616e73706f72743d"
     "756470120e313736373232393230303a626f741a10633356775a584a7a5a574e795a58513d2a1e0a1c7374756e3a7374"
     "756e2e6c2e676f6f676c652e636f6d3a3139333032300142021802500f580562141206312e31302e3118112a084e445f"
     "6e6f6465317801"),
    ("seed_669094484", "DataPacket",
     "issue 15: field 8 as fixed64 is not the metrics member; user (2) stays the value",
     "415f6f6c6412030801120d0a0650415f6f6c6412030001ff"),
    ("seed_186967074", "DataPacket",
     "issue 15: field 8 as varint is not the metrics member; user (2) stays the value",
     "4001120d0a0650415f6f6c6412030001ff"),
    ("seed_898248838", "SignalResponse",
     "issue 15: RequestResponse.unpublish_data_track (11) replaced by trickle (4) came back",
     "b2013208f3bc8f9908100b5a0d6d6573736167652d323230303322190a1363616e646964617465496e69742d32323030"
     "3410011801"),
]


def read_varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def skip_value(data: bytes, i: int, number: int, wire: int) -> int:
    if wire == 0:
        return read_varint(data, i)[1]
    if wire == 1:
        return i + 8
    if wire == 5:
        return i + 4
    if wire == 2:
        n, i = read_varint(data, i)
        return i + n
    if wire == 3:
        while True:
            tag, i = read_varint(data, i)
            if tag & 7 == 4:
                if tag >> 3 != number:
                    raise ValueError("unmatched group")
                return i
            i = skip_value(data, i, tag >> 3, tag & 7)
    raise ValueError(f"wire type {wire}")


def opaque_unmodelled(descriptor, data: bytes) -> bytes:
    """`data` with the payload of every field the Swift model does not model (UNMODELED)
    emptied, at any depth. Swift keeps those payloads as opaque bytes and never parses
    them, so their content is not part of what it decodes; the official package parses
    them and rejects the whole message if one is corrupt."""
    unmodeled = UNMODELED.get(descriptor.full_name, set())
    out = bytearray()
    i = 0
    while i < len(data):
        start = i
        tag, i = read_varint(data, i)
        number, wire = tag >> 3, tag & 7
        field = descriptor.fields_by_number.get(number)
        end = skip_value(data, i, number, wire)
        if end > len(data):
            raise ValueError("truncated field")
        if field is not None and wire == 2 and field.name in unmodeled:
            out += varint(tag) + varint(0)
        elif field is not None and wire == 2 and field.message_type is not None and not is_map(field):
            n, body = read_varint(data, i)
            inner = opaque_unmodelled(field.message_type, data[body:end])
            out += varint(tag) + varint(len(inner)) + inner
        else:
            out += data[start:end]
        i = end
    return bytes(out)


def regression_fixtures():
    """(name, type, message the Swift model must decode, raw input, official_parses_input)."""
    out = []
    for name, tname, _why, hexdata in REGRESSIONS:
        raw = bytes.fromhex(hexdata)
        cls = TYPES[tname]
        try:
            cls().ParseFromString(raw)
            parses = True
        except Exception:  # noqa: BLE001 - the official package rejects the input
            parses = False
        msg = cls()
        msg.ParseFromString(opaque_unmodelled(cls.DESCRIPTOR, raw))
        out.append((f"regression.{name}", tname, msg, raw, parses))
    return out


# MARK: - Messages the client sends (encode direction). Swift builds the same values.

def client_messages():
    sync_answer = rtc.SessionDescription(type="answer", sdp="v=0\r\na=mid:0\r\n", id=7)
    sync_offer = rtc.SessionDescription(type="offer", sdp="v=0\r\na=mid:0\r\na=mid:1\r\n", id=7,
                                        mid_to_track_id={"1": "TR_a", "0": ""})
    join = rtc.JoinRequest(
        client_info=models.ClientInfo(sdk=models.ClientInfo.SWIFT, version="0.1.0", protocol=16, os="Linux",
                                      os_version="6.1", device_model="server", client_protocol=0),
        connection_settings=rtc.ConnectionSettings(auto_subscribe=True, adaptive_stream=False,
                                                   subscriber_allow_pause=False),
        metadata="", participant_attributes={"role": "recorder", "b": "2"},
        reconnect=True, reconnect_reason=models.RR_SIGNAL_DISCONNECTED, participant_sid="PA_bot")
    return {
        "answer": rtc.SignalRequest(answer=rtc.SessionDescription(type="answer", sdp="v=0\r\n", id=5)),
        "offer": rtc.SignalRequest(offer=rtc.SessionDescription(type="offer", sdp="v=0\r\na=mid:0\r\n", id=1)),
        "trickle": rtc.SignalRequest(trickle=rtc.TrickleRequest(
            candidateInit='{"candidate":"candidate:842163049 1 udp 1677729535 198.51.100.4 46154 typ srflx '
                          'raddr 0.0.0.0 rport 0 generation 0","sdpMid":"0","sdpMLineIndex":0,'
                          '"usernameFragment":"Xy9z"}',
            target=rtc.SUBSCRIBER)),
        "trickle_end": rtc.SignalRequest(trickle=rtc.TrickleRequest(
            candidateInit='{"candidate":"","sdpMid":null,"sdpMLineIndex":null,"usernameFragment":null}',
            target=rtc.PUBLISHER)),
        "leave": rtc.SignalRequest(leave=rtc.LeaveRequest(reason=models.CLIENT_INITIATED,
                                                          action=rtc.LeaveRequest.DISCONNECT)),
        "ping": rtc.SignalRequest(ping=1700000000000),
        "ping_zero": rtc.SignalRequest(ping=0),
        "ping_req": rtc.SignalRequest(ping_req=rtc.Ping(timestamp=1700000000000, rtt=42)),
        "sync_state": rtc.SignalRequest(sync_state=rtc.SyncState(
            answer=sync_answer, offer=sync_offer,
            subscription=rtc.UpdateSubscription(subscribe=False),
            data_channels=[rtc.DataChannelInfo(label="_reliable", id=1, target=rtc.SUBSCRIBER),
                           rtc.DataChannelInfo(label="_lossy", id=3, target=rtc.SUBSCRIBER)],
            datachannel_receive_states=[rtc.DataChannelReceiveState(publisher_sid="PA_alice", last_seq=12)],
            track_sids_disabled=["TR_cam"])),
        "subscription": rtc.SignalRequest(subscription=rtc.UpdateSubscription(
            track_sids=["TR_a", "TR_b"], subscribe=True,
            participant_tracks=[models.ParticipantTracks(participant_sid="PA_alice", track_sids=["TR_a"])])),
        "track_setting": rtc.SignalRequest(track_setting=rtc.UpdateTrackSettings(
            track_sids=["TR_cam"], disabled=True, quality=models.HIGH, width=1280, height=720, fps=30, priority=1)),
        "add_track": rtc.SignalRequest(add_track=rtc.AddTrackRequest(
            cid="bot-mic", name="bot", type=models.AUDIO, source=models.MICROPHONE, muted=False, stereo=True,
            disable_red=True, stream="camera", audio_features=[models.TF_STEREO, models.TF_NO_DTX],
            simulcast_codecs=[rtc.SimulcastCodec(codec="opus", cid="bot-mic")])),
        "mute": rtc.SignalRequest(mute=rtc.MuteTrackRequest(sid="TR_bot_mic", muted=True)),
        "update_metadata": rtc.SignalRequest(update_metadata=rtc.UpdateParticipantMetadata(
            metadata='{"accesses":["user"],"deafened":true}', name="Recorder ✓",
            attributes={"z": "last", "a": "first", "m": ""}, request_id=9)),
        "simulate_speaker": rtc.SignalRequest(simulate=rtc.SimulateScenario(speaker_update=3)),
        "simulate_migration": rtc.SignalRequest(simulate=rtc.SimulateScenario(migration=True)),
        "simulate_bandwidth": rtc.SignalRequest(simulate=rtc.SimulateScenario(subscriber_bandwidth=0)),
        "simulate_protocol": rtc.SignalRequest(simulate=rtc.SimulateScenario(
            switch_candidate_protocol=rtc.TCP)),
        "join_request": rtc.WrappedJoinRequest(join_request=join.SerializeToString(deterministic=True)),
    }


def client_message_type(name: str) -> str:
    return "WrappedJoinRequest" if name == "join_request" else "SignalRequest"


# MARK: - Commands

def write_fixtures(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.bin"):
        old.unlink()
    manifest = []
    entries = [(n, t, m, None, True) for n, t, m in oneof_fixtures()] \
        + [(n, t, m, raw, True) for n, t, m, raw in scenario_fixtures()] + regression_fixtures()
    for name, tname, msg, raw, official_parses in entries:
        data = raw if raw is not None else msg.SerializeToString(deterministic=True)
        # The bytes must parse back to the very message we describe (for an input the
        # official package rejects: once the payloads Swift keeps opaque are emptied).
        check = TYPES[tname]()
        check.ParseFromString(data if official_parses else opaque_unmodelled(check.DESCRIPTOR, data))
        expected, identical = describe(check)
        (out / f"{name}.bin").write_bytes(data)
        manifest.append({
            "name": name,
            "type": tname,
            "expected": expected,
            # Swift re-encodes to these exact bytes unless an unmodeled field sits
            # between known ones or the input used a non-canonical form.
            "reencode_identical": identical and raw is None,
        })
        if not official_parses:
            manifest[-1]["official_rejects_input"] = True
    (out / "manifest.json").write_text(json.dumps(
        {"generator": "scripts/livekit_fixtures.py", "package": package_version(), "fixtures": manifest},
        indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return len(manifest)


def package_version() -> str:
    try:
        from importlib.metadata import version
        return f"livekit-protocol {version('livekit-protocol')}, protobuf {version('protobuf')}"
    except Exception:  # noqa: BLE001 - informational only
        return "unknown"


def cmd_generate(args) -> int:
    n = write_fixtures(Path(args.out))
    print(f"wrote {n} fixtures to {args.out}")
    return 0


def cmd_verify(_args) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        write_fixtures(Path(tmp))
        fresh = {p.name: p.read_bytes() for p in Path(tmp).iterdir()}
    committed = {p.name: p.read_bytes() for p in DEFAULT_OUT.iterdir() if p.suffix in (".bin", ".json")}
    problems = sorted(set(fresh) ^ set(committed)) + sorted(n for n in fresh if n in committed
                                                             and fresh[n] != committed[n])
    for p in problems:
        print(f"stale or unexpected fixture: {p}")
    if problems:
        print("run: .venv/bin/python scripts/livekit_fixtures.py generate")
        return 1
    print(f"fixtures up to date ({len(fresh)} files)")
    return 0


def diff(expected, actual, path="") -> list[str]:
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for k in sorted(set(expected) | set(actual)):
            if k not in actual:
                out.append(f"{path}.{k}: missing (expected {expected[k]!r})")
            elif k not in expected:
                out.append(f"{path}.{k}: unexpected {actual[k]!r}")
            else:
                out += diff(expected[k], actual[k], f"{path}.{k}")
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += diff(e, a, f"{path}[{i}]")
        return out
    return [] if expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]


def cmd_check_roundtrip(args) -> int:
    manifest = json.loads((DEFAULT_OUT / "manifest.json").read_text())["fixtures"]
    failures = 0
    for entry in manifest:
        path = Path(args.dir) / f"{entry['name']}.bin"
        if not path.exists():
            print(f"FAIL {entry['name']}: Swift wrote no re-encoding")
            failures += 1
            continue
        msg = TYPES[entry["type"]]()
        try:
            msg.ParseFromString(path.read_bytes())
        except Exception as e:  # noqa: BLE001 - report any parse failure
            print(f"FAIL {entry['name']}: official package cannot parse Swift's bytes: {e}")
            failures += 1
            continue
        problems = diff(entry["expected"], describe(msg)[0])
        if problems:
            failures += 1
            print(f"FAIL {entry['name']}:")
            for p in problems[:20]:
                print(f"    {p}")
    print(f"round-trip: {len(manifest) - failures}/{len(manifest)} fixtures decode to the same values")
    return 1 if failures else 0


def cmd_check_encoded(args) -> int:
    expected = client_messages()
    failures = 0
    for name, want in expected.items():
        path = Path(args.dir) / f"{name}.bin"
        if not path.exists():
            print(f"FAIL {name}: Swift wrote nothing")
            failures += 1
            continue
        data = path.read_bytes()
        got = TYPES[client_message_type(name)]()
        try:
            got.ParseFromString(data)
        except Exception as e:  # noqa: BLE001
            print(f"FAIL {name}: official package cannot parse Swift's bytes: {e}")
            failures += 1
            continue
        problems = diff(describe(want)[0], describe(got)[0])
        want_bytes = want.SerializeToString(deterministic=True)
        if data != want_bytes:
            problems.append(f"bytes differ: swift {data.hex()} python {want_bytes.hex()}")
        if name == "join_request":
            query = Path(args.dir) / "join_request.query.txt"
            want_query = base64.urlsafe_b64encode(want_bytes).decode()
            if not query.exists() or query.read_text().strip() != want_query:
                problems.append(f"join_request query value differs: want {want_query}")
        if problems:
            failures += 1
            print(f"FAIL {name}:")
            for p in problems[:20]:
                print(f"    {p}")
    print(f"encoded: {len(expected) - failures}/{len(expected)} client messages match the official package")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--out", default=str(DEFAULT_OUT))
    sub.add_parser("verify")
    r = sub.add_parser("check-roundtrip")
    r.add_argument("dir")
    e = sub.add_parser("check-encoded")
    e.add_argument("dir")
    args = parser.parse_args()
    return {"generate": cmd_generate, "verify": cmd_verify, "check-roundtrip": cmd_check_roundtrip,
            "check-encoded": cmd_check_encoded}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
