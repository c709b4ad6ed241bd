"""The GStreamer WHIP publisher (gst_whip.py, run with Debian's /usr/bin/python3 and python3-gst-1.0)
as a child process: its JSON lines in, "stop" out."""
import asyncio
import json
import os
import signal

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM_PYTHON = "/usr/bin/python3"


class GstWhip:
    def __init__(self, proc):
        self.proc = proc
        self.posted_at = None  # time.monotonic() (the machine's clock) just before the POST

    @classmethod
    async def start(cls, url, token, **options):
        args = [SYSTEM_PYTHON, os.path.join(HERE, "gst_whip.py"), url, token]
        for k, v in options.items():
            args += [f"--{k}", str(v)]
        proc = await asyncio.create_subprocess_exec(
            *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        return cls(proc)

    async def event(self, timeout=20):
        """The next JSON line (a hang guard bounds the wait); "retry" lines are skipped."""
        while True:
            line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
            assert line, "the GStreamer WHIP publisher exited without a word"
            e = json.loads(line)
            if e.get("event") == "posting":
                self.posted_at = e["monotonic"]
            elif e.get("event") != "retry":
                return e

    async def stop(self, timeout=20):
        """Sends DELETE through the publisher and returns its `deleted` event."""
        self.proc.stdin.write(b"stop\n")
        await self.proc.stdin.drain()
        e = await self.event(timeout)
        await asyncio.wait_for(self.proc.wait(), timeout)
        return e

    def kill(self):
        """Gone without DELETE (a crashed encoder, a pulled cable)."""
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)

    async def close(self):
        self.kill()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except asyncio.TimeoutError:
            pass
