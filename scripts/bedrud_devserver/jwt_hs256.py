"""HS256 JSON Web Tokens (RFC 7519 / RFC 7515), just what Bedrud and LiveKit use.

Pure functions: the current time is passed in, so tests can move the clock.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any


class JWTError(Exception):
    """A token that cannot be used. `reason` is one of: malformed, algorithm,
    signature, expired, not_yet_valid, missing_exp."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    if not isinstance(text, str) or any(c not in _B64URL_ALPHABET for c in text):
        raise JWTError("malformed", "bad base64url")
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.urlsafe_b64decode(padded)
    except (ValueError, TypeError) as exc:
        raise JWTError("malformed", "bad base64url") from exc


_B64URL_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def encode(claims: dict[str, Any], secret: str) -> str:
    """Signs `claims` with HMAC-SHA256. Keys keep their insertion order."""
    header = {"alg": "HS256", "typ": "JWT"}
    h = _b64url(json.dumps(header, separators=(",", ":")).encode())
    p = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{h}.{p}".encode("ascii")
    sig = hmac.new(secret.encode(), signing_input, hashlib.sha256).digest()
    return f"{h}.{p}.{_b64url(sig)}"


def peek(token: str) -> dict[str, Any]:
    """The claims without any verification (to pick the key by `iss`)."""
    if not isinstance(token, str) or len(token) > 16384:
        raise JWTError("malformed", "token too long or not text")
    parts = token.split(".")
    if len(parts) != 3:
        raise JWTError("malformed", "expected three segments")
    try:
        claims = json.loads(_b64url_decode(parts[1]))
    except (ValueError, UnicodeDecodeError) as exc:
        raise JWTError("malformed", "segment is not JSON") from exc
    if not isinstance(claims, dict):
        raise JWTError("malformed", "segment is not a JSON object")
    return claims


def decode(
    token: str,
    secret: str,
    *,
    now: float,
    leeway: float = 0.0,
    require_exp: bool = False,
) -> dict[str, Any]:
    """Verifies signature and time claims and returns the claims.

    Raises JWTError with a reason on any problem; never anything else.
    """
    if not isinstance(token, str) or len(token) > 16384:
        raise JWTError("malformed", "token too long or not text")
    parts = token.split(".")
    if len(parts) != 3:
        raise JWTError("malformed", "expected three segments")
    try:
        header = json.loads(_b64url_decode(parts[0]))
        claims = json.loads(_b64url_decode(parts[1]))
    except (ValueError, UnicodeDecodeError) as exc:
        raise JWTError("malformed", "segment is not JSON") from exc
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise JWTError("malformed", "segment is not a JSON object")
    if header.get("alg") != "HS256":
        raise JWTError("algorithm", "unexpected signing method")
    expected = hmac.new(secret.encode(), f"{parts[0]}.{parts[1]}".encode("ascii"), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, _b64url_decode(parts[2])):
        raise JWTError("signature", "signature is invalid")
    exp = claims.get("exp")
    if exp is None:
        if require_exp:
            raise JWTError("missing_exp", "token has no exp")
    elif not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise JWTError("malformed", "exp is not a number")
    elif now > exp + leeway:
        raise JWTError("expired", "token is expired")
    nbf = claims.get("nbf")
    if nbf is not None:
        if not isinstance(nbf, (int, float)) or isinstance(nbf, bool):
            raise JWTError("malformed", "nbf is not a number")
        if now + leeway < nbf:
            raise JWTError("not_yet_valid", "token is not valid yet")
    return claims
