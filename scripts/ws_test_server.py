"""An independent WebSocket server (the `websockets` package) for bedrud-bot's client tests.

Prints `ws://127.0.0.1:PORT` on the first line of stdout, then serves until killed:
  /echo        echoes every message back (text as text, binary as binary)
  /fragments   sends one text message in three fragments, then echoes
  /ping        pings the client, then sends "pong-ok" once the pong arrives
  /close       closes with code 4001 and reason "bye now"
  /auth        answers 401 "invalid token" unless `Authorization: Bearer secret`
  /big         sends one 3 MiB binary message
"""
import asyncio
import http
import sys

from websockets.asyncio.server import serve
from websockets.http11 import Response
from websockets.datastructures import Headers


async def handler(ws):
    path = ws.request.path
    if path == "/fragments":
        await ws.send(["frag-", "ment", "ed"])  # an iterable sends fragments
    elif path == "/ping":
        waiter = await ws.ping(b"are you there")
        await asyncio.wait_for(waiter, 10)
        await ws.send("pong-ok")
    elif path == "/close":
        await ws.close(4001, "bye now")
        return
    elif path == "/big":
        await ws.send(bytes(range(256)) * (3 * 4096))  # 3 MiB
    async for message in ws:
        await ws.send(message)


def process_request(connection, request):
    if request.path == "/auth" and request.headers.get("Authorization") != "Bearer secret":
        return Response(http.HTTPStatus.UNAUTHORIZED, "Unauthorized", Headers({"Content-Type": "text/plain"}), b"invalid token")
    if request.path == "/auth":
        request.path = "/echo"
    return None


async def main():
    # No keepalive pings or timeouts of its own: a loaded test machine must not make it hang up.
    async with serve(handler, "127.0.0.1", 0, process_request=process_request, max_size=8 * 1024 * 1024,
                     ping_interval=None, open_timeout=60, close_timeout=30) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"ws://127.0.0.1:{port}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
