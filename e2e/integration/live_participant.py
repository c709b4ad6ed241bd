"""Keeps participant `alice` live in room `demo` while the OpenAPI conformance run exercises the
live-room routes: joins, publishes a camera and a screen share, pings every 5 s, and joins again
(recreating the room if the run deleted it) whenever the server closes its socket.
Stops by itself after `max_seconds`. Usage: live_participant.py PORT TOKEN ADMIN_TOKEN MAX_SECONDS"""
import asyncio
import json
import sys
import urllib.error
import urllib.request

import websockets

port, token, admin, max_seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])


def ensure_room():
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/rooms", method="POST",
                                 data=json.dumps({"name": "demo"}).encode(),
                                 headers={"Authorization": f"Bearer {admin}", "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=5).read()
    except urllib.error.HTTPError:
        pass  # 409: it exists


async def session():
    async with websockets.connect(f"ws://127.0.0.1:{port}/v1/signal?access_token={token}") as ws:
        for i, msg in enumerate([{"type": "join", "protocol": 1},
                                 {"type": "publish", "source": "camera", "width": 640, "height": 480},
                                 {"type": "publish", "source": "screen_share", "width": 1920, "height": 1080}]):
            await ws.send(json.dumps({**msg, "id": i + 1}))

        async def pinger():
            while True:
                await asyncio.sleep(5)
                await ws.send(json.dumps({"type": "ping"}))

        p = asyncio.create_task(pinger())
        try:
            async for raw in ws:
                m = json.loads(raw)
                if m.get("type") == "error" and m.get("id") == 1:
                    ensure_room()
                    break
        finally:
            p.cancel()


async def main():
    ensure_room()
    while True:
        try:
            await session()
        except (OSError, websockets.WebSocketException):
            pass
        await asyncio.sleep(1)


try:
    asyncio.run(asyncio.wait_for(main(), max_seconds))
except asyncio.TimeoutError:
    pass
