"""Bedrud's own API description (fixtures/bedrud-swagger.json, server/docs/swagger.json
of the commit in bedrud-swagger.source.json) as a strict checker of JSON answers and
request bodies.

Swagger 2.0 subset the file uses: `$ref` to `#/definitions/...`, `type` (object, array,
string, integer, number, boolean), `properties`, `items`, `additionalProperties`. Read
strictly, because the generated file marks nothing required: an object with
`properties` is *closed* (no other keys) and, in answers, every property must be
present (Go writes every field that is not `omitempty`).

Where the Go handlers answer something else than the file says, the code wins: the
differences are listed below (`ANSWER_DIFFERENCES`, `DEFINITION_DIFFERENCES`), each
with the v0.12.0 source line, and again in docs/DEVSERVER.md. Two extensions are used
in those entries only: `x-nullable` (a Go pointer without omitempty marshals as null)
and `oneOf`.
"""
from __future__ import annotations

import json
import os
from typing import Any, Optional

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
SPEC_FILE = os.path.join(FIXTURES, "bedrud-swagger.json")
SOURCE_FILE = os.path.join(FIXTURES, "bedrud-swagger.source.json")

ERROR = {"$ref": "#/definitions/handlers.ErrorResponse"}
S, I, B = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}


def obj(**props: Any) -> dict:
    return {"type": "object", "properties": props}


SETTINGS = {"$ref": "#/definitions/models.RoomSettings"}
ROOM = {"$ref": "#/definitions/models.Room"}
LOGIN = {"$ref": "#/definitions/auth.LoginResponse"}

# Definitions whose Go marshalling differs from the swagger text: pointers without
# omitempty are null when unset; omitempty fields may be absent.
DEFINITION_DIFFERENCES: dict[str, dict] = {
    "models.User": {"nullable": ["emailVerifiedAt", "passwordChangedAt"],
                    "why": "*time.Time without omitempty marshals as null (models/user.go:92-93)"},
    "models.Room": {"nullable": ["lastActivityAt"], "optional": ["deletedAt"],
                    "why": "LastActivityAt *time.Time (null), DeletedAt omitempty (models/room.go:93-94)"},
    "handlers.webhookDTO": {"optional": ["lastSeen"],
                            "why": "LastSeen *time.Time with omitempty, never set in v0.12.0 (admin_handler.go:1259; "
                                   "UpdateLastSeen has no caller)"},
}

WEBHOOK = {"$ref": "#/definitions/handlers.webhookDTO"}
NULLABLE_S = {"type": "string", "x-nullable": True}
_ADMIN_ROOM = dict(id=S, name=S, createdBy=S, isActive=B, maxParticipants=I, createdAt=S, updatedAt=S, expiresAt=S,
                   adminId=S, isPublic=B, settings=SETTINGS, mode=S, participantsCount=I, lastActivityAt=NULLABLE_S,
                   ownerName=S, ownerEmail=S)
# repository.AdminRoomDetail (room_repository.go:519-537): deletedAt omitempty, so two shapes.
ADMIN_ROOM = {"oneOf": [obj(**_ADMIN_ROOM), obj(**_ADMIN_ROOM, deletedAt=S)]}

# (method, swagger path, status) -> (schema the code answers, why). An entry replaces the
# swagger answer or adds one the swagger file does not list.
ANSWER_DIFFERENCES: dict[tuple[str, str, str], tuple[dict, str]] = {
    ("get", "/api/health", "200"): (obj(status=S, time=I),
                                    "swagger: untyped object (and its path includes /api twice under basePath /api); "
                                    "code: {status, time} (server/server.go:320-322)"),
    ("get", "/api/ready", "200"): (obj(status=S, time=I), "swagger: untyped object; server.go:323-328"),
    # auth
    ("post", "/auth/login", "200"): (LOGIN, "swagger: auth.TokenResponse; code: auth.LoginResponse {user, tokens} "
                                            "(auth_handler.go:348-349, auth.go:223-230)"),
    ("post", "/auth/login", "400"): (ERROR, "undocumented; auth_handler.go:302-320"),
    ("post", "/auth/login", "403"): (obj(error=S, requiresVerification=B, email=S),
                                     "undocumented; unverified email (auth_handler.go:325-333)"),
    ("post", "/auth/login", "429"): (ERROR, "undocumented; AuthRateLimiter (middleware/ratelimit.go:28-32)"),
    ("post", "/auth/register", "200"): ({"oneOf": [LOGIN, obj(requiresVerification=B, message=S, email=S)]},
                                        "swagger: auth.TokenResponse; code: auth.LoginResponse (auth_handler.go:287-293) "
                                        "or, with verification on, {requiresVerification, message, email} (226-235)"),
    ("post", "/auth/register", "403"): (ERROR, "undocumented; registration disabled (auth_handler.go:163-169)"),
    ("post", "/auth/register", "429"): (ERROR, "undocumented; AuthRateLimiter"),
    ("post", "/auth/guest-login", "403"): (ERROR, "undocumented; guest login or registration off "
                                                  "(auth_handler.go:380-393)"),
    ("post", "/auth/guest-login", "429"): (ERROR, "undocumented; AuthRateLimiter"),
    ("post", "/auth/refresh", "200"): (obj(access_token=S, refresh_token=S),
                                       "swagger: auth.TokenResponse (camelCase); code: snake_case "
                                       "(auth_handler.go:495-498)"),
    ("post", "/auth/refresh", "403"): (ERROR, "undocumented; deactivated or unverified (auth_handler.go:471-479)"),
    ("post", "/auth/refresh", "409"): (ERROR, "undocumented; concurrent rotation (auth_handler.go:486-492)"),
    ("post", "/auth/refresh", "429"): (ERROR, "undocumented; AuthRateLimiter"),
    ("post", "/auth/logout", "200"): (obj(message=S), "swagger: map of strings; code: {message} "
                                                      "(auth_handler.go:797-799)"),
    ("get", "/auth/me", "403"): (ERROR, "undocumented; deactivated (middleware/auth.go:51-55) or "
                                        "\"Email not verified\" (auth.go:190-194)"),
    ("get", "/auth/settings", "200"): (obj(serverName=S, registrationEnabled=B, tokenRegistrationOnly=B,
                                           guestLoginEnabled=B, passkeysEnabled=B,
                                           oauthProviders={"type": "array", "items": S},
                                           requireEmailVerification=B, chatMaxMessageCount=I, chatMessageTTLHours=I,
                                           chatUploadMaxBytes=I, chatUploadMaxDimension=I, recordingsEnabled=B,
                                           rnnoiseEnabled=B, krispEnabled=B,
                                           webxdc=obj(enabled=B, experimental=B, baseDomain=S)),
                                       "swagger: untyped object; admin_handler.go:317-336"),
    # rooms
    ("post", "/room/create", "200"): (obj(id=S, name=S, createdBy=S, isActive=B, isPublic=B, maxParticipants=I,
                                          settings=SETTINGS, livekitHost=S, mode=S),
                                      "swagger: 201 untyped; code: 200 (c.JSON) with these keys (room.go:410-414)"),
    ("post", "/room/create", "409"): (ERROR, "undocumented; name held by an active room (room.go:383-385)"),
    ("post", "/room/create", "429"): (ERROR, "undocumented; APIRateLimiter (ratelimit.go:99-121)"),
    ("post", "/room/join", "200"): ({"oneOf": [
        obj(id=S, name=S, token=S, createdBy=S, adminId=S, isActive=B, isPublic=B, maxParticipants=I, expiresAt=S,
            settings=SETTINGS, livekitHost=S, mode=S, activeRecordingId=S),
        obj(status=S, name=S, mode=S, settings=SETTINGS)]},
        "swagger: untyped object; code: the join answer (room.go:517-521) or, for the creator of an inactive "
        "room, {status: \"archived_owned\", name, mode, settings} (room.go:436-443)"),
    ("post", "/room/join", "410"): (ERROR, "undocumented; inactive room, not its creator (room.go:445)"),
    ("post", "/room/refresh-token", "200"): (obj(token=S), "swagger: untyped object; room.go:848"),
    ("post", "/room/refresh-token", "403"): (ERROR, "undocumented; banned or private (room.go:822-834)"),
    ("post", "/room/refresh-token", "410"): (ERROR, "undocumented; inactive room (room.go:818-820)"),
    ("post", "/room/refresh-token", "429"): (ERROR, "undocumented; APIRateLimiter"),
    ("post", "/room/guest-join", "200"): (obj(id=S, name=S, token=S, adminId=S, isPublic=B, livekitHost=S,
                                              activeRecordingId=S, accessToken=S, refreshToken=S,
                                              tokens={"$ref": "#/definitions/auth.TokenPair"}),
                                          "swagger: untyped object; room.go:695-713"),
    ("post", "/room/guest-join", "403"): (ERROR, "undocumented; private, full, banned or guests off "
                                                 "(room.go:610-628, 651-661)"),
    ("post", "/room/guest-join", "410"): (ERROR, "undocumented; inactive room (room.go:631-633)"),
    ("post", "/room/guest-join", "429"): (ERROR, "undocumented; GuestRateLimiter (ratelimit.go:66-89)"),
    ("get", "/room/list", "403"): (ERROR, "undocumented; RejectGuest (middleware/auth.go:147-162)"),
    ("put", "/room/{roomId}/settings", "200"): (ROOM, "swagger: {message}; code: the whole room (room.go:2061)"),
    ("delete", "/room/{roomId}", "202"): (obj(message=S), "swagger: untyped object; room.go:1756"),
    ("delete", "/room/{roomId}", "401"): (ERROR, "undocumented; Protected middleware"),
    # admin (superadmin group, server.go:555-558, 568, 619-624)
    ("get", "/admin/webhooks", "200"): (obj(webhooks={"type": "array", "items": WEBHOOK}, total=I, page=I, limit=I),
                                        "swagger: untyped object; admin_handler.go:1327"),
    ("delete", "/admin/webhooks/{id}", "200"): (obj(status=S), "swagger: map of strings; admin_handler.go:1524"),
    ("post", "/admin/webhooks/{id}/rotate-secret", "200"): (obj(secret=S),
                                                            "swagger: map of strings; admin_handler.go:1562"),
    ("post", "/admin/webhooks/{id}/test", "200"): ({"oneOf": [obj(status=S, httpStatus=I, latencyMs=I),
                                                              obj(status=S, error=S, latencyMs=I),
                                                              obj(status=S, error=S)]},
                                                   "swagger: untyped object; admin_handler.go:1603-1631"),
    ("get", "/admin/rooms", "200"): (obj(rooms={"type": "array", "items": ADMIN_ROOM}, total=I, page=I, limit=I),
                                     "swagger: untyped object; room.go:2164 with repository.AdminRoomDetail; the "
                                     "search parameter is `q`, not `search` (room.go:2068)"),
    ("post", "/room/{roomId}/chat/upload", "200"): (obj(kind=S, url=S, mime=S, size=I, w=I, h=I),
                                                    "swagger: untyped object; storage.ChatAttachment "
                                                    "(storage/chat_upload.go:38-48; name is omitempty)"),
}

# Request bodies whose swagger schema is an untyped object: the Go input structs.
REQUEST_DIFFERENCES: dict[tuple[str, str], tuple[dict, str]] = {
    ("post", "/auth/register"): (obj(email=S, password=S, name=S, inviteToken=S),
                                 "swagger lacks inviteToken (auth_handler.go:119-124)"),
    ("post", "/auth/guest-login"): (obj(name=S), "swagger: untyped object; auth_handler.go:353-355"),
    ("put", "/room/{roomId}/settings"): (obj(isPublic=B, maxParticipants=I, settings=SETTINGS),
                                         "swagger: untyped object; room.go:1981-1985"),
}


class Undocumented(AssertionError):
    pass


class Spec:
    def __init__(self, path: str = SPEC_FILE) -> None:
        with open(path, encoding="utf-8") as f:
            self.doc = json.load(f)
        self.definitions = self.doc["definitions"]

    @staticmethod
    def source() -> dict:
        with open(SOURCE_FILE, encoding="utf-8") as f:
            return json.load(f)

    def operation(self, method: str, path: str) -> dict:
        op = self.doc["paths"].get(path, {}).get(method.lower())
        if op is None:
            raise Undocumented(f"{method.upper()} {path} is not in the swagger file")
        return op

    def answer_schema(self, method: str, path: str, status: int) -> tuple[dict, str]:
        """(schema, where it comes from) for one answer."""
        key = (method.lower(), path, str(status))
        if key in ANSWER_DIFFERENCES:
            schema, why = ANSWER_DIFFERENCES[key]
            return schema, f"code ({why})"
        response = self.operation(method, path).get("responses", {}).get(str(status))
        if response is None or "schema" not in response:
            raise Undocumented(f"{method.upper()} {path} answered {status}, which neither the swagger file "
                               f"nor the list of differences documents")
        return response["schema"], "swagger"

    def documented_statuses(self, method: str, path: str) -> set[str]:
        statuses = set(self.operation(method, path).get("responses", {}))
        statuses |= {s for (m, p, s) in ANSWER_DIFFERENCES if (m, p) == (method.lower(), path)}
        return statuses

    def request_schema(self, method: str, path: str) -> dict:
        key = (method.lower(), path)
        if key in REQUEST_DIFFERENCES:
            return REQUEST_DIFFERENCES[key][0]
        for param in self.operation(method, path).get("parameters", []):
            if param.get("in") == "body":
                return param["schema"]
        raise Undocumented(f"{method.upper()} {path} takes no JSON body in the swagger file")

    # MARK: validation

    def check(self, schema: dict, value: Any, *, answer: bool = True) -> list[str]:
        """Every way `value` breaks `schema` (empty when it conforms). `answer=True`
        also demands every property (Go writes them all); request bodies may leave
        keys out, but may not add unknown ones or use the wrong type."""
        problems: list[str] = []
        self._check(schema, value, "$", answer, problems, nullable=False)
        return problems

    def _resolve(self, schema: dict) -> tuple[dict, dict]:
        ref = schema.get("$ref")
        if ref is None:
            return schema, {}
        name = ref.rsplit("/", 1)[-1]
        return self.definitions[name], DEFINITION_DIFFERENCES.get(name, {})

    def _check(self, schema: dict, value: Any, where: str, answer: bool, out: list[str], nullable: bool) -> None:
        schema, patch = self._resolve(schema)
        if value is None and (nullable or schema.get("x-nullable")):
            return
        if "oneOf" in schema:
            tries = []
            for option in schema["oneOf"]:
                sub: list[str] = []
                self._check(option, value, where, answer, sub, nullable)
                if not sub:
                    return
                tries.append(sub)
            best = min(tries, key=len)
            out.append(f"{where}: matches none of {len(tries)} shapes; closest: " + "; ".join(best))
            return
        kind = schema.get("type")
        if kind == "object" or "properties" in schema:
            if not isinstance(value, dict):
                out.append(f"{where}: expected an object, got {json.dumps(value)[:60]}")
                return
            props: dict = schema.get("properties", {})
            extra = schema.get("additionalProperties")
            for key, item in value.items():
                if key in props:
                    self._check(props[key], item, f"{where}.{key}", answer, out,
                                nullable=key in patch.get("nullable", ()))
                elif isinstance(extra, dict):
                    self._check(extra, item, f"{where}.{key}", answer, out, nullable=False)
                elif not extra:
                    out.append(f"{where}: unknown key {key!r} (the schema has {', '.join(sorted(props)) or 'none'})")
            if answer:
                for key in props:
                    if key not in value and key not in patch.get("optional", ()):
                        out.append(f"{where}: missing key {key!r}")
        elif kind == "array":
            if not isinstance(value, list):
                out.append(f"{where}: expected an array, got {json.dumps(value)[:60]}")
                return
            for n, item in enumerate(value):
                self._check(schema.get("items", {}), item, f"{where}[{n}]", answer, out, nullable=False)
        elif kind == "string":
            if not isinstance(value, str):
                out.append(f"{where}: expected a string, got {json.dumps(value)[:60]}")
        elif kind == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                out.append(f"{where}: expected an integer, got {json.dumps(value)[:60]}")
        elif kind == "number":
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                out.append(f"{where}: expected a number, got {json.dumps(value)[:60]}")
        elif kind == "boolean":
            if not isinstance(value, bool):
                out.append(f"{where}: expected true or false, got {json.dumps(value)[:60]}")

    def is_closed(self, schema: dict) -> bool:
        """True when the schema pins the keys down (so a renamed field is caught)."""
        schema, _ = self._resolve(schema)
        if "oneOf" in schema:
            return all(self.is_closed(s) for s in schema["oneOf"])
        if schema.get("type") == "array":
            return self.is_closed(schema.get("items", {}))
        return bool(schema.get("properties")) and not schema.get("additionalProperties")


def swagger_path(url_path: str) -> Optional[str]:
    """The swagger path of a devserver URL path (`/api/room/<id>/settings` ->
    `/room/{roomId}/settings`); None for routes outside the bot's set."""
    if url_path in ("/api/health", "/api/ready"):
        return url_path
    if not url_path.startswith("/api/"):
        return None
    rest = url_path[4:]
    fixed = {"/auth/login", "/auth/register", "/auth/guest-login", "/auth/refresh", "/auth/logout", "/auth/me",
             "/auth/settings", "/room/create", "/room/join", "/room/refresh-token", "/room/guest-join", "/room/list"}
    if rest in fixed:
        return rest
    parts = rest.split("/")
    if len(parts) == 3 and parts[1] == "room":
        return "/room/{roomId}"
    if len(parts) == 4 and parts[1] == "room" and parts[3] == "settings":
        return "/room/{roomId}/settings"
    if len(parts) == 5 and parts[1] == "room" and parts[3:] == ["chat", "upload"]:
        return "/room/{roomId}/chat/upload"
    if rest in ("/admin/webhooks", "/admin/rooms"):
        return rest
    if len(parts) == 4 and parts[1:3] == ["admin", "webhooks"]:
        return "/admin/webhooks/{id}"
    if len(parts) == 5 and parts[1:3] == ["admin", "webhooks"] and parts[4] in ("rotate-secret", "test"):
        return "/admin/webhooks/{id}/" + parts[4]
    return None
