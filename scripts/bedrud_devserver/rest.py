"""Bedrud's REST API (`/api/...`) as Bedrud v0.12.0 (a4fa6dc) answers it.

Shapes, status codes and error texts follow docs/reference/bedrud-api.md, which
cites the v0.12.0 source; each rule below names the file:line it follows. Quirks
kept: login's `{user, tokens:{accessToken, refreshToken}}` versus refresh's
snake_case, plain-text "Not Found" from the moderation handlers, one valid refresh
token per user. Where Bedrud's swagger.json disagrees, this follows the Go code
(docs/DEVSERVER.md lists the differences).
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import secrets
import string
import struct
import time
import unicodedata
import uuid
import zlib
from email.utils import parseaddr
from typing import TYPE_CHECKING, Any, Callable, Optional

from aiohttp import web

from . import jwt_hs256
from .binding import BindError, bind, parse_json_body
from .config import ServerConfig
from .ratelimit import RateLimiter
from .store import (WEBHOOK_EVENTS, Room, Store, User, Webhook, generate_room_name, new_webhook_secret, rfc3339,
                    settings_from_request, token_hash, validate_room_name)
from .webhooks import Dispatcher, url_problem

if TYPE_CHECKING:
    from .sfu import SFU

log = logging.getLogger("devserver.rest")

MAX_PASSWORD = 128
MIN_PASSWORD = 12
UPLOAD_MAX_BYTES = 10 * 1024 * 1024  # handlers/room.go:211-214 with no admin setting
BODY_LIMIT = UPLOAD_MAX_BYTES  # Fiber's BodyLimit is the upload maximum (server.go:219-229); app.py's too
UPLOAD_INLINE_MAX = 512000  # InlineMaxBytes default (storage/chat_upload.go:242-245)
UPLOAD_MAX_DIMENSION = 8192  # defaultChatUploadMaxDimension (handlers/room.go:260-266)
MAX_PARTICIPANTS_LIMIT = 1000  # room.go:235-244 with no admin setting
ROOM_MODES = ("standard", "webinar", "broadcast")  # room.go:325-330


# MARK: - response helpers

def json_response(body: Any, status: int = 200) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(body, separators=(",", ":")).encode(),
        content_type="application/json",
    )


def error(status: int, message: str) -> web.Response:
    return json_response({"error": message}, status)


def plain(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text, content_type="text/plain", charset="utf-8")


def plain_not_found() -> web.Response:
    """The bare 404 some room handlers send (Fiber's `SendStatus(404)`)."""
    return plain(404, "Not Found")


SUCCESS = {"status": "success"}

GUEST_FORBIDDEN = "Guests cannot create or manage rooms"  # middleware/auth.go:160
UNVERIFIED_LOGIN = "Please verify your email before signing in"  # auth_handler.go:328, 476


def sanitize_name(name: str) -> str:
    """Bedrud's name filter (auth_handler.go:143-148, room.go:594-599): control
    characters and `<>&"'` are dropped."""
    return "".join(c for c in name if not (unicodedata.category(c) == "Cc" or c in "<>&\"'"))


def canonical_email(email: str) -> str:
    """auth.CanonicalizeEmail, the part that matters here: trimmed and lower case."""
    return unicodedata.normalize("NFC", email.strip()).lower()


class RestAPI:
    """Handlers for every `/api` route. Owns nothing but references: the store,
    the SFU (Bedrud's LiveKit), the config and a clock."""

    def __init__(self, config: ServerConfig, store: Store, sfu: "SFU", clock: Callable[[], float] = time.time,
                 webhooks: Optional[Dispatcher] = None) -> None:
        self.config = config
        self.store = store
        self.sfu = sfu
        self.clock = clock
        self.webhooks = webhooks or Dispatcher(store)
        # One limiter per route, as server.go:414-417 builds a fresh limiter.New for each.
        self.limiters: dict[str, RateLimiter] = {}

    def routes(self) -> list[web.RouteDef]:
        r = web
        auth_limit = self._limited("auth")
        return [
            r.get("/api/health", self.health),
            r.get("/api/ready", self.ready),
            r.get("/health", self.redirect_health),
            r.get("/ready", self.redirect_ready),
            r.post("/api/auth/register", auth_limit("register", self.register)),
            r.post("/api/auth/login", auth_limit("login", self.login)),
            r.post("/api/auth/guest-login", auth_limit("guest-login", self.guest_login)),
            r.post("/api/auth/refresh", auth_limit("refresh", self.refresh)),
            r.post("/api/auth/logout", self.logout),
            r.get("/api/auth/me", self.get_me),
            r.put("/api/auth/me", self.put_me),
            r.put("/api/auth/password", self.put_password),
            r.get("/api/auth/preferences", self.get_preferences),
            r.put("/api/auth/preferences", self.put_preferences),
            r.get("/api/auth/settings", self.auth_settings),
            r.post("/api/room/create", self.create_room),
            r.post("/api/room/join", self.join_room),
            r.post("/api/room/refresh-token", self.refresh_livekit_token),
            r.post("/api/room/guest-join", self._limited("guest")("guest-join", self.guest_join)),
            r.get("/api/room/list", self.list_rooms),
            r.put("/api/room/{roomId}/settings", self.room_settings),
            r.delete("/api/room/{roomId}", self.delete_room),
            r.post("/api/room/{roomId}/kick/{identity}", self.kick),
            r.post("/api/room/{roomId}/ban/{identity}", self.ban),
            r.post("/api/room/{roomId}/mute/{identity}", self.mute),
            r.post("/api/room/{roomId}/video/{identity}/off", self.video_off),
            r.post("/api/room/{roomId}/screenshare/{identity}/stop", self.screenshare_stop),
            r.post("/api/room/{roomId}/promote/{identity}", self.promote),
            r.post("/api/room/{roomId}/demote/{identity}", self.demote),
            r.post("/api/room/{roomId}/chat/{identity}/block", self.chat_block),
            r.post("/api/room/{roomId}/deafen/{identity}", self.deafen),
            r.post("/api/room/{roomId}/undeafen/{identity}", self.undeafen),
            r.post("/api/room/{roomId}/ask/{identity}/{action}", self.ask),
            r.post("/api/room/{roomId}/spotlight/{identity}", self.spotlight),
            r.post("/api/room/{roomId}/stage/{identity}/bring", self.not_implemented),
            r.post("/api/room/{roomId}/stage/{identity}/remove", self.not_implemented),
            r.get("/api/room/{roomId}/participant/{identity}/info", self.participant_info),
            r.post("/api/room/{roomId}/chat/upload", self.chat_upload),
            r.get("/uploads/chat/{path:.+}", self.serve_upload),
            # The superadmin group (server.go:555-558, 568, 619-624).
            r.get("/api/admin/rooms", self.admin_list_rooms),
            r.get("/api/admin/webhooks", self.admin_list_webhooks),
            r.post("/api/admin/webhooks", self.admin_create_webhook),
            r.put("/api/admin/webhooks/{id}", self.admin_update_webhook),
            r.delete("/api/admin/webhooks/{id}", self.admin_delete_webhook),
            r.post("/api/admin/webhooks/{id}/rotate-secret", self.admin_rotate_webhook_secret),
            r.post("/api/admin/webhooks/{id}/test", self.admin_test_webhook),
        ]

    # MARK: - tokens

    def _issue_tokens(self, claims_base: dict) -> tuple[str, str]:
        now = int(self.clock())
        access = dict(claims_base)
        access.update({"iss": "bedrud", "sub": claims_base["userId"], "aud": ["bedrud"],
                       "exp": now + int(self.config.access_ttl), "iat": now})
        refresh = dict(claims_base)
        refresh.update({"iss": "bedrud", "sub": claims_base["userId"], "aud": ["bedrud"],
                        "exp": now + int(self.config.refresh_ttl), "iat": now, "jti": str(uuid.uuid4())})
        return (jwt_hs256.encode(access, self.config.jwt_secret), jwt_hs256.encode(refresh, self.config.jwt_secret))

    @staticmethod
    def _claims_for(user: User) -> dict:
        """auth.Claims (jwt.go:142-156); emailVerifiedAt is omitempty."""
        claims = {"userId": user.id, "email": user.email, "name": user.name, "provider": user.provider,
                  "accesses": list(user.accesses)}
        if user.email_verified_at is not None:
            from .store import rfc3339
            claims["emailVerifiedAt"] = rfc3339(user.email_verified_at)
        return claims

    def _token_pair(self, user: User) -> tuple[str, str]:
        """GenerateTokenPair + UpdateRefreshToken: the new refresh token is the one valid one."""
        access, refresh = self._issue_tokens(self._claims_for(user))
        user.refresh_token_hash = token_hash(refresh)
        return access, refresh

    def _login_response(self, user: User) -> web.Response:
        access, refresh = self._token_pair(user)
        resp = json_response({"user": user.to_json(), "tokens": {"accessToken": access, "refreshToken": refresh}})
        self._set_cookies(resp, access, refresh)
        return resp

    def _set_cookies(self, resp: web.Response, access: str, refresh: str) -> None:
        secure = self.config.tls
        same_site = "None" if secure else "Lax"
        resp.set_cookie("access_token", access, max_age=int(self.config.access_ttl), path="/",
                        httponly=True, secure=secure, samesite=same_site)
        resp.set_cookie("refresh_token", refresh, max_age=7 * 24 * 3600, path="/",
                        httponly=True, secure=secure, samesite=same_site)

    def _authenticate(self, request: web.Request, *, mutation: bool = False, verified: bool = False,
                      no_guest: bool = False) -> tuple[Optional[dict], Optional[web.Response]]:
        """Bedrud's middleware chain, in its order (server.go:414-474):
        Protected (middleware/auth.go:33-60: Bearer header, prefix case-insensitive, whole
        value when there is no prefix, else the `access_token` cookie; a deactivated
        account is 403), RequireBearerForMutations (auth.go:121-135), RequireEmailVerified
        (auth.go:165-197, only with --require-email-verification), RejectGuest (auth.go:147-162)."""
        header = request.headers.get("Authorization")
        if header:
            token = header[7:] if header[:7].lower() == "bearer " else header
        else:
            token = request.cookies.get("access_token", "")
        if not token:
            return None, error(401, "Missing authorization")
        try:
            claims = jwt_hs256.decode(token, self.config.jwt_secret, now=self.clock())
        except jwt_hs256.JWTError:
            return None, error(401, "Invalid token")
        if token_hash(token) in self.store.revoked_access or not isinstance(claims.get("userId"), str):
            return None, error(401, "Invalid token")
        user = self.store.users.get(claims["userId"])
        if user is not None and not user.is_active:
            return None, error(403, "Account is deactivated")
        if mutation and not (header or "").lower().startswith("bearer "):
            return None, error(401, "Authorization header required for state-changing requests")
        if verified and self.config.require_email_verification and claims.get("provider") != "guest":
            if user is None:
                return None, error(401, "User not found")
            if user.email_verified_at is None:
                return None, error(403, "Email not verified")
        if no_guest and claims.get("provider") == "guest":
            return None, error(403, GUEST_FORBIDDEN)
        return claims, None

    async def _body(self, request: web.Request) -> Any:
        raw = await request.read()
        return parse_json_body(request.headers.get("Content-Type", ""), raw)

    # MARK: - rate limits and health

    def _limiter(self, kind: str, route: str) -> RateLimiter:
        limit = {"auth": self.config.auth_rate_limit, "api": self.config.api_rate_limit,
                 "guest": self.config.guest_rate_limit}[kind]
        key = f"{kind}:{route}"
        limiter = self.limiters.get(key)
        if limiter is None or limiter.limit != limit or limiter.window != self.config.rate_window:
            limiter = RateLimiter(limit, self.config.rate_window)
            self.limiters[key] = limiter
        return limiter

    def _rate_check(self, kind: str, route: str, request: web.Request) -> tuple[Optional[web.Response], dict]:
        """middleware/ratelimit.go: keyed on the client address; 429 with the limiter's
        text and Retry-After when over; X-RateLimit-* headers otherwise (Fiber's limiter)."""
        decision = self._limiter(kind, route).hit(request.remote or "", self.clock())
        if decision is None:
            return None, {}
        if not decision.allowed:
            text = {"auth": "too many requests, please try again later", "api": "too many requests",
                    "guest": "too many guest join attempts"}[kind]
            resp = error(429, text)
            resp.headers["Retry-After"] = str(decision.reset_in)
            return resp, {}
        return None, {"X-RateLimit-Limit": str(decision.limit), "X-RateLimit-Remaining": str(decision.remaining),
                      "X-RateLimit-Reset": str(decision.reset_in)}

    def _limited(self, kind: str) -> Callable[[str, Callable], Callable]:
        def wrap(route: str, handler: Callable) -> Callable:
            async def limited(request: web.Request) -> web.Response:
                refused, headers = self._rate_check(kind, route, request)
                if refused is not None:
                    return refused
                resp = await handler(request)
                resp.headers.update(headers)
                return resp
            return limited
        return wrap

    async def health(self, request: web.Request) -> web.Response:
        """server.go:320-322."""
        return json_response({"status": "healthy", "time": int(self.clock())})

    async def ready(self, request: web.Request) -> web.Response:
        """server.go:323-328 (the in-memory store is always reachable)."""
        return json_response({"status": "ready", "time": int(self.clock())})

    async def redirect_health(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/api/health")  # server.go:329, Fiber's Redirect is 302

    async def redirect_ready(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/api/ready")

    # MARK: - auth

    async def register(self, request: web.Request) -> web.Response:
        """auth_handler.go:118-294."""
        try:
            body = bind(await self._body(request), {"email": str, "password": str, "name": str, "inviteToken": str})
        except BindError:
            return error(400, "Invalid input")
        email = canonical_email(body.get("email", ""))
        password = body.get("password", "")
        name = sanitize_name(body.get("name", ""))
        if not _valid_email(email):
            return error(400, "Invalid email format")
        if len(name.encode()) < 2:
            return error(400, "Name must be at least 2 characters")
        if len(name.encode()) > 255:
            return error(400, "Name must be at most 255 characters")
        if not self.config.registration:
            return error(403, "Registration is currently disabled")
        if len(password) < MIN_PASSWORD:
            return error(400, "Password must be at least 12 characters")
        if len(password) > MAX_PASSWORD:
            return error(400, "Password must be at most 128 characters")
        if self.store.user_by_email(email) is not None:
            return error(400, "Unable to register with the provided details")  # auth_handler.go:211-222
        user = self.store.add_user(email, name, password, "local", ["user"], self.clock())
        if self.config.require_email_verification:  # auth_handler.go:226-235: no tokens
            return json_response({"requiresVerification": True,
                                  "message": "Please check your email to verify your account", "email": user.email})
        return self._login_response(user)

    async def login(self, request: web.Request) -> web.Response:
        """auth_handler.go:296-350 and auth.go:168-231."""
        try:
            body = bind(await self._body(request), {"email": str, "password": str})
        except BindError:
            return error(400, "Invalid input")
        email, password = canonical_email(body.get("email", "")), body.get("password", "")
        if not email or not password:
            return error(400, "Email and password are required")
        if len(password) > MAX_PASSWORD:
            return error(400, "Password must be at most 128 characters")
        from .store import check_password
        user = self.store.user_by_email(email)
        if user is None or not user.password_hash or not check_password(password, user.password_hash) or not user.is_active:
            return error(401, "Invalid credentials")
        if self.config.require_email_verification and user.email_verified_at is None:
            return json_response({"error": UNVERIFIED_LOGIN, "requiresVerification": True, "email": user.email}, 403)
        return self._login_response(user)

    async def guest_login(self, request: web.Request) -> web.Response:
        """auth_handler.go:352-413."""
        try:
            body = bind(await self._body(request), {"name": str})
        except BindError:
            return error(400, "Invalid input")
        name = body.get("name", "")
        if not name:
            return error(400, "Name is required")
        name = sanitize_name(name)
        if not 2 <= len(name.encode()) <= 50:
            return error(400, "Name must be between 2 and 50 characters")
        if not self.config.registration:
            return error(403, "Registration is currently disabled")
        if not self.config.guest_login:
            return error(403, "Guest login is currently disabled")
        guest_id = str(uuid.uuid4())
        user = self.store.add_user(f"guest_{guest_id}@bedrud.guest", name, "", "guest", ["guest"], self.clock())
        return self._login_response(user)

    async def refresh(self, request: web.Request) -> web.Response:
        """auth_handler.go:428-499 with auth.go:280-299 and 521-551. A blocked, expired,
        foreign or already-replaced token is 401; 409 only when another refresh of the
        same token rotated it while this one was between its check and its rotation."""
        token = ""
        try:
            body = bind(await self._body(request), {"refresh_token": str})
            token = body.get("refresh_token", "")
        except BindError:
            pass  # Bedrud ignores parse errors here and falls back to the cookie.
        if not token:
            token = request.cookies.get("refresh_token", "")
        if not token:
            return error(400, "No refresh token provided")
        digest = token_hash(token)
        try:
            claims = jwt_hs256.decode(token, self.config.jwt_secret, now=self.clock())
        except jwt_hs256.JWTError:
            return error(401, "Invalid or expired refresh token")
        user = self.store.users.get(claims.get("userId", ""))
        if user is None or digest in self.store.blocked_refresh or user.refresh_token_hash != digest:
            return error(401, "Invalid or expired refresh token")
        if not user.is_active:
            return error(403, "Account is deactivated")
        if self.config.require_email_verification and user.email_verified_at is None:
            return error(403, UNVERIFIED_LOGIN)
        # The handler's database round trips between the check above and the atomic swap.
        if self.config.refresh_latency > 0:
            await asyncio.sleep(self.config.refresh_latency)
        self.store.blocked_refresh.add(digest)
        if user.refresh_token_hash != digest:  # UpdateRefreshTokenAtomic found another token
            return error(409, "Refresh token has already been rotated")
        # Fresh claims from the user row (auth_handler.go:455-466), not from the old token.
        access, new_refresh = self._token_pair(user)
        resp = json_response({"access_token": access, "refresh_token": new_refresh})
        self._set_cookies(resp, access, new_refresh)
        return resp

    async def logout(self, request: web.Request) -> web.Response:
        """auth_handler.go:767-800: a body that does not parse is ignored (cookie fallback)."""
        claims, failure = self._authenticate(request, mutation=True)
        if failure:
            return failure
        refresh = ""
        try:
            body = bind(await self._body(request), {"refresh_token": str})
            refresh = body.get("refresh_token", "")
        except BindError:
            pass
        refresh = refresh or request.cookies.get("refresh_token", "")
        if refresh:
            self.store.blocked_refresh.add(token_hash(refresh))
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer "):  # quirk: only this exact prefix is stripped here
            self.store.revoked_access.add(token_hash(header[7:]))
        elif not header and request.cookies.get("access_token"):
            self.store.revoked_access.add(token_hash(request.cookies["access_token"]))
        resp = json_response({"message": "Successfully logged out"})
        resp.del_cookie("access_token", path="/")
        resp.del_cookie("refresh_token", path="/")
        return resp

    async def get_me(self, request: web.Request) -> web.Response:
        """auth_handler.go:501-516: a deleted user is 401 "User not found"."""
        claims, failure = self._authenticate(request, verified=True)
        if failure:
            return failure
        user = self.store.users.get(claims["userId"])
        if user is None:
            return error(401, "User not found")
        return json_response(user.to_json())

    async def put_me(self, request: web.Request) -> web.Response:
        claims, failure = self._authenticate(request, mutation=True, verified=True)
        if failure:
            return failure
        try:
            body = bind(await self._body(request), {"name": str})
        except BindError:
            return error(400, "Invalid input")
        name = body.get("name", "")
        if len(name.encode()) < 2:
            return error(400, "Name must be at least 2 characters")
        user = self.store.users.get(claims["userId"])
        if user is None:
            return error(400, "user not found")
        user.name = name
        user.updated_at = self.clock()
        return json_response(user.to_json())

    async def put_password(self, request: web.Request) -> web.Response:
        claims, failure = self._authenticate(request, mutation=True, verified=True)
        if failure:
            return failure
        try:
            body = bind(await self._body(request), {"currentPassword": str, "newPassword": str})
        except BindError:
            return error(400, "Invalid input")
        new = body.get("newPassword", "")
        if len(new) < MIN_PASSWORD:
            return error(400, "New password must be at least 12 characters")
        if len(new) > MAX_PASSWORD:
            return error(400, "New password must be at most 128 characters")
        user = self.store.users.get(claims["userId"])
        if user is None:
            return error(400, "user not found")
        if user.provider != "local":
            return error(400, "password change is only available for local accounts")
        from .store import check_password, hash_password
        if user.password_hash and not check_password(body.get("currentPassword", ""), user.password_hash):
            return error(400, "current password is incorrect")
        user.password_hash = hash_password(new)
        return json_response({"message": "Password updated successfully"})

    async def get_preferences(self, request: web.Request) -> web.Response:
        claims, failure = self._authenticate(request, verified=True)
        if failure:
            return failure
        user = self.store.users.get(claims["userId"])
        return json_response({"preferencesJson": user.preferences_json if user else "{}"})

    async def put_preferences(self, request: web.Request) -> web.Response:
        claims, failure = self._authenticate(request, mutation=True, verified=True)
        if failure:
            return failure
        try:
            body = bind(await self._body(request), {"preferencesJson": str})
        except BindError:
            return error(400, "Invalid input")
        prefs = body.get("preferencesJson", "")
        if len(prefs.encode()) > 4096:
            return error(413, "preferencesJson too large (max 4 KB)")
        try:
            json.loads(prefs)
        except ValueError:
            return error(400, "preferencesJson must be valid JSON")
        user = self.store.users.get(claims["userId"])
        if user is not None:
            user.preferences_json = prefs
        return json_response({"message": "Preferences updated"})

    async def auth_settings(self, request: web.Request) -> web.Response:
        """GetPublicSettings (admin_handler.go:292-336) with the settings table's defaults."""
        return json_response({
            "serverName": "", "registrationEnabled": self.config.registration, "tokenRegistrationOnly": False,
            "guestLoginEnabled": self.config.guest_login, "passkeysEnabled": False, "oauthProviders": [],
            "requireEmailVerification": self.config.require_email_verification, "chatMaxMessageCount": 10000,
            "chatMessageTTLHours": 2160, "chatUploadMaxBytes": UPLOAD_MAX_BYTES, "chatUploadMaxDimension": 8192,
            "recordingsEnabled": False, "rnnoiseEnabled": False, "krispEnabled": False,
            "webxdc": {"enabled": False, "experimental": True, "baseDomain": ""}})

    # MARK: - rooms

    def _livekit_token(self, room: Room, identity: str, name: str, metadata: Optional[str], can_update_metadata: bool) -> str:
        now = int(self.clock())
        video = {"roomJoin": True, "room": room.name, "canUpdateOwnMetadata": can_update_metadata}
        claims: dict[str, Any] = {"iss": self.config.lk_api_key, "sub": identity, "nbf": now,
                                  "exp": now + int(self.config.lk_token_ttl), "name": name, "video": video}
        if metadata is not None:
            claims["metadata"] = metadata
        return jwt_hs256.encode(claims, self.config.lk_api_secret)

    def _member_token(self, room: Room, claims: dict) -> str:
        """The join / refresh-token LiveKit grant (room.go:498-502, 837-841): identity is
        the user id, name the user's current name, metadata their accesses."""
        user = self.store.users.get(claims["userId"])
        name = (user.name.strip() if user is not None and user.name.strip() else str(claims.get("name", "")).strip())
        accesses = claims.get("accesses") if isinstance(claims.get("accesses"), list) else []
        metadata = json.dumps({"accesses": accesses}, separators=(",", ":"))
        return self._livekit_token(room, claims["userId"], name, metadata, True)

    async def create_room(self, request: web.Request) -> web.Response:
        """room.go:291-415 with room_repository.go:28-143. Only an *active* room holds its
        name: creating a room whose namesake is inactive (idle or archived) makes a new
        room (new id) whoever asks — this is how the web client's "Start new meeting"
        recreates an archived_owned room."""
        claims, failure = self._authenticate(request, mutation=True, verified=True, no_guest=True)
        if failure:
            return failure
        refused, headers = self._rate_check("api", "create", request)
        if refused is not None:
            return refused
        try:
            body = bind(await self._body(request), {"name": str, "maxParticipants": int, "isPublic": bool,
                                                    "mode": str, "settings": dict})
            settings_in = bind(body.get("settings", {}), {k: bool for k in settings_from_request({})})
        except BindError:
            return error(400, "Invalid request body")
        settings = settings_from_request(settings_in)
        settings["recordingsAllowed"] = True  # room.go:297
        name = body.get("name", "").strip().lower() or generate_room_name()
        problem = validate_room_name(name)
        if problem:
            return error(400, problem)
        max_participants = max(0, body.get("maxParticipants", 0))
        if max_participants > MAX_PARTICIPANTS_LIMIT:
            return error(400, f"maxParticipants must be at most {MAX_PARTICIPANTS_LIMIT}")
        mode = body.get("mode", "") or "standard"
        if mode not in ROOM_MODES:
            return error(400, "Invalid room mode")
        if not self._is_superadmin(claims):
            settings["isPersistent"] = False  # room.go:346
        # Bedrud calls LiveKit CreateRoom before its own insert (room.go:366).
        self.sfu.create_room(name, max_participants)
        if self.store.active_room_named(name) is not None:
            return error(409, "a room with this name already exists")
        room = self.store.add_room(name, claims["userId"], body.get("isPublic", False), mode, settings, self.clock())
        room.max_participants = max_participants
        self.webhooks.dispatch_room_event("room.created", room.id, room.name, claims["userId"])  # room.go:392
        resp = json_response({"id": room.id, "name": room.name, "createdBy": room.created_by,
                              "isActive": room.is_active, "isPublic": room.is_public,
                              "maxParticipants": room.max_participants, "settings": dict(room.settings),
                              "livekitHost": self.config.livekit_host, "mode": room.mode})
        resp.headers.update(headers)
        return resp

    async def join_room(self, request: web.Request) -> web.Response:
        """room.go:417-522."""
        claims, failure = self._authenticate(request, mutation=True, verified=True)
        if failure:
            return failure
        try:
            body = bind(await self._body(request), {"roomName": str})
        except BindError:
            return error(400, "Invalid body")
        room = self.store.room_by_name(body.get("roomName", "").strip().lower())
        if room is None:
            return error(404, "Room not found")
        user_id = claims["userId"]
        if not room.is_active:  # room.go:436-446
            if room.created_by == user_id:
                return json_response({"status": "archived_owned", "name": room.name, "mode": room.mode,
                                      "settings": dict(room.settings)})
            return error(410, "room is no longer active")
        if not room.is_public and room.created_by != user_id and not self.store.is_participant(room.id, user_id):
            # room.go:448-461
            if room.settings.get("requireApproval"):
                return error(403, "This room requires approval to join")
            return error(403, "This room is private")
        problem = self.store.enrol(room, user_id, self.clock())
        if problem is not None:
            return error(403, problem)
        self.webhooks.dispatch_room_event("participant.joined", room.id, room.name, user_id)  # room.go:476
        self.sfu.create_room(room.name, room.max_participants)
        out = room.to_json()
        for key in ("createdAt", "updatedAt", "lastActivityAt", "deletedAt"):
            out.pop(key, None)
        out.update({"token": self._member_token(room, claims), "livekitHost": self.config.livekit_host,
                    "activeRecordingId": ""})
        return json_response(out)

    async def refresh_livekit_token(self, request: web.Request) -> web.Response:
        """POST /api/room/refresh-token (room.go:796-849): a new LiveKit token for a room
        the caller may be in, without enrolling again (no capacity check)."""
        claims, failure = self._authenticate(request, mutation=True, verified=True)
        if failure:
            return failure
        refused, headers = self._rate_check("api", "refresh-token", request)
        if refused is not None:
            return refused
        try:
            body = bind(await self._body(request), {"roomName": str})
        except BindError:
            return error(400, "Invalid body")
        name = body.get("roomName", "").strip().lower()
        if not name:
            return error(400, "roomName required")
        room = self.store.room_by_name(name)
        if room is None:
            return error(404, "Room not found")
        if not room.is_active:
            return error(410, "room is no longer active")
        user_id = claims["userId"]
        row = self.store.participant_row(room.id, user_id)
        if row is not None and row.is_banned:
            return error(403, "you are banned from this room")
        if not room.is_public and room.created_by != user_id and not self.store.is_participant(room.id, user_id):
            return error(403, "This room is private")
        resp = json_response({"token": self._member_token(room, claims)})
        resp.headers.update(headers)
        return resp

    async def guest_join(self, request: web.Request) -> web.Response:
        """room.go:585-714: guests are enrolled like members and also get Bedrud tokens."""
        try:
            body = bind(await self._body(request), {"roomName": str, "guestName": str})
        except BindError:
            return error(400, "Invalid body")
        guest_name = sanitize_name(body.get("guestName", "").strip())
        if not guest_name:
            return error(400, "Guest name is required")
        if len(guest_name.encode()) > 50:
            return error(400, "Guest name too long (max 50 characters)")
        if not self.config.guest_login:
            return error(403, "Guest login is currently disabled")
        room = self.store.room_by_name(body.get("roomName", "").strip().lower())
        if room is None:
            return error(404, "Room not found")
        if not room.is_public:
            return error(403, "This room is private")
        if not room.is_active:
            return error(410, "room is no longer active")
        alphabet = string.ascii_lowercase + string.digits
        identity = "guest-" + "".join(secrets.choice(alphabet) for _ in range(8))
        now = self.clock()
        user = User(id=identity, email=f"{identity}@bedrud.guest", name=guest_name, provider="guest",
                    accesses=["guest"], password_hash="", created_at=now, updated_at=now)
        self.store.users[identity] = user
        problem = self.store.enrol(room, identity, now)
        if problem is not None:
            return error(403, problem)
        self.webhooks.dispatch_room_event("participant.joined", room.id, room.name, identity)  # room.go:665
        self.sfu.create_room(room.name, room.max_participants)
        token = self._livekit_token(room, identity, guest_name, None, True)
        access, refresh = self._token_pair(user)
        return json_response({"id": room.id, "name": room.name, "token": token, "adminId": room.admin_id,
                              "isPublic": room.is_public, "livekitHost": self.config.livekit_host,
                              "activeRecordingId": "", "accessToken": access, "refreshToken": refresh,
                              "tokens": {"accessToken": access, "refreshToken": refresh}})

    async def list_rooms(self, request: web.Request) -> web.Response:
        """room.go:938-951 with GetLatestRoomsCreatedByUser (room_repository.go:896-913):
        the caller's rooms that are not archived, newest first, one per name."""
        claims, failure = self._authenticate(request, verified=True, no_guest=True)
        if failure:
            return failure
        mine = [r for r in self.store.rooms.values() if r.created_by == claims["userId"] and r.deleted_at is None]
        mine.sort(key=lambda r: r.created_at, reverse=True)
        seen: set[str] = set()
        latest = []
        for room in mine:
            if room.name not in seen:
                seen.add(room.name)
                latest.append(room)
        return json_response([r.to_json() for r in latest])

    def _is_superadmin(self, claims: dict) -> bool:
        acc = claims.get("accesses")
        return isinstance(acc, list) and "superadmin" in acc

    def _is_owner(self, claims: dict, room: Room) -> bool:
        return self._is_superadmin(claims) or claims["userId"] == (room.admin_id or room.created_by)

    def _is_moderator(self, claims: dict, room: Room) -> bool:
        if self._is_owner(claims, room):
            return True
        row = self.store.participant_row(room.id, claims["userId"])
        return row is not None and row.is_moderator

    async def room_settings(self, request: web.Request) -> web.Response:
        """room.go:1977-2062: `settings`, when given, replaces the whole object (keys
        left out become false) except isPersistent; the answer is the whole room."""
        claims, failure = self._authenticate(request, mutation=True, verified=True, no_guest=True)
        if failure:
            return failure
        try:
            body = bind(await self._body(request), {"isPublic": bool, "maxParticipants": int, "settings": dict})
            settings_in = (bind(body["settings"], {k: bool for k in settings_from_request({})})
                           if "settings" in body else None)
        except BindError:
            return error(400, "Invalid body")
        room = self.store.rooms.get(request.match_info["roomId"])
        if room is None:
            return error(404, "Room not found")
        if not self._is_owner(claims, room):
            return error(403, "Insufficient permissions")
        if "isPublic" in body:
            room.is_public = body["isPublic"]
        if "maxParticipants" in body:
            if not 0 <= body["maxParticipants"] <= MAX_PARTICIPANTS_LIMIT:
                return error(400, f"maxParticipants must be between 0 and {MAX_PARTICIPANTS_LIMIT}")
            room.max_participants = body["maxParticipants"]
        if settings_in is not None:
            fresh = settings_from_request(settings_in)
            fresh["isPersistent"] = room.settings.get("isPersistent", False)
            room.settings = fresh
        room.updated_at = self.clock()
        return json_response(room.to_json())

    async def delete_room(self, request: web.Request) -> web.Response:
        """room.go:1716-1757: 202, then the queued room_delete job archives the room
        (Purge=false) after telling everyone in it "room_ended" and closing it in LiveKit."""
        claims, failure = self._authenticate(request, mutation=True, verified=True, no_guest=True)
        if failure:
            return failure
        room = self.store.rooms.get(request.match_info["roomId"])
        if room is None:
            return error(404, "Room not found")
        if not (self._is_superadmin(claims) or claims["userId"] == room.created_by):
            return error(403, "Only the room creator can delete this room")
        if self.config.room_delete_dedupe:  # --room-delete-dedupe 7ac5f0b: Bedrud PR #107 (upstream.py)
            from .upstream import queue_room_delete
            return queue_room_delete(self, room)
        if room.is_active or room.deleted_at is None:
            # services/room_cleanup.go:80-86 and lkutil.go:52-68: the system message, then DeleteRoom.
            self.sfu.send_server_data(room.name, {"type": "system", "event": "room_ended",
                                                  "message": "The meeting has been ended by the creator"},
                                      "system", [])
            await self.sfu.delete_room(room.name)
            self.store.archive_room(room.id, self.clock())
        # room.go:1752: after the job is queued, whether or not the room was archived already.
        self.webhooks.dispatch_room_event("room.ended", room.id, room.name, claims["userId"])
        return json_response({"message": "Room deletion queued"}, 202)

    # MARK: - admin (superadmin only)

    def _admin(self, request: web.Request) -> tuple[Optional[dict], Optional[web.Response]]:
        """The admin group's middleware (server.go:555-558): Protected, RequireBearerForMutations,
        RequireEmailVerified, then RequireAccess(superadmin) (middleware/auth.go:95-122), which
        looks at the *token's* `accesses` claim: an account made superadmin after its token
        was issued needs a new token. Anyone else gets 403 "Insufficient access rights"."""
        claims, failure = self._authenticate(request, mutation=request.method in ("POST", "PUT", "DELETE", "PATCH"),
                                             verified=True)
        if failure:
            return None, failure
        if not self._is_superadmin(claims):  # weight 4 is superadmin's alone (auth.go:84-91)
            return None, error(403, "Insufficient access rights")
        return claims, None

    def _webhook_events(self, events: Any) -> Optional[str]:
        """validateEvents (admin_handler.go:1276-1286)."""
        if not events:
            return "at least one event must be specified"
        for e in events:
            if e not in WEBHOOK_EVENTS:
                return f"unknown event type: {json.dumps(e, ensure_ascii=False)}"
        return None

    @staticmethod
    def _bind_webhook(body: Any, spec: dict) -> dict:
        """BodyParser into createWebhookRequest / updateWebhookRequest: `events` is a
        []string (a null element decodes as "")."""
        out = bind(body, spec)
        if "events" in out:
            if any(e is not None and not isinstance(e, str) for e in out["events"]):
                raise BindError("events must be strings")
            out["events"] = [e if e is not None else "" for e in out["events"]]
        return out

    async def admin_list_webhooks(self, request: web.Request) -> web.Response:
        """ListWebhooks (admin_handler.go:1303-1328) with ListPaginated (webhook_repository.go:
        44-64): newest first, masked secrets; the answer echoes `page` and `limit` as sent
        (the clamping to 1 and 50 happens in the repository only)."""
        _, failure = self._admin(request)
        if failure:
            return failure
        page, limit = _query_int(request, "page", 1), _query_int(request, "limit", 50)
        size = limit if 0 < limit <= 100 else 50
        offset = min(((page if page > 0 else 1) - 1) * size, 10000)
        hooks = list(reversed(list(self.store.webhooks.values())))
        return json_response({"webhooks": [w.to_json() for w in hooks[offset:offset + size]],
                              "total": len(hooks), "page": page, "limit": limit})

    async def admin_create_webhook(self, request: web.Request) -> web.Response:
        """CreateWebhook (admin_handler.go:1351-1414): 201 with the secret in plain text, the
        only answer that carries it whole (list, update: masked; rotate: the new one)."""
        claims, failure = self._admin(request)
        if failure:
            return failure
        try:
            body = self._bind_webhook(await self._body(request), {"name": str, "url": str, "events": list})
        except BindError:
            return error(400, "Invalid request body")
        if not body.get("name"):
            return error(400, "name is required")
        if not body.get("url"):
            return error(400, "url is required")
        problem = self._webhook_events(body.get("events"))
        if problem:
            return error(400, problem)
        bad_url = url_problem(body["url"])
        if bad_url in ("parse", "relative"):
            return error(400, "Invalid URL: must be absolute http:// or https:// URL")
        if bad_url == "scheme":
            return error(400, "URL scheme must be http:// or https://")
        now = self.clock()
        hook = Webhook(id=str(uuid.uuid4()), name=body["name"], url=body["url"], secret=new_webhook_secret(),
                       events=list(body["events"]), created_by=claims["userId"], created_at=now, updated_at=now)
        self.store.webhooks[hook.id] = hook
        return json_response(hook.to_json(secret=hook.secret), 201)

    def _admin_webhook(self, request: web.Request):  # type: ignore[no-untyped-def]
        """The superadmin check, then the webhook `:id` or Bedrud's 404 `Webhook not found`
        (admin_handler.go:1449, 1570, 1589): (hook, None) or (None, the answer)."""
        _, failure = self._admin(request)
        if failure:
            return None, failure
        hook = self.store.webhooks.get(request.match_info["id"])
        if hook is None:
            return None, error(404, "Webhook not found")
        return hook, None

    async def admin_update_webhook(self, request: web.Request) -> web.Response:
        """UpdateWebhook (admin_handler.go:1440-1498): 404 before the body is read; each
        field sent replaces the stored one; nothing is saved when one is refused."""
        hook, failure = self._admin_webhook(request)
        if failure:
            return failure
        try:
            body = self._bind_webhook(await self._body(request),
                                      {"name": str, "url": str, "events": list, "isActive": bool})
        except BindError:
            return error(400, "Invalid request body")
        if "name" in body and not body["name"]:
            return error(400, "name cannot be empty")
        if "url" in body:
            if not body["url"]:
                return error(400, "url cannot be empty")
            bad_url = url_problem(body["url"])
            if bad_url in ("parse", "relative"):
                return error(400, "Invalid URL")
            if bad_url == "scheme":
                return error(400, "URL scheme must be http:// or https://")
        if "events" in body:
            problem = self._webhook_events(body["events"])
            if problem:
                return error(400, problem)
        hook.name = body.get("name", hook.name)
        hook.url = body.get("url", hook.url)
        hook.events = list(body.get("events", hook.events))
        hook.is_active = body.get("isActive", hook.is_active)
        hook.updated_at = self.clock()  # gorm's Save sets UpdatedAt
        return json_response(hook.to_json())

    async def admin_delete_webhook(self, request: web.Request) -> web.Response:
        """DeleteWebhook (admin_handler.go:1515-1525); jobs already queued still go out."""
        _, failure = self._admin(request)
        if failure:
            return failure
        if self.store.webhooks.pop(request.match_info["id"], None) is None:
            return error(404, "Webhook not found")
        return json_response({"status": "deleted"})

    async def admin_rotate_webhook_secret(self, request: web.Request) -> web.Response:
        """RotateWebhookSecret (admin_handler.go:1542-1563): `{secret}`, the new one in plain
        text; jobs already queued keep the old one (queue/job.go:48)."""
        hook, failure = self._admin_webhook(request)
        if failure:
            return failure
        hook.secret, hook.updated_at = new_webhook_secret(), self.clock()
        return json_response({"secret": hook.secret})

    async def admin_test_webhook(self, request: web.Request) -> web.Response:
        """TestWebhook (admin_handler.go:1579-1632): a `ping` now, whether or not the
        endpoint is active or subscribed to ping; always 200 once the webhook exists."""
        hook, failure = self._admin_webhook(request)
        if failure:
            return failure
        return json_response(await self.webhooks.test(hook.id, hook.url, hook.secret))

    async def admin_list_rooms(self, request: web.Request) -> web.Response:
        """AdminListRooms (room.go:2064-2164) with GetAllRoomsFiltered and
        EnrichAdminRoomDetails (room_repository.go:555-826). Every room, archived ones too;
        `participantsCount` is the room's active, non-banned participant rows (a row is active
        from /room/join, or a scripted participant's join, until that identity leaves LiveKit
        or the room ends); `lastActivityAt` the newest `joined_at` of its active rows, or null."""
        _, failure = self._admin(request)
        if failure:
            return failure
        q = request.query
        page, limit = _query_int(request, "page", 1), _query_int(request, "limit", 50)
        visibility = q.get("visibility", "").split(",") if q.get("visibility") else []
        for v in visibility:
            if v not in ("public", "private"):
                return error(400, "Invalid visibility: " + v)
        status = q.get("status", "").split(",") if q.get("status") else []
        for v in status:
            if v not in ("active", "suspended", "archived"):
                return error(400, "Invalid status: " + v)
        buckets = ("empty", "1-5", "6-20", "20+")
        occupancy = q.get("occupancy", "")
        if occupancy and occupancy not in buckets:
            return error(400, "Invalid occupancy filter")
        capacity = "" if occupancy else q.get("capacity", "")
        if capacity and capacity not in buckets:
            return error(400, "Invalid capacity filter")
        created = q.get("created", "")
        if created and created not in ("today", "7d", "30d"):
            return error(400, "Invalid created filter")
        sort, order = q.get("sort") or "createdAt", q.get("order") or "desc"
        if sort not in ("name", "createdAt", "maxParticipants", "participantsCount", "lastActivityAt", "createdBy"):
            return error(400, "Invalid sort field")
        if order not in ("asc", "desc"):
            return error(400, "Invalid order, must be asc or desc")
        limit = limit if 0 < limit <= 100 else 50
        page = page if page > 0 else 1

        store, now = self.store, self.clock()

        def count(room: Room) -> int:
            return store.capacity_count(room.id)

        def last_joined(room: Room) -> Optional[float]:
            times = [p.joined_at for p in store.participants if p.room_id == room.id and p.is_active]
            return max(times) if times else None

        def in_bucket(n: int, bucket: str) -> bool:
            return {"empty": n == 0, "1-5": 1 <= n <= 5, "6-20": 6 <= n <= 20, "20+": n > 20}[bucket]

        rooms = list(store.rooms.values())
        if q.get("q"):  # the handler reads `q`, not the `search` its annotation names (room.go:2068)
            rooms = [r for r in rooms if _like(q["q"], r.name)]
        if visibility:
            rooms = [r for r in rooms if ("public" if r.is_public else "private") in visibility]
        if len(set(status)) == 1:  # a mix of statuses filters nothing (room_repository.go:577-594)
            want = status[0]
            rooms = [r for r in rooms if (want == "archived" and r.deleted_at is not None) or
                     (want != "archived" and r.deleted_at is None and r.is_active == (want == "active"))]
        if occupancy:
            rooms = [r for r in rooms if in_bucket(count(r), occupancy)]
        elif capacity:
            rooms = [r for r in rooms if in_bucket(r.max_participants, capacity)]
        if q.get("owner"):
            def owner_matches(r: Room) -> bool:
                u = store.users.get(r.created_by)
                return u is not None and (_like(q["owner"], u.name) or _like(q["owner"], u.email))
            rooms = [r for r in rooms if owner_matches(r)]
        date_from, date_to = _rfc3339_arg(q.get("dateFrom", "")), _rfc3339_arg(q.get("dateTo", ""))
        if date_from is not None:
            rooms = [r for r in rooms if r.created_at >= date_from]
        if date_to is not None:
            rooms = [r for r in rooms if r.created_at <= date_to]
        for key, keep in (("lastActivityFrom", lambda t, bound: t >= bound), ("lastActivityTo", lambda t, bound: t <= bound)):
            bound = _rfc3339_arg(q.get(key, ""))
            if bound is not None:
                rooms = [r for r in rooms if keep(last_joined(r) or 0.0, bound)]
        if not q.get("dateFrom") and not q.get("dateTo") and created:
            start = {"today": now - now % 86400, "7d": now - 7 * 86400, "30d": now - 30 * 86400}[created]
            rooms = [r for r in rooms if r.created_at >= start]

        def owner_name(r: Room) -> str:
            u = store.users.get(r.created_by)
            return u.name if u is not None else ""
        keys: dict[str, Callable[[Room], Any]] = {
            "name": lambda r: r.name, "createdAt": lambda r: r.created_at,
            "maxParticipants": lambda r: r.max_participants, "participantsCount": count,
            "lastActivityAt": lambda r: last_joined(r) or r.created_at, "createdBy": owner_name}
        rooms.sort(key=keys[sort], reverse=order == "desc")
        total = len(rooms)
        shown = rooms[(page - 1) * limit:(page - 1) * limit + limit]

        def detail(r: Room) -> dict:
            """repository.AdminRoomDetail (room_repository.go:519-537)."""
            owner = store.users.get(r.created_by)
            joined = last_joined(r)
            out = {"id": r.id, "name": r.name, "createdBy": r.created_by, "isActive": r.is_active,
                   "maxParticipants": r.max_participants, "createdAt": rfc3339(r.created_at),
                   "updatedAt": rfc3339(r.updated_at), "expiresAt": rfc3339(r.expires_at), "adminId": r.admin_id,
                   "isPublic": r.is_public, "settings": dict(r.settings), "mode": r.mode,
                   "participantsCount": count(r), "lastActivityAt": rfc3339(joined) if joined is not None else None,
                   "ownerName": owner.name if owner else "", "ownerEmail": owner.email if owner else ""}
            if r.deleted_at is not None:
                out["deletedAt"] = rfc3339(r.deleted_at)
            return out
        return json_response({"rooms": [detail(r) for r in shown], "total": total, "page": page, "limit": limit})

    # MARK: - moderation

    def _resolve(self, request: web.Request, need: str) -> tuple[Optional[dict], Optional[Room], Optional[web.Response]]:
        """Auth, then the room (plain-text 404), then the owner/moderator gate."""
        claims, failure = self._authenticate(request, mutation=True, verified=True)
        if failure:
            return None, None, failure
        room = self.store.rooms.get(request.match_info["roomId"])
        if room is None:
            return None, None, plain_not_found()
        if need == "owner" and not self._is_owner(claims, room):
            return None, None, error(403, "Insufficient permissions")
        if need == "mod" and not self._is_moderator(claims, room):
            return None, None, error(403, "not authorized for this room")
        return claims, room, None

    def _system(self, room: Room, event: str, actor: str, target: str, to_target_only: bool) -> None:
        payload = {"type": "system", "event": event, "actor": actor, "target": target}
        self.sfu.send_server_data(room.name, payload, "system", [target] if to_target_only else [])

    async def kick(self, request: web.Request) -> web.Response:
        claims, room, failure = self._resolve(request, "owner")
        if failure:
            return failure
        identity = request.match_info["identity"]
        if not await self.sfu.remove_participant(room.name, identity, "PARTICIPANT_REMOVED"):
            return error(500, "twirp error not_found: participant not found")
        self._system(room, "kick", claims["userId"], identity, False)
        return json_response(SUCCESS)

    async def ban(self, request: web.Request) -> web.Response:
        claims, room, failure = self._resolve(request, "owner")
        if failure:
            return failure
        identity = request.match_info["identity"]
        if not await self.sfu.remove_participant(room.name, identity, "PARTICIPANT_REMOVED"):
            return error(500, "twirp error not_found: participant not found")
        self._system(room, "ban", claims["userId"], identity, False)
        row = self.store.participant_row(room.id, identity)
        if row is not None:
            row.is_banned = True
        return json_response(SUCCESS)

    async def _mute_sources(self, request: web.Request, need: str, sources: tuple[str, ...]) -> web.Response:
        claims, room, failure = self._resolve(request, need)
        if failure:
            return failure
        if not self.sfu.server_mute(room.name, request.match_info["identity"], sources):
            return error(404, "Participant not found")
        return json_response(SUCCESS)

    async def mute(self, request: web.Request) -> web.Response:
        return await self._mute_sources(request, "owner", ("AUDIO",))

    async def video_off(self, request: web.Request) -> web.Response:
        return await self._mute_sources(request, "mod", ("CAMERA",))

    async def screenshare_stop(self, request: web.Request) -> web.Response:
        return await self._mute_sources(request, "mod", ("SCREEN_SHARE", "SCREEN_SHARE_AUDIO"))

    async def _edit_metadata(self, request: web.Request, need: str, edit: Callable[[dict], bool]) -> web.Response:
        claims, room, failure = self._resolve(request, need)
        if failure:
            return failure
        changed = self.sfu.edit_metadata(room.name, request.match_info["identity"], edit)
        if changed is None:
            return error(404, "Participant not found")
        return json_response(SUCCESS if changed else {"status": "already_moderator"})

    async def promote(self, request: web.Request) -> web.Response:
        def edit(meta: dict) -> bool:
            acc = meta.get("accesses") if isinstance(meta.get("accesses"), list) else []
            if "moderator" in acc:
                return False
            meta["accesses"] = acc + ["moderator"]
            return True
        resp = await self._edit_metadata(request, "owner", edit)
        if resp.status == 200:
            self._set_moderator_flag(request, True)
        return resp

    async def demote(self, request: web.Request) -> web.Response:
        def edit(meta: dict) -> bool:
            acc = meta.get("accesses") if isinstance(meta.get("accesses"), list) else []
            meta["accesses"] = [a for a in acc if a != "moderator"]
            return True
        resp = await self._edit_metadata(request, "owner", edit)
        if resp.status == 200:
            self._set_moderator_flag(request, False)
        return resp

    def _set_moderator_flag(self, request: web.Request, value: bool) -> None:
        row = self.store.participant_row(request.match_info["roomId"], request.match_info["identity"])
        if row is not None:
            row.is_moderator = value

    async def chat_block(self, request: web.Request) -> web.Response:
        def edit(meta: dict) -> bool:
            meta["chatBlocked"] = True
            return True
        return await self._edit_metadata(request, "mod", edit)

    async def _targeted(self, request: web.Request, event: str, to_target_only: bool) -> web.Response:
        claims, room, failure = self._resolve(request, "mod")
        if failure:
            return failure
        self._system(room, event, claims["userId"], request.match_info["identity"], to_target_only)
        return json_response(SUCCESS)

    async def deafen(self, request: web.Request) -> web.Response:
        return await self._targeted(request, "deafen", True)

    async def undeafen(self, request: web.Request) -> web.Response:
        return await self._targeted(request, "undeafen", True)

    async def spotlight(self, request: web.Request) -> web.Response:
        return await self._targeted(request, "spotlight", False)

    async def ask(self, request: web.Request) -> web.Response:
        claims, room, failure = self._resolve(request, "mod")
        if failure:
            return failure
        action = request.match_info["action"]
        if action not in ("unmute", "camera"):
            return error(400, "Unknown action")
        self._system(room, f"ask_{action}", claims["userId"], request.match_info["identity"], True)
        return json_response(SUCCESS)

    async def not_implemented(self, request: web.Request) -> web.Response:
        claims, failure = self._authenticate(request, mutation=True, verified=True)
        if failure:
            return failure
        return error(501, "not yet implemented")

    async def participant_info(self, request: web.Request) -> web.Response:
        claims, failure = self._authenticate(request, verified=True)
        if failure:
            return failure
        room = self.store.rooms.get(request.match_info["roomId"])
        if room is None:
            return plain_not_found()
        identity = request.match_info["identity"]
        if identity != claims["userId"] and not self._is_moderator(claims, room):
            return error(403, "not authorized for this room")
        info = self.sfu.participant_summary(room.name, identity)
        if info is None:
            return error(404, "Participant not found")
        return json_response(info)

    # MARK: - chat upload

    async def chat_upload(self, request: web.Request) -> web.Response:
        """UploadChatImage (handlers/room.go:2657-2783, routed at cmd/server/main.go:426 behind
        Protected, RequireEmailVerified and the API rate limiter). Any participant may upload,
        a guest too (no RejectGuest on the route); the 507 quotas (room.go:2707-2729) are off
        by default and not modelled."""
        claims, failure = self._authenticate(request, mutation=True, verified=True)
        if failure:
            return failure
        refused, _ = self._rate_check("api", "chat-upload", request)
        if refused is not None:
            return refused
        room = self.store.rooms.get(request.match_info["roomId"])
        if room is None:
            return error(404, "Room not found")
        if not self.store.is_participant(room.id, claims["userId"]):  # room.go:2668-2675
            return error(403, "Not a participant in this room")
        if not room.settings.get("allowChat"):  # room.go:2677-2680
            return error(403, "Chat is disabled for this room")
        # Fiber refuses a body over its BodyLimit (the upload maximum, server.go:219-229)
        # before any handler runs: a file just under 10 MiB plus its multipart framing is
        # answered with Fiber's plain-text 413, not the handler's JSON one.
        if (request.content_length or 0) > BODY_LIMIT:
            return plain(413, "Request Entity Too Large")
        # The body is read whole (bounded above; aiohttp caches it, so --request-log, which
        # reads it first, does not leave the handler an empty stream) and parsed here.
        data = _multipart_file(request.headers.get("Content-Type", ""), await request.read(), "file")
        if data is None:
            return error(400, "Missing file field")
        if len(data) > UPLOAD_MAX_BYTES:  # room.go:2703-2705, 2744-2746
            return error(413, "File too large")
        mime, ext, w, h = sniff_image(data)
        # room.go:2748-2753: image.DecodeConfig (png, jpeg, gif) against the 8192 default
        # (effectiveChatUploadMaxDimension, room.go:260-266).
        if ext in ("png", "jpg", "gif") and (w > UPLOAD_MAX_DIMENSION or h > UPLOAD_MAX_DIMENSION):
            return error(400, f"Image dimensions too large (max {UPLOAD_MAX_DIMENSION}x{UPLOAD_MAX_DIMENSION})")
        if ext is None:
            return error(400, f"unsupported image type: {mime}")
        if len(data) < UPLOAD_INLINE_MAX:  # hybridStore.Store (storage/chat_upload.go:383-388)
            url = f"data:{mime};base64," + base64.b64encode(data).decode()
        else:
            # diskStore.Store (chat_upload.go:290-310): content-addressed under
            # {roomID}/{userID}/{sha256}{ext} (ChatObjectKey, :62-64), URL /uploads/chat/<key>.
            key = f"{room.id}/{claims['userId']}/{hashlib.sha256(data).hexdigest()}.{ext}"
            self.store.uploads[key] = (mime, data)
            url = f"/uploads/chat/{key}"
        return json_response({"kind": "image", "url": url, "mime": mime, "size": len(data), "w": w, "h": h})

    async def serve_upload(self, request: web.Request) -> web.Response:
        """GET /uploads/chat/* (cmd/server/main.go:453-491): Protected and RequireEmailVerified,
        the path must be {room}/{user}/{file} (ChatUploadRoomID, chat_upload.go:68-77), and only
        the room's participants (or a superadmin) may read it."""
        claims, failure = self._authenticate(request, verified=True)
        if failure:
            return failure
        path = request.match_info["path"]
        parts = path.split("/")
        if not path or ".." in path or "\\" in path or len(parts) != 3 or not all(parts):
            return error(400, "Invalid path")
        if not self._is_superadmin(claims) and not self.store.is_participant(parts[0], claims["userId"]):
            return error(403, "Not a participant in this room")
        entry = self.store.uploads.get(path)
        if entry is None:  # ResolveChatUpload's "not found" (chat_upload.go:739-759)
            return error(404, "Not found")
        return web.Response(body=entry[1], content_type=entry[0])


def _multipart_file(content_type: str, body: bytes, field: str) -> Optional[bytes]:
    """The bytes of form field `field` in a multipart/form-data body, or None (not multipart,
    no boundary, no such field, a malformed part), like Fiber's FormFile."""
    kind, _, params = content_type.partition(";")
    if kind.strip().lower() != "multipart/form-data":
        return None
    boundary = ""
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.lower() == "boundary":
            boundary = value.strip().strip('"')
    if not boundary or len(boundary) > 70:
        return None
    delimiter = b"--" + boundary.encode("latin-1", "replace")
    for chunk in body.split(b"\r\n" + delimiter):
        if chunk.startswith(delimiter):
            chunk = chunk[len(delimiter):]
        if chunk.startswith(b"--"):
            break
        head, sep, payload = chunk.lstrip(b"\r\n").partition(b"\r\n\r\n")
        if not sep:
            continue
        for line in head.split(b"\r\n"):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() != "content-disposition":
                continue
            for param in value.split(";")[1:]:
                key, _, v = param.strip().partition("=")
                if key.lower() == "name" and v.strip('"') == field:
                    return payload
    return None


def _valid_email(email: str) -> bool:
    """Roughly Go's net/mail.ParseAddress: `local@domain`, optionally `Name <...>`."""
    if not email or len(email) > 320 or "\n" in email or "\r" in email:
        return False
    _, addr = parseaddr(email)
    if not addr or "@" not in addr:
        return False
    local, _, domain = addr.rpartition("@")
    return bool(local) and bool(domain) and " " not in addr and ".." not in domain


def sniff_image(data: bytes) -> tuple[str, Optional[str], int, int]:
    """(mime, extension or None, width, height) like Go's http.DetectContentType
    plus image.DecodeConfig for png/jpeg/gif (webp reports 0x0)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        # png.DecodeConfig reads the first chunk: a 13-byte IHDR whose CRC matches, or it
        # fails and the upload is stored with 0x0 and no dimension check (room.go:2748-2754).
        ok = (len(data) >= 33 and data[8:16] == b"\x00\x00\x00\rIHDR"
              and struct.unpack(">I", data[29:33])[0] == zlib.crc32(data[12:29]) & 0xFFFFFFFF)
        w, h = struct.unpack(">II", data[16:24]) if ok else (0, 0)
        return "image/png", "png", w, h
    if data.startswith(b"\xff\xd8\xff"):
        w, h = _jpeg_size(data)
        return "image/jpeg", "jpg", w, h
    if data.startswith(b"GIF87a") or data.startswith(b"GIF89a"):
        w, h = (struct.unpack("<HH", data[6:10]) if len(data) >= 10 else (0, 0))
        return "image/gif", "gif", w, h
    if len(data) >= 14 and data[:4] == b"RIFF" and data[8:14] == b"WEBPVP":
        return "image/webp", "webp", 0, 0
    try:
        text = data[:512].decode("utf-8")
        textual = all(c.isprintable() or c in "\r\n\t" for c in text)
    except UnicodeDecodeError:
        textual = False
    return ("text/plain; charset=utf-8" if textual else "application/octet-stream"), None, 0, 0


def _jpeg_size(data: bytes) -> tuple[int, int]:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return 0, 0
        marker = data[i + 1]
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return w, h
        seg_len = struct.unpack(">H", data[i + 2:i + 4])[0]
        if seg_len < 2:
            return 0, 0
        i += 2 + seg_len
    return 0, 0


def _query_int(request: web.Request, name: str, default: int) -> int:
    """Fiber's c.QueryInt: the default when absent, empty or not a whole number."""
    try:
        return int(request.query.get(name, ""), 10)
    except ValueError:
        return default


def _like(pattern: str, value: str) -> bool:
    """`value LIKE '%pattern%'` as SQLite (Bedrud's default database) does it: ASCII
    case-insensitive, `%` and `_` in the pattern are wildcards too."""
    import re
    rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.search(rx, value, re.IGNORECASE | re.DOTALL) is not None


def _rfc3339_arg(text: str) -> Optional[float]:
    """time.Parse(time.RFC3339, text) as a Unix time, None when it does not parse (the
    filter is then skipped, room_repository.go:637-648)."""
    import re
    from datetime import datetime
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", text):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
