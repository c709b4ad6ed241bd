"""One request to a helper process that answers JSON lines on stdin/stdout ({"op": ...} in, {"ok": ...}
or {"error": ...} out): the aiortc publisher worker (media_peer) and the native peers (native_peer),
each a `Process`."""
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


class Process:
    """A helper process that answers JSON lines, for its parent: `await call(op, **fields)` sends one
    request and returns its `ok`; `close()` asks it to stop with `stop_op` and kills it after 5 s.
    A subclass names the process (`who`, in errors) and its defaults."""

    who = "helper process"
    stop_op = "quit"
    call_timeout = 30

    def __init__(self, proc):
        self.proc = proc
        self._lock = asyncio.Lock()

    @property
    def pid(self):
        return self.proc.pid

    async def call(self, op, timeout=None, **fields):
        timeout = self.call_timeout if timeout is None else timeout
        return await call(self.proc, self._lock, self.who, op, timeout, fields)

    async def close(self):
        if self.proc.returncode is None:
            try:
                await self.call(self.stop_op, timeout=5)
            except Exception:
                pass    # gone already, or stuck: it is killed below
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()
