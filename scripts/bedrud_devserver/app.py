"""The aiohttp application: routes, Fiber-style fallbacks, and the server's parts."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Optional

from aiohttp import web

from .config import ServerConfig
from .rest import RestAPI, plain
from .sfu import SFU
from .store import Store

log = logging.getLogger("devserver.app")

BODY_LIMIT = 4 * 1024 * 1024  # Fiber's default in the release binary

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


def build(config: ServerConfig, store: Optional[Store] = None, sfu: Optional[SFU] = None) -> Server:
    store = store or Store()
    sfu = sfu or SFU(config)
    app = web.Application(middlewares=[fiber_fallbacks], client_max_size=BODY_LIMIT)
    server = Server(config=config, store=store, sfu=sfu, app=app)
    rest = RestAPI(config, store, sfu)
    app.add_routes(rest.routes())
    from .devapi import DevAPI
    from .signalling import SignalService
    signal = SignalService(config, store, sfu)
    app.add_routes(signal.routes())
    dev = DevAPI(server)
    app.add_routes(dev.routes())
    server.extras.update({"rest": rest, "signal": signal, "dev": dev})
    app.on_shutdown.append(_shutdown(server))
    return server


def _shutdown(server: Server):  # type: ignore[no-untyped-def]
    async def close(_app: web.Application) -> None:
        runner = server.extras.get("scenarios")
        if runner is not None:
            await runner.stop()
        from livekit.protocol import models as lkm
        for room in list(server.sfu.rooms.values()):
            await room.close(lkm.DisconnectReason.SERVER_SHUTDOWN)
        server.sfu.rooms.clear()
    return close
