"""The aiohttp application: routes, Fiber-style fallbacks, and the server's parts."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Optional

from aiohttp import web

from .config import ServerConfig
from .rest import RestAPI, plain
from .sfu import SFU
from .store import Store

log = logging.getLogger("devserver.app")

BODY_LIMIT = 10 * 1024 * 1024  # v0.12.0 sets Fiber's BodyLimit to the chat upload maximum (server.go:219-229)

SPA_HTML = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bedrud</title></head>"
            "<body><div id=\"app\"></div><script type=\"module\" src=\"/assets/index.js\"></script></body></html>")


@dataclass
class Server:
    """Everything one devserver process serves. Built by `build()`."""
    config: ServerConfig
    store: Store
    sfu: SFU
    app: web.Application
    extras: dict = field(default_factory=dict)


@web.middleware
async def fiber_fallbacks(request: web.Request, handler):  # type: ignore[no-untyped-def]
    """What the Go server answers where no handler is: the SPA for other GETs,
    LiveKit's Go mux 404 under /livekit, Fiber's plain-text errors elsewhere."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        return _not_found(request)
    except web.HTTPMethodNotAllowed:
        if request.path.startswith("/livekit/") or request.path.startswith("/rtc"):
            return plain(405, "Method Not Allowed")
        return plain(405, "Method Not Allowed")
    except web.HTTPRequestEntityTooLarge:
        return plain(413, "Request Entity Too Large")
    except web.HTTPException:
        raise
    except Exception:  # noqa: BLE001 — Fiber's recover middleware: never take the server down
        log.exception("handler for %s %s failed", request.method, request.path)
        return plain(500, "Internal Server Error")


def _not_found(request: web.Request) -> web.Response:
    path = request.path
    if path.startswith("/livekit/") or path == "/livekit" or path.startswith("/rtc"):
        return plain(404, "404 page not found\n")
    if request.method in ("GET", "HEAD") and not path.startswith("/api") and not path.startswith("/_dev"):
        return web.Response(text=SPA_HTML, content_type="text/html", charset="utf-8")
    return plain(404, f"Cannot {request.method} {path}")


SECRET_KEYS = {"password", "currentPassword", "newPassword", "refresh_token", "refreshToken", "accessToken",
               "access_token", "token", "inviteToken"}


def redact(value: Any) -> Any:
    """A request body with every secret-bearing string replaced by "<redacted>"."""
    if isinstance(value, dict):
        return {k: ("<redacted>" if k in SECRET_KEYS and isinstance(v, str) else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def request_logger(path: str):  # type: ignore[no-untyped-def]
    """`--request-log FILE`: one JSON line per /api request (method, path, content
    type, body parsed as JSON with secrets redacted, or null), appended as it arrives."""
    @web.middleware
    async def log_request(request: web.Request, handler):  # type: ignore[no-untyped-def]
        if request.path.startswith("/api/"):
            raw = await request.read()
            body: Any = None
            is_json = False
            if raw and request.content_type == "application/json":
                try:
                    body, is_json = redact(json.loads(raw)), True
                except ValueError:
                    body = None
            entry = {"method": request.method, "path": request.path, "contentType": request.content_type,
                     "json": is_json, "body": body, "bytes": len(raw)}
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, separators=(",", ":")) + "\n")
        return await handler(request)
    return log_request


def build(config: ServerConfig, store: Optional[Store] = None, sfu: Optional[SFU] = None) -> Server:
    store = store or Store()
    sfu = sfu or SFU(config)
    middlewares = [fiber_fallbacks]
    if config.request_log:
        middlewares.append(request_logger(config.request_log))
    app = web.Application(middlewares=middlewares, client_max_size=BODY_LIMIT)
    server = Server(config=config, store=store, sfu=sfu, app=app)
    from .webhooks import Dispatcher
    webhooks = Dispatcher(store)
    rest = RestAPI(config, store, sfu, webhooks=webhooks)
    app.add_routes(rest.routes())
    from .upstream import routes as upstream_routes
    app.add_routes(upstream_routes(rest))
    from .devapi import DevAPI
    from .signalling import SignalService
    signal = SignalService(config, store, sfu)
    app.add_routes(signal.routes())
    dev = DevAPI(server)
    app.add_routes(dev.routes())
    server.extras.update({"rest": rest, "signal": signal, "dev": dev, "webhooks": webhooks})
    from .lifecycle import attach
    start_sweep = attach(server)

    async def startup(_app: web.Application) -> None:
        server.extras["sweep"] = start_sweep()
    app.on_startup.append(startup)
    app.on_shutdown.append(_shutdown(server))
    return server


def _shutdown(server: Server):  # type: ignore[no-untyped-def]
    async def close(_app: web.Application) -> None:
        sweep = server.extras.get("sweep")
        if sweep is not None:
            sweep.cancel()
        runner = server.extras.get("scenarios")
        if runner is not None:
            await runner.stop()
        from livekit.protocol import models as lkm
        for room in list(server.sfu.rooms.values()):
            await room.close(lkm.DisconnectReason.SERVER_SHUTDOWN)
        server.sfu.rooms.clear()
        await server.extras["webhooks"].close()  # jobs still queued are dropped
    return close
