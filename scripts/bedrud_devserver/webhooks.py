"""Bedrud's outbound webhooks as v0.12.0 (a4fa6dc) sends them.

Where they fire: `dispatchRoomEvent` (handlers/room.go:3148-3185) lists the active
endpoints subscribed to the event (webhook_repository.go:66-91) and enqueues one
`dispatch_webhook` job per endpoint, carrying the URL, the event, the body
`{roomId, roomName, userId}` and the endpoint's secret *as it is then* (queue/job.go:43-49).
The handlers call it after room create (room.go:392), join (476), guest-join (665) and
delete (1752: `room.ended`). An idle room, or one LiveKit closes, sends nothing.

How they go out: queue/handler_dispatch_webhook.go:19-92. The envelope
`{"event", "timestamp", "data"}` is marshalled by Go's encoding/json from a map, so its
keys (and data's) are sorted and `<>&` are \\u-escaped; `timestamp` is
`time.Now().UTC().Format(time.RFC3339)` (whole seconds, `Z`), taken when the job runs,
and sent again as `X-Bedrud-Timestamp`. `X-Bedrud-Signature: sha256=<hex HMAC-SHA256 of
the body with the secret>`, `X-Bedrud-Event`, `Content-Type: application/json`. One
attempt, a 10 s client timeout, every failure (network, timeout, non-2xx) only logged.

The queue: Bedrud's worker polls its jobs table every 500 ms and runs one job at a time
(server/server.go:374-394: Concurrency 1 by default, forced for SQLite), so deliveries go out in
order and a receiver that never answers holds the ones after it for its 10 s. The
devserver keeps that order and that hold (one worker task), without the poll delay,
and never blocks the request that fired the event.

`POST /api/admin/webhooks/:id/test` (admin_handler.go:1579-1632) does not use the
queue: it sends a `ping` with `data: {}` inside the request and answers the result.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from .store import Store

log = logging.getLogger("devserver.webhooks")

TIMEOUT = 10.0  # http.Client{Timeout: 10 * time.Second} (handler_dispatch_webhook.go:29, admin_handler.go:1613)
USER_AGENT = "Go-http-client/1.1"  # Go's default; Bedrud sets none
KEEP_DELIVERIES = 1000


def go_json(value: Any) -> bytes:
    """json.Marshal of Go maps: sorted keys, no spaces, `<`, `>`, `&`, U+2028 and U+2029
    escaped, other non-ASCII as UTF-8 (those characters only occur inside strings)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text.encode()


def rfc3339_seconds(ts: float) -> str:
    """time.Now().UTC().Format(time.RFC3339): whole seconds, `Z`."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def envelope(event: str, timestamp: str, data: Optional[dict]) -> bytes:
    """The body (handler_dispatch_webhook.go:40-53): nil data becomes `{}`."""
    return go_json({"event": event, "timestamp": timestamp, "data": data if data is not None else {}})


def signature(secret: str, body: bytes) -> str:
    """X-Bedrud-Signature (handler_dispatch_webhook.go:56-59)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def url_problem(url: str) -> Optional[str]:
    """None when Go's url.Parse accepts `url` with a scheme and a host (admin_handler.go:
    1368-1374, 1462-1468), else "parse" (url.Parse fails), "relative" or "scheme". There is
    no other check: loopback and private addresses are accepted, as Bedrud accepts them."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "parse"  # net/url: invalid control character in URL
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        if ":" in host and not host.endswith("]"):
            port = host.rsplit(":", 1)[1]
            if port and not port.isdigit():
                return "parse"  # net/url: invalid port
    except ValueError:
        return "parse"
    if not parts.scheme or not host:
        return "relative"
    if parts.scheme not in ("http", "https"):
        return "scheme"
    return None


@dataclass
class Delivery:
    """One POST the devserver made (or is about to make): listed by GET /_dev/webhooks."""
    seq: int
    source: str  # "queue" (an event) or "test" (the admin test route)
    webhook_id: str
    url: str
    event: str
    data: Optional[dict]
    secret: str
    enqueued_at: float
    timestamp: str = ""
    body: str = ""
    signature: str = ""
    started_at: Optional[float] = None
    finished_at: Optional[float] = None
    status: Optional[int] = None
    outcome: str = "queued"  # queued, sending, delivered, non_2xx, delivery_failed, invalid_url
    error: str = ""

    def to_json(self) -> dict:
        return {"seq": self.seq, "source": self.source, "webhookId": self.webhook_id, "url": self.url,
                "event": self.event, "timestamp": self.timestamp, "body": self.body, "signature": self.signature,
                "enqueuedAt": self.enqueued_at, "startedAt": self.started_at, "finishedAt": self.finished_at,
                "status": self.status, "outcome": self.outcome, "error": self.error}


@dataclass
class Dispatcher:
    """dispatchRoomEvent + the queue worker + the dispatch_webhook handler."""
    store: Store
    clock: Callable[[], float] = time.time
    deliveries: list[Delivery] = field(default_factory=list)
    _queue: Optional[asyncio.Queue] = None
    _worker: Optional[asyncio.Task] = None
    _session: Any = None
    _seq: int = 0

    def dispatch_room_event(self, event: str, room_id: str, room_name: str, user_id: str) -> int:
        """room.go:3148-3185: one job per active endpoint subscribed to `event`, in the
        order the repository lists them (creation order); returns how many."""
        hooks = [w for w in self.store.webhooks.values() if w.is_active and event in w.events]
        data = {"roomId": room_id, "roomName": room_name, "userId": user_id}
        for w in hooks:
            self._enqueue(self._new("queue", w.id, w.url, event, data, w.secret))
        return len(hooks)

    def _new(self, source: str, webhook_id: str, url: str, event: str, data: Optional[dict],
             secret: str) -> Delivery:
        self._seq += 1
        d = Delivery(seq=self._seq, source=source, webhook_id=webhook_id, url=url, event=event, data=data,
                     secret=secret, enqueued_at=self.clock())
        self.deliveries.append(d)
        del self.deliveries[:-KEEP_DELIVERIES]
        return d

    def _enqueue(self, d: Delivery) -> None:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._worker = asyncio.ensure_future(self._work())
        self._queue.put_nowait(d)

    @property
    def queued(self) -> int:
        return self._queue.qsize() if self._queue is not None else 0

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            d = await self._queue.get()
            try:
                await self.send(d)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 — a job never takes the worker down
                log.exception("webhook: delivery %d failed unexpectedly", d.seq)

    async def send(self, d: Delivery) -> Delivery:
        """handler_dispatch_webhook.go:31-91 (and the test route's copy of it)."""
        import aiohttp
        d.timestamp = rfc3339_seconds(self.clock())
        body = envelope(d.event, d.timestamp, d.data)
        d.body, d.signature = body.decode(), signature(d.secret, body)
        d.started_at, d.outcome = self.clock(), "sending"
        headers = {"Content-Type": "application/json", "X-Bedrud-Signature": d.signature,
                   "X-Bedrud-Event": d.event, "X-Bedrud-Timestamp": d.timestamp, "User-Agent": USER_AGENT}
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(skip_auto_headers=("User-Agent",))
        try:
            if url_problem(d.url) is not None:
                raise ValueError("invalid URL")
            async with self._session.post(d.url, data=body, headers=headers,
                                          timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as resp:
                d.status = resp.status
            d.outcome = "delivered" if 200 <= d.status < 300 else "non_2xx"
            level = logging.INFO if d.outcome == "delivered" else logging.WARNING
            log.log(level, "webhook: %s %s to %s: %d", d.event, "delivered" if level == logging.INFO else "non-2xx response",
                    d.url, d.status)
        except (ValueError, aiohttp.InvalidURL) as exc:
            d.outcome, d.error = "invalid_url", f"parse {_go_quote(d.url)}: {exc}"
            log.warning("webhook: invalid URL %s (%s)", d.url, d.event)
        except asyncio.TimeoutError:
            d.outcome = "delivery_failed"
            d.error = f"Post {_go_quote(d.url)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
            log.warning("webhook: %s to %s: delivery failed (timeout)", d.event, d.url)
        except aiohttp.ClientError as exc:
            d.outcome, d.error = "delivery_failed", f"Post {_go_quote(d.url)}: {_network_error(d.url, exc)}"
            log.warning("webhook: %s to %s: delivery failed (network error: %s)", d.event, d.url, exc)
        finally:
            d.finished_at = self.clock()
        return d

    async def test(self, webhook_id: str, url: str, secret: str) -> dict:
        """TestWebhook (admin_handler.go:1579-1632): a `ping` with `data: {}` sent now,
        the answer `{status, httpStatus, latencyMs}` or `{status, error, latencyMs}`."""
        start = time.monotonic()
        d = await self.send(self._new("test", webhook_id, url, "ping", {}, secret))
        latency = int((time.monotonic() - start) * 1000)
        if d.outcome == "invalid_url":
            return {"status": "error", "error": f"Invalid URL: {d.error}"}
        if d.outcome == "delivery_failed":
            return {"status": "delivery_failed", "error": d.error, "latencyMs": latency}
        return {"status": "success" if d.outcome == "delivered" else "non_2xx", "httpStatus": d.status,
                "latencyMs": latency}

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
            self._worker = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def dev_state(self) -> dict:
        return {"webhooks": [dict(w.to_json(secret=w.secret)) for w in self.store.webhooks.values()],
                "deliveries": [d.to_json() for d in self.deliveries], "queued": self.queued}


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _network_error(url: str, exc: Exception) -> str:
    """Roughly the text of Go's net error, e.g. `dial tcp 127.0.0.1:9: connect: connection refused`."""
    import aiohttp
    if isinstance(exc, aiohttp.ClientConnectorError):
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        reason = "connection refused" if isinstance(exc.os_error, ConnectionRefusedError) else str(exc.os_error.strerror or exc.os_error).lower()
        return f"dial tcp {parts.hostname}:{port}: connect: {reason}"
    return str(exc) or type(exc).__name__
