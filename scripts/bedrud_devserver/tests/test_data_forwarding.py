"""What a client sends on its publisher data channels and what the devserver forwards
(`ClientParticipant._on_client_data`), held to LiveKit v1.10.1 pkg/rtc/participant.go
`onReceivedDataMessage`: the sender's identity and sid are set by the server, and nothing
is forwarded once the sender has left."""
from __future__ import annotations

from livekit.protocol import models as lkm

from ..session import ClientParticipant


class RecordingRoom:
    """The room's `send_data`, recorded."""

    def __init__(self) -> None:
        self.sent: list[tuple[lkm.DataPacket, bool, object, list[str]]] = []

    def send_data(self, packet: lkm.DataPacket, reliable: bool, sender: object, destinations: list[str]) -> int:
        self.sent.append((packet, reliable, sender, destinations))
        return 1


def sender(state: int) -> tuple[ClientParticipant, RecordingRoom]:
    """A participant with only what the data path reads (no sockets, no event loop)."""
    room = RecordingRoom()
    p = ClientParticipant.__new__(ClientParticipant)
    p.room, p.identity, p.sid, p.state = room, "alice", "PA_alice0001", state  # type: ignore[assignment]
    p.can_publish_data, p.last_client_sequence = True, 0
    p.stats = {"data_received": 0, "bad_frames": 0}
    return p, room


def chat(**fields) -> bytes:  # type: ignore[no-untyped-def]
    return lkm.DataPacket(kind=lkm.DataPacket.RELIABLE, sequence=7,
                          user=lkm.UserPacket(payload=b'{"type":"chat"}', topic="chat", **fields)).SerializeToString()


def test_the_server_names_the_sender_whatever_the_client_wrote():
    p, room = sender(lkm.ParticipantInfo.ACTIVE)
    p._on_client_data("_reliable", chat(participant_identity="mallory", participant_sid="PA_mallory01"))
    [(packet, reliable, who, destinations)] = room.sent
    assert (packet.participant_identity, packet.participant_sid) == ("alice", "PA_alice0001")
    assert (packet.user.participant_identity, packet.user.participant_sid) == ("alice", "PA_alice0001")
    assert reliable and who is p and destinations == [] and p.last_client_sequence == 7


def test_nothing_is_forwarded_from_a_participant_that_has_left():
    p, room = sender(lkm.ParticipantInfo.DISCONNECTED)
    p._on_client_data("_reliable", chat())
    p._on_client_data("_lossy", chat())
    assert room.sent == [] and p.last_client_sequence == 0
