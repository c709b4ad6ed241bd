"""One request to a helper process that answers JSON lines on stdin/stdout ({"op": ...} in, {"ok": ...}
or {"error": ...} out): the aiortc publisher worker (media_peer) and the native peers (native_peer)."""
import asyncio
import json


async def call(proc, lock, who, op, timeout, fields):
    async with lock:
        proc.stdin.write((json.dumps({"op": op, **fields}) + "\n").encode())
        await proc.stdin.drain()
        line = await asyncio.wait_for(proc.stdout.readline(), timeout)
    if not line:
        raise RuntimeError(f"{who} exited (code {proc.returncode}) during {op}")
    reply = json.loads(line)
    if "error" in reply:
        raise RuntimeError(f"{who}, {op}: {reply['error']}")
    return reply["ok"]
