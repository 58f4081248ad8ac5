"""Bedrud behaviours newer than v0.12.0 (or missing from the devserver until now), each
behind a switch that names the themadorg/bedrud commit it follows (docs/DEVSERVER.md
"After v0.12.0"). Written from the rules of Bedrud's code; off by default, so the
devserver stays v0.12.0 unless asked.

  --room-delete-dedupe 7ac5f0b   PR #107 (branch fix/job-dedupe-key, head 7ac5f0b; the room.go
                                 change is 07eab0f + 5dc3454): room_delete jobs carry a dedupe
                                 key (the room id for an archive), and the queue refuses a second
                                 one while the first is pending or active: DELETE /api/room/:id
                                 is 409 {"error": "Deletion already in progress"}. A finished
                                 job no longer blocks. (v0.12.0 has the same 409 from an
                                 in-memory marker that is held only during the handler, so there
                                 it needs two requests at the same instant.)
  --admin-set-password ff4c0a8   PUT /api/admin/users/:id/password (users.go SetUserPassword,
                                 added in ff4c0a8 and unchanged on master b9683ea):
                                 UserRepository.UpdatePassword sets the hash and clears the
                                 stored refresh token, so that token's next /api/auth/refresh
                                 is 401; access tokens already issued keep working.
"""
from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from aiohttp import web

from .binding import BindError, bind

if TYPE_CHECKING:
    from .rest import RestAPI
    from .store import Room

log = logging.getLogger("devserver.upstream")

DELETION_IN_PROGRESS = "Deletion already in progress"


def routes(rest: "RestAPI") -> list[web.RouteDef]:
    """The routes the switches add (none when they are off)."""
    out: list[web.RouteDef] = []
    if rest.config.admin_set_password:
        out.append(web.put("/api/admin/users/{id}/password", lambda request: admin_set_password(rest, request)))
    return out


# MARK: - PR #107: one unfinished room_delete job per room

def queue_room_delete(rest: "RestAPI", room: "Room") -> web.Response:
    """room.go DeleteRoom at 7ac5f0b, after the creator/superadmin checks: enqueue with
    dedupe key = room id (roomDeleteDedupeKey(id, false)); ErrDuplicateJob is 409. The job
    runs after `room_delete_delay` (the worker's poll) and does what the v0.12.0 job does."""
    from .rest import error, json_response
    jobs: dict[str, asyncio.Task] = rest.__dict__.setdefault("_room_delete_jobs", {})
    if room.id in jobs:
        return error(409, DELETION_IN_PROGRESS)

    async def job() -> None:
        try:
            await asyncio.sleep(rest.config.room_delete_delay)
            if room.is_active or room.deleted_at is None:
                # services/room_cleanup.go: the system message, then LiveKit's DeleteRoom, then archive.
                rest.sfu.send_server_data(room.name, {"type": "system", "event": "room_ended",
                                                      "message": "The meeting has been ended by the creator"},
                                          "system", [])
                await rest.sfu.delete_room(room.name)
                rest.store.archive_room(room.id, rest.clock())
        except Exception:  # noqa: BLE001 — a failed job is finished too (JobFailed stops blocking)
            log.exception("room_delete job for %s failed", room.id)
        finally:
            jobs.pop(room.id, None)

    jobs[room.id] = asyncio.get_running_loop().create_task(job())
    return json_response({"message": "Room deletion queued"}, 202)


# MARK: - ff4c0a8: an admin sets a user's password

async def admin_set_password(rest: "RestAPI", request: web.Request) -> web.Response:
    """The admin group's middleware (server.go: Protected, RequireBearerForMutations,
    RequireEmailVerified, RequireAccess(superadmin)), then users.go SetUserPassword."""
    from .rest import MAX_PASSWORD, MIN_PASSWORD, error, json_response
    from .store import hash_password
    claims, failure = rest._authenticate(request, mutation=True, verified=True)
    if failure:
        return failure
    if "superadmin" not in (claims.get("accesses") or []):
        return error(403, "Insufficient access rights")  # middleware/auth.go RequireAccess
    try:
        body = bind(await rest._body(request), {"password": str})
    except BindError:
        return error(400, "Invalid input")
    password = body.get("password", "")
    # Go's len: bytes, not characters.
    if len(password.encode()) < MIN_PASSWORD:
        return error(400, f"Password must be at least {MIN_PASSWORD} characters")
    if len(password.encode()) > MAX_PASSWORD:
        return error(400, f"Password must be at most {MAX_PASSWORD} characters")
    user = rest.store.users.get(request.match_info["id"])
    if user is None:
        return error(404, "User not found")
    user.password_hash = hash_password(password)
    user.refresh_token_hash = ""  # "refresh_token": "" — the stored token no longer matches
    user.updated_at = rest.clock()
    return json_response({"message": "Password updated successfully"})
