"""Request-body binding that behaves like Fiber's BodyParser + Go's encoding/json.

Go matches JSON keys to struct fields case-insensitively (an exact match wins),
rejects wrong types, leaves fields absent or null at their zero value, and only
parses bodies whose Content-Type is JSON.
"""
from __future__ import annotations

import json
from typing import Any


class BindError(Exception):
    pass


_MISSING = object()


def parse_json_body(content_type: str, raw: bytes) -> Any:
    """The decoded body, or BindError when Fiber's parser would fail."""
    if not content_type.lower().startswith("application/json"):
        raise BindError("unprocessable content type")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BindError("invalid JSON") from exc


def _lookup(obj: dict, name: str) -> Any:
    if name in obj:
        return obj[name]
    lowered = name.lower()
    for key, value in obj.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return _MISSING


def bind(obj: Any, spec: dict[str, type]) -> dict[str, Any]:
    """Fields of `spec` found in `obj`, type-checked. Absent and null fields are
    left out, so callers can tell "not sent" from a zero value."""
    if not isinstance(obj, dict):
        raise BindError("body is not a JSON object")
    out: dict[str, Any] = {}
    for name, kind in spec.items():
        value = _lookup(obj, name)
        if value is _MISSING or value is None:
            continue
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
        elif kind is str:
            ok = isinstance(value, str)
        elif kind is dict:
            ok = isinstance(value, dict)
        elif kind is list:
            ok = isinstance(value, list)
        else:
            ok = isinstance(value, kind)
        if not ok:
            raise BindError(f"field {name} has the wrong type")
        out[name] = value
    return out
