"""LiveKit-style identifiers (RM_, PA_, TR_, ND_) and their validation.

The official SDK converts every SID it parses with an unwrap: a wrong prefix is a
panic that kills the client, so everything the devserver emits goes through here.
"""
from __future__ import annotations

import re
import secrets
import string

_ALPHABET = string.ascii_letters + string.digits
_PATTERN = re.compile(r"^(RM|PA|TR|ND)_[A-Za-z0-9]{12}$")


def new_sid(prefix: str) -> str:
    if prefix not in ("RM", "PA", "TR", "ND"):
        raise ValueError(f"unknown SID prefix {prefix!r}")
    sid = f"{prefix}_" + "".join(secrets.choice(_ALPHABET) for _ in range(12))
    check_sid(sid, prefix)
    return sid


def check_sid(sid: str, prefix: str) -> str:
    """Returns `sid` or raises ValueError when it is not a `<prefix>_` SID."""
    if not isinstance(sid, str) or not _PATTERN.match(sid) or not sid.startswith(prefix + "_"):
        raise ValueError(f"invalid {prefix} SID {sid!r}")
    return sid
