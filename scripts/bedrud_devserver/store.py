"""Bedrud's database, in memory: users, rooms, participant rows, token state.

Shapes follow the Go models (docs/reference/bedrud-api.md §1.4). Times are passed
in by the caller so the REST handlers decide what "now" is.
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

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "email": self.email,
            "name": self.name,
            "provider": self.provider,
            "avatarUrl": self.avatar_url,
            "accesses": list(self.accesses),
            "isActive": self.is_active,
            "createdAt": rfc3339(self.created_at),
            "updatedAt": rfc3339(self.updated_at),
        }


def default_settings() -> dict:
    return {"allowChat": True, "allowVideo": True, "allowAudio": True, "requireApproval": False, "e2ee": False}


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

    def to_json(self) -> dict:
        return {
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
        }


@dataclass
class ParticipantRow:
    """`room_participants`: one row per user who ever joined; never deactivated."""
    room_id: str
    user_id: str
    is_banned: bool = False
    is_moderator: bool = False


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
        self.uploads: dict[str, tuple[str, bytes]] = {}  # "<sha>.<ext>" -> (mime, bytes)

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
        return next((r for r in self.rooms.values() if r.name == name), None)

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
        )
        self.rooms[room.id] = room
        self.participants.append(ParticipantRow(room_id=room.id, user_id=owner_id))
        return room

    def delete_room(self, room_id: str) -> None:
        self.rooms.pop(room_id, None)
        self.participants = [p for p in self.participants if p.room_id != room_id]

    def participant_row(self, room_id: str, user_id: str) -> Optional[ParticipantRow]:
        return next((p for p in self.participants if p.room_id == room_id and p.user_id == user_id), None)

    def capacity_count(self, room_id: str) -> int:
        return sum(1 for p in self.participants if p.room_id == room_id and not p.is_banned)
