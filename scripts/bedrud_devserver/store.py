"""Bedrud's database, in memory: users, rooms, participant rows, token state.

Shapes follow the Go models of Bedrud v0.12.0 (server/internal/models/user.go:82-96,
room.go:80-108; docs/reference/bedrud-api.md §1.4). Times are passed in by the caller
so the REST handlers decide what "now" is.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import string
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Optional

ROOM_NAME_MIN = 3
ROOM_NAME_MAX = 63


def rfc3339(ts: float) -> str:
    """Go's time.Time JSON form (RFC 3339 with sub-second digits, UTC)."""
    dt = datetime.fromtimestamp(ts, tz=timezone.utc)
    frac = f"{dt.microsecond:06d}".rstrip("0")
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{frac}Z" if frac else f"{base}Z"


def hash_password(password: str) -> str:
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 2000)
    return f"{salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    try:
        salt_hex, digest_hex = stored.split("$", 1)
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 2000)
    return hmac.compare_digest(digest.hex(), digest_hex)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class User:
    id: str
    email: str
    name: str
    provider: str
    accesses: list[str]
    password_hash: str
    created_at: float
    updated_at: float
    is_active: bool = True
    avatar_url: str = ""
    refresh_token_hash: str = ""
    preferences_json: str = "{}"
    # None = not verified (models/user.go:92); only consulted with --require-email-verification.
    email_verified_at: Optional[float] = None

    def to_json(self) -> dict:
        """models.User as Go marshals it: the two pointer times are `null` when unset."""
        return {
            "id": self.id,
            "email": self.email,
            "name": self.name,
            "provider": self.provider,
            "avatarUrl": self.avatar_url,
            "accesses": list(self.accesses),
            "isActive": self.is_active,
            "emailVerifiedAt": rfc3339(self.email_verified_at) if self.email_verified_at is not None else None,
            "passwordChangedAt": None,
            "createdAt": rfc3339(self.created_at),
            "updatedAt": rfc3339(self.updated_at),
        }


SETTINGS_KEYS = ("allowChat", "allowVideo", "allowAudio", "requireApproval", "e2ee", "isPersistent",
                 "recordingsAllowed")


def default_settings() -> dict:
    """models.RoomSettings column defaults (models/room.go:98-108): what a seeded room gets."""
    return {"allowChat": True, "allowVideo": True, "allowAudio": True, "requireApproval": False, "e2ee": False,
            "isPersistent": False, "recordingsAllowed": True}


def settings_from_request(given: dict) -> dict:
    """A `settings` object decoded into Go's models.RoomSettings: every key the
    client left out is false (no pointer fields, no defaults on decode)."""
    return {k: bool(given.get(k, False)) for k in SETTINGS_KEYS}


@dataclass
class Room:
    id: str
    name: str
    created_by: str
    admin_id: str
    created_at: float
    updated_at: float
    expires_at: float
    is_active: bool = True
    is_public: bool = False
    max_participants: int = 20
    mode: str = "standard"
    settings: dict = field(default_factory=default_settings)
    last_activity_at: Optional[float] = None
    deleted_at: Optional[float] = None  # set when archived by DELETE /room/:id

    def to_json(self) -> dict:
        """models.Room (models/room.go:80-95): `deletedAt` is omitempty, `lastActivityAt` is not."""
        out = {
            "id": self.id,
            "name": self.name,
            "createdBy": self.created_by,
            "isActive": self.is_active,
            "maxParticipants": self.max_participants,
            "createdAt": rfc3339(self.created_at),
            "updatedAt": rfc3339(self.updated_at),
            "expiresAt": rfc3339(self.expires_at),
            "adminId": self.admin_id,
            "isPublic": self.is_public,
            "settings": dict(self.settings),
            "mode": self.mode,
            "lastActivityAt": rfc3339(self.last_activity_at) if self.last_activity_at is not None else None,
        }
        if self.deleted_at is not None:
            out["deletedAt"] = rfc3339(self.deleted_at)
        return out


@dataclass
class ParticipantRow:
    """`room_participants` (models/room.go:111-128): one row per user and room; inactive
    once they leave LiveKit (livekit_webhook.go:150-180) or the room goes idle."""
    room_id: str
    user_id: str
    is_banned: bool = False
    is_moderator: bool = False
    is_active: bool = True
    # JoinedAt, set again on every re-activation (room_repository.go:267, 286); the
    # admin list's lastActivityAt is the newest of a room's active rows (room_repository.go:743-758).
    joined_at: float = 0.0


# Outbound webhook events (models/webhook.go:6-13); all five pass the admin API's
# validator (admin_handler.go:1266-1272), recording.completed included.
WEBHOOK_EVENTS = ("room.created", "room.ended", "participant.joined", "recording.completed", "ping")


@dataclass
class Webhook:
    """models.Webhook (models/webhook.go:16-28). `last_seen` stays None: v0.12.0 never
    calls WebhookRepository.UpdateLastSeen."""
    id: str
    name: str
    url: str
    secret: str
    events: list[str]
    created_by: str
    created_at: float
    updated_at: float
    is_active: bool = True
    last_seen: Optional[float] = None

    def masked_secret(self) -> str:
        """MaskedSecret (models/webhook.go:31-36): "••••" and the last four characters."""
        return "••••" + self.secret[-4:] if len(self.secret) > 4 else "••••"

    def to_json(self, secret: Optional[str] = None) -> dict:
        """handlers.webhookDTO (admin_handler.go:1252-1263): `secret` is whatever the
        handler puts there (plaintext on create, masked elsewhere), `lastSeen` omitempty."""
        out = {"id": self.id, "name": self.name, "url": self.url,
               "secret": self.masked_secret() if secret is None else secret,
               "events": list(self.events), "isActive": self.is_active}
        if self.last_seen is not None:
            out["lastSeen"] = rfc3339(self.last_seen)
        out.update({"createdBy": self.created_by, "createdAt": rfc3339(self.created_at),
                    "updatedAt": rfc3339(self.updated_at)})
        return out


def new_webhook_secret() -> str:
    """16 crypto-random bytes as 32 hex digits (admin_handler.go:1377-1382, 1546-1551)."""
    return secrets.token_hex(16)


def validate_room_name(name: str) -> Optional[str]:
    """The error text Bedrud's `models.ValidateRoomName` gives, or None."""
    if len(name.encode()) < ROOM_NAME_MIN:
        return "room name must be at least 3 characters"
    if len(name.encode()) > ROOM_NAME_MAX:
        return "room name must be at most 63 characters"
    allowed = set(string.ascii_lowercase + string.digits)
    parts = name.split("-")
    if any(not p or any(c not in allowed for c in p) for p in parts):
        return "room name must contain only lowercase letters, numbers, and hyphens"
    return None


def generate_room_name() -> str:
    """`xxx-xxxx-xxx` from 26 lowercase letters, crypto RNG."""
    letters = string.ascii_lowercase
    return "-".join("".join(secrets.choice(letters) for _ in range(n)) for n in (3, 4, 3))


class Store:
    """All of Bedrud's persistent state. Single-threaded (the asyncio loop owns it)."""

    def __init__(self) -> None:
        self.users: dict[str, User] = {}
        self.rooms: dict[str, Room] = {}
        self.participants: list[ParticipantRow] = []
        self.blocked_refresh: set[str] = set()
        self.revoked_access: set[str] = set()
        self.uploads: dict[str, tuple[str, bytes]] = {}  # "<roomID>/<userID>/<sha256>.<ext>" -> (mime, bytes)
        self.webhooks: dict[str, Webhook] = {}  # insertion order = creation order

    # MARK: users
    def user_by_email(self, email: str) -> Optional[User]:
        return next((u for u in self.users.values() if u.email == email), None)

    def add_user(self, email: str, name: str, password: str, provider: str, accesses: list[str], now: float) -> User:
        user = User(
            id=str(uuid.uuid4()),
            email=email,
            name=name,
            provider=provider,
            accesses=accesses,
            password_hash=hash_password(password) if password else "",
            created_at=now,
            updated_at=now,
        )
        self.users[user.id] = user
        return user

    # MARK: rooms
    def room_by_name(self, name: str) -> Optional[Room]:
        """The active room of that name, else the newest row of that name
        (room_repository.go:160-180: an archived row and its recreation share a name)."""
        rows = [r for r in self.rooms.values() if r.name == name]
        active = next((r for r in rows if r.is_active), None)
        if active is not None:
            return active
        return max(rows, key=lambda r: r.created_at, default=None)

    def active_room_named(self, name: str) -> Optional[Room]:
        return next((r for r in self.rooms.values() if r.name == name and r.is_active), None)

    def add_room(self, name: str, owner_id: str, is_public: bool, mode: str, settings: dict, now: float) -> Room:
        room = Room(
            id=str(uuid.uuid4()),
            name=name,
            created_by=owner_id,
            admin_id=owner_id,
            created_at=now,
            updated_at=now,
            expires_at=now + 24 * 3600,
            is_public=is_public,
            mode=mode or "standard",
            settings=settings,
            last_activity_at=now,
        )
        self.rooms[room.id] = room
        self.participants.append(ParticipantRow(room_id=room.id, user_id=owner_id, joined_at=now))
        return room

    def delete_room(self, room_id: str) -> None:
        """Hard delete (the /_dev route); the API archives instead (`archive_room`)."""
        self.rooms.pop(room_id, None)
        self.participants = [p for p in self.participants if p.room_id != room_id]

    def archive_room(self, room_id: str, now: float) -> None:
        """The queued room_delete job with Purge=false (room.go:1739-1745;
        room_repository.go:452-462): inactive, deletedAt set, participants inactive."""
        room = self.rooms.get(room_id)
        if room is None:
            return
        room.is_active = False
        room.deleted_at = now
        room.updated_at = now
        self.deactivate_participants(room_id)

    def set_idle(self, room_id: str) -> None:
        """SetRoomIdle + DeactivateRoomParticipants (room_repository.go:853-861)."""
        room = self.rooms.get(room_id)
        if room is not None:
            room.is_active = False
        self.deactivate_participants(room_id)

    def deactivate_participants(self, room_id: str) -> None:
        for p in self.participants:
            if p.room_id == room_id:
                p.is_active = False

    def participant_row(self, room_id: str, user_id: str) -> Optional[ParticipantRow]:
        return next((p for p in self.participants if p.room_id == room_id and p.user_id == user_id), None)

    def participant_left(self, room_id: str, user_id: str) -> None:
        """RemoveParticipant (room_repository.go:300-309): the row stays, inactive."""
        row = self.participant_row(room_id, user_id)
        if row is not None:
            row.is_active = False

    def is_participant(self, room_id: str, user_id: str) -> bool:
        """IsParticipant (room_repository.go:1015-1021): an active, non-banned row."""
        row = self.participant_row(room_id, user_id)
        return row is not None and row.is_active and not row.is_banned

    def capacity_count(self, room_id: str) -> int:
        """Active, non-banned rows (room_repository.go:240-251)."""
        return sum(1 for p in self.participants if p.room_id == room_id and p.is_active and not p.is_banned)

    def enrol(self, room: Room, user_id: str, now: float) -> Optional[str]:
        """AddParticipantWithCapacityCheck (room_repository.go:236-297): the error text
        ("room is full", "you are banned from this room") or None once the row is active."""
        if room.max_participants > 0 and self.capacity_count(room.id) >= room.max_participants:
            return "room is full"
        row = self.participant_row(room.id, user_id)
        if row is not None and row.is_banned:
            return "you are banned from this room"
        self.activate_row(room, user_id, now)
        return None

    def activate_row(self, room: Room, user_id: str, now: float) -> None:
        """The row-writing half of AddParticipantWithCapacityCheck (room_repository.go:254-296):
        a new active row, or the old one active again with a fresh joined_at."""
        row = self.participant_row(room.id, user_id)
        if row is None:
            self.participants.append(ParticipantRow(room_id=room.id, user_id=user_id, joined_at=now))
        else:
            row.is_active, row.joined_at = True, now
        room.last_activity_at = now
