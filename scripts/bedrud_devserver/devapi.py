"""`/_dev/...`: inspect and drive the devserver from tests. Never part of the real API.

Every answer is JSON; errors are `{"error": "..."}` with 400 (bad request) or 404
(no such room / participant). See docs/DEVSERVER.md for the list.
"""
from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .durations import parse_duration
from .rest import error, json_response
from .sfu import chat_payload

if TYPE_CHECKING:
    from .app import Server

log = logging.getLogger("devserver.dev")


def refuse_status(value: Any) -> int:
    """`refuseUpgrades`: false (off, 0), true (400) or the HTTP status /rtc answers."""
    if value is True:
        return 400
    if value is False:
        return 0
    if isinstance(value, int) and 400 <= value <= 599:
        return value
    raise ValueError("refuseUpgrades must be true, false or an HTTP status from 400 to 599")


class DevAPI:
    def __init__(self, server: "Server") -> None:
        self.server = server

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/_dev/state", self.state),
            web.post("/_dev/config", self.set_config),
            web.post("/_dev/rooms/{room}/kick/{identity}", self.kick),
            web.post("/_dev/rooms/{room}/drop/{identity}", self.drop),
            web.post("/_dev/rooms/{room}/trickle-flood/{identity}", self.trickle_flood),
            web.post("/_dev/rooms/{room}/mute/{identity}", self.mute),
            web.post("/_dev/rooms/{room}/delete", self.delete),
            web.post("/_dev/rooms/{room}/deactivate", self.deactivate),
            web.post("/_dev/rooms/{room}/recreate", self.recreate),
            web.post("/_dev/rooms/{room}/settings", self.room_settings),
            web.post("/_dev/users/{email}/verify", self.verify_user),
            web.post("/_dev/users/{email}/deactivate", self.deactivate_user),
            web.post("/_dev/users/{email}/delete", self.delete_user),
            web.post("/_dev/users/{email}/accesses", self.user_accesses),
            web.post("/_dev/rooms/{room}/chat", self.chat),
            web.post("/_dev/rooms/{room}/data-track/{identity}", self.data_track),
            web.post("/_dev/rooms/{room}/system", self.system),
            web.post("/_dev/rooms/{room}/faults", self.faults),
            web.post("/_dev/rooms/{room}/scenario", self.scenario),
            web.get("/_dev/rooms/{room}/packets/{track}", self.packets),
            web.get("/_dev/webhooks", self.webhooks),
        ]

    async def _json(self, request: web.Request) -> dict:
        raw = await request.read()
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except ValueError:
            raise web.HTTPBadRequest(text=json.dumps({"error": "body is not JSON"}), content_type="application/json")
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text=json.dumps({"error": "body must be a JSON object"}),
                                     content_type="application/json")
        return body

    def _room(self, request: web.Request):  # type: ignore[no-untyped-def]
        room = self.server.sfu.room(request.match_info["room"])
        if room is None:
            raise web.HTTPNotFound(text=json.dumps({"error": "no such room"}), content_type="application/json")
        return room

    async def state(self, request: web.Request) -> web.Response:
        store = self.server.store
        out: dict[str, Any] = {
            "config": {"baseUrl": self.server.config.base_url, "livekitHost": self.server.config.livekit_host,
                       "accessTtl": self.server.config.access_ttl, "registration": self.server.config.registration,
                       "requireEmailVerification": self.server.config.require_email_verification,
                       "roomMinAge": self.server.config.room_min_age,
                       "roomIdleAfter": self.server.config.room_idle_after},
            "users": [{"id": u.id, "email": u.email, "name": u.name, "provider": u.provider, "isActive": u.is_active,
                       "emailVerified": u.email_verified_at is not None} for u in store.users.values()],
            "roomParticipants": [{"roomId": p.room_id, "userId": p.user_id, "isActive": p.is_active,
                                  "isBanned": p.is_banned} for p in store.participants],
            "bedrudRooms": [r.to_json() for r in store.rooms.values()],
            "revokedAccessTokens": len(store.revoked_access),
            "blockedRefreshTokens": len(store.blocked_refresh),
        }
        out.update(self.server.sfu.dev_state())
        runner = self.server.extras.get("scenarios")
        out["scenarios"] = runner.dev_state() if runner is not None else []
        return json_response(out)

    async def webhooks(self, request: web.Request) -> web.Response:
        """Every webhook endpoint with its secret, every delivery made or queued (event, URL,
        exact body, signature, HTTP status or error) and how many are waiting."""
        return json_response(self.server.extras["webhooks"].dev_state())

    async def packets(self, request: web.Request) -> web.Response:
        """The RTP packets the server received for one track (forwarding mode), as sent."""
        from .forward import downtracks_json, packet_log_json
        room = self._room(request)
        track = room.published.get(request.match_info["track"])
        if track is None:
            return error(404, "no such track")
        f = track.forwarder
        return json_response({"track": track.sid, "publisher": track.owner.identity, "mime": track.mime,
                              "received": f.received, "endedAt": track.ended_at, "downtracks": downtracks_json(f),
                              "packets": packet_log_json(f)})

    async def set_config(self, request: web.Request) -> web.Response:
        body = await self._json(request)
        cfg = self.server.config
        try:
            if "accessTtl" in body:
                cfg.access_ttl = parse_duration(str(body["accessTtl"]))
            if "registration" in body:
                cfg.registration = bool(body["registration"])
            if "joinTimeout" in body:
                cfg.join_timeout = parse_duration(str(body["joinTimeout"]))
            if "refreshInterval" in body:
                cfg.lk_refresh_interval = parse_duration(str(body["refreshInterval"]))
            if "refuseUpgrades" in body:
                cfg.refuse_upgrades = refuse_status(body["refuseUpgrades"])
            for key, attr in (("refuseTokens", "refuse_tokens"),
                              ("badFingerprint", "bad_fingerprint"),
                              ("requireEmailVerification", "require_email_verification"),
                              ("guestLogin", "guest_login")):
                if key in body:
                    if not isinstance(body[key], bool):
                        raise ValueError(f"{key} must be true or false")
                    setattr(cfg, attr, body[key])
            for key, attr in (("roomMinAge", "room_min_age"), ("roomIdleAfter", "room_idle_after"),
                              ("refreshLatency", "refresh_latency"), ("lkDepartureTimeout", "lk_departure_timeout"),
                              ("lkEmptyTimeout", "lk_empty_timeout")):
                if key in body:
                    cfg_value = parse_duration(str(body[key])) if isinstance(body[key], str) else body[key]
                    if isinstance(cfg_value, bool) or not isinstance(cfg_value, (int, float)) or cfg_value < 0:
                        raise ValueError(f"{key} must be a number of seconds or a duration")
                    setattr(cfg, attr, float(cfg_value))
            for key, attr in (("authRateLimit", "auth_rate_limit"), ("apiRateLimit", "api_rate_limit"),
                              ("guestRateLimit", "guest_rate_limit")):
                if key in body:
                    if isinstance(body[key], bool) or not isinstance(body[key], int) or body[key] < 0:
                        raise ValueError(f"{key} must be a whole number, 0 = off")
                    setattr(cfg, attr, body[key])
        except ValueError as exc:
            return error(400, str(exc))
        return json_response({"ok": True})

    async def kick(self, request: web.Request) -> web.Response:
        room = self._room(request)
        identity = request.match_info["identity"]
        if not await self.server.sfu.remove_participant(room.name, identity, "PARTICIPANT_REMOVED"):
            return error(404, "no such participant")
        room.server_data({"type": "system", "event": "kick", "actor": "devserver", "target": identity}, "system", [])
        return json_response({"ok": True})

    async def drop(self, request: web.Request) -> web.Response:
        room = self._room(request)
        body = await self._json(request)
        try:
            seconds = parse_duration(str(body.get("seconds", request.query.get("seconds", "5"))))
        except ValueError as exc:
            return error(400, str(exc))
        if not self.server.sfu.drop(room.name, request.match_info["identity"], seconds):
            return error(404, "no such client participant")
        return json_response({"ok": True, "seconds": seconds})

    async def trickle_flood(self, request: web.Request) -> web.Response:
        """A hostile LiveKit: sends a client `count` trickle messages for its subscriber
        connection at once, every `garbage`-th one not a candidate at all (query
        `count`, default 10000; `garbage`, default 3). No LiveKit does this; the bot must
        stay quiet and end with one line, not one warning per dropped call."""
        room = self._room(request)
        p = room.participants.get(request.match_info["identity"])
        if p is None or p.scripted:
            return error(404, "no such client participant")
        try:
            count = int(request.query.get("count", "10000"))
            garbage = int(request.query.get("garbage", "3"))
        except ValueError:
            return error(400, "count and garbage are whole numbers")
        if not 1 <= count <= 100_000 or garbage < 0:
            return error(400, "count is 1..100000, garbage >= 0")
        return json_response({"ok": True, "sent": p.flood_trickles(count, garbage)})

    async def mute(self, request: web.Request) -> web.Response:
        room = self._room(request)
        if not self.server.sfu.server_mute(room.name, request.match_info["identity"], ("AUDIO",)):
            return error(404, "no such participant")
        return json_response({"ok": True})

    async def delete(self, request: web.Request) -> web.Response:
        room = self._room(request)
        await self.server.sfu.delete_room(room.name)
        bedrud = self.server.store.room_by_name(room.name)
        if bedrud is not None:
            self.server.store.delete_room(bedrud.id)
        return json_response({"ok": True})

    async def deactivate(self, request: web.Request) -> web.Response:
        """What Bedrud's idle sweep does to an empty room, now: the room and its
        participant rows inactive (lifecycle.py). Whoever is in LiveKit stays there."""
        bedrud = self.server.store.active_room_named(request.match_info["room"])
        if bedrud is None:
            return error(404, "no such active room")
        self.server.store.set_idle(bedrud.id)
        return json_response({"ok": True})

    async def recreate(self, request: web.Request) -> web.Response:
        """What the web client does for its creator after `archived_owned` ("Start new
        meeting", apps/web/src/routes/m.$meetId.tsx): a new room of the same name, mode,
        visibility, capacity and settings, owned by the same user."""
        store = self.server.store
        old = store.room_by_name(request.match_info["room"])
        if old is None:
            return error(404, "no such room")
        if old.is_active:
            return error(400, "the room is active")
        import time
        room = store.add_room(old.name, old.created_by, old.is_public, old.mode, dict(old.settings), time.time())
        room.max_participants = old.max_participants
        self.server.sfu.create_room(room.name, room.max_participants)
        # It stands for the creator's POST /room/create, which fires room.created (room.go:392).
        self.server.extras["webhooks"].dispatch_room_event("room.created", room.id, room.name, room.created_by)
        return json_response({"ok": True, "room": room.to_json()})

    async def room_settings(self, request: web.Request) -> web.Response:
        from .store import SETTINGS_KEYS
        room = self.server.store.room_by_name(request.match_info["room"])
        if room is None:
            return error(404, "no such room")
        body = await self._json(request)
        for key, value in body.items():
            if key not in SETTINGS_KEYS or not isinstance(value, bool):
                return error(400, f"{key}: expected one of {', '.join(SETTINGS_KEYS)} with true or false")
        room.settings.update(body)
        return json_response({"ok": True, "settings": dict(room.settings)})

    def _user(self, request: web.Request):  # type: ignore[no-untyped-def]
        return self.server.store.user_by_email(request.match_info["email"].strip().lower())

    async def verify_user(self, request: web.Request) -> web.Response:
        """The effect of following the emailed link (auth_handler.go:1054-1123)."""
        import time
        user = self._user(request)
        if user is None:
            return error(404, "no such user")
        if user.email_verified_at is None:
            user.email_verified_at = time.time()
        return json_response({"ok": True, "email": user.email})

    async def deactivate_user(self, request: web.Request) -> web.Response:
        """An admin setting the account inactive (PUT /admin/users/:id/status)."""
        user = self._user(request)
        if user is None:
            return error(404, "no such user")
        user.is_active = False
        return json_response({"ok": True, "email": user.email})

    async def delete_user(self, request: web.Request) -> web.Response:
        user = self._user(request)
        if user is None:
            return error(404, "no such user")
        self.server.store.users.pop(user.id, None)
        return json_response({"ok": True, "email": user.email})

    async def user_accesses(self, request: web.Request) -> web.Response:
        """Set the account's accesses, e.g. {"accesses": ["user", "superadmin"]} (as
        PUT /admin/users/:id/accesses); tokens issued from then on carry them."""
        user = self._user(request)
        if user is None:
            return error(404, "no such user")
        accesses = (await self._json(request)).get("accesses")
        if not isinstance(accesses, list) or not all(isinstance(a, str) for a in accesses):
            return error(400, "accesses must be a list of strings")
        user.accesses = list(accesses)
        return json_response({"ok": True, "email": user.email, "accesses": user.accesses})

    async def chat(self, request: web.Request) -> web.Response:
        room = self._room(request)
        body = await self._json(request)
        message = body.get("message")
        if not isinstance(message, str):
            return error(400, "message (string) is required")
        sender = room.participants.get(str(body.get("from", "")))
        if sender is None:
            return error(404, "from must name a participant in the room")
        payload = chat_payload(sender.identity, sender.name, message)
        count = self._send_as(room, sender, payload, "chat")
        return json_response({"ok": True, "deliveredTo": count, "payload": payload})

    def _send_as(self, room, sender, payload: dict, topic: str) -> int:  # type: ignore[no-untyped-def]
        from livekit.protocol import models as lkm
        data = json.dumps(payload, separators=(",", ":")).encode()
        packet = lkm.DataPacket(
            participant_identity=sender.identity, participant_sid=sender.sid, sequence=sender.next_data_sequence(),
            user=lkm.UserPacket(payload=data, topic=topic, participant_sid=sender.sid,
                                participant_identity=sender.identity))
        return room.send_data(packet, True, sender, [])

    async def data_track(self, request: web.Request) -> web.Response:
        """Writes the request body (1 to 65536 bytes, as is) on a client's `_data_track`
        subscriber channel, where LiveKit >= 1.11 sends data-track packets."""
        room = self._room(request)
        body = await request.read()
        if not 1 <= len(body) <= 65536:
            return error(400, "the body (the message) must have 1 to 65536 bytes")
        p = room.participants.get(request.match_info["identity"])
        send = getattr(p, "send_data_track", None)
        if send is None:
            return error(404, "no such client participant")
        if not send(body):
            return error(409, "the _data_track channel is not open")
        return json_response({"ok": True, "bytes": len(body)})

    async def system(self, request: web.Request) -> web.Response:
        room = self._room(request)
        body = await self._json(request)
        event = body.get("event")
        if not isinstance(event, str) or not event:
            return error(400, "event (string) is required")
        target = str(body.get("target", ""))
        actor = str(body.get("actor", "devserver"))
        targeted = body.get("toTargetOnly")
        if targeted is None:
            targeted = event in ("deafen", "undeafen", "ask_unmute", "ask_camera")
        payload = {"type": "system", "event": event, "actor": actor, "target": target}
        count = room.server_data(payload, "system", [target] if targeted and target else [])
        return json_response({"ok": True, "deliveredTo": count})

    async def faults(self, request: web.Request) -> web.Response:
        room = self._room(request)
        body = await self._json(request)
        try:
            room.faults.update({str(k): str(v) for k, v in body.items()})
        except ValueError as exc:
            return error(400, str(exc))
        return json_response({"ok": True, "faults": room.faults.to_json()})

    async def scenario(self, request: web.Request) -> web.Response:
        runner = self.server.extras.get("scenarios")
        if runner is None:
            return error(400, "scenarios are not available")
        text = (await request.read()).decode("utf-8", errors="replace")
        try:
            run = runner.start_text(text, f"<POST {request.path}>", default_room=request.match_info["room"])
        except ValueError as exc:
            return error(400, str(exc))
        return json_response({"ok": True, "scenario": run.name})
