"""The GStreamer WHIP publisher (gst_whip.py) and WHEP player (gst_whep.py), run with Debian's
/usr/bin/python3 and python3-gst-1.0, as child processes: their JSON lines in, "stop" out."""
import asyncio
import json
import os
import signal

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM_PYTHON = "/usr/bin/python3"


class GstWhip:
    script = "gst_whip.py"

    def __init__(self, proc):
        self.proc = proc
        self.posted_at = None  # time.monotonic() (the machine's clock) just before the POST

    @classmethod
    async def start(cls, url, token, **options):
        args = [SYSTEM_PYTHON, os.path.join(HERE, cls.script), url, token]
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
                self.posted_wall = e.get("wall")
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


class GstWhep(GstWhip):
    """`pads`: the kinds of the streams webrtcbin opened; `video`, `audio`: its latest counts of frames
    (seconds of audio) by class."""

    script = "gst_whep.py"

    def __init__(self, proc):
        super().__init__(proc)
        self.pads, self.video, self.audio = [], {}, {}

    async def event(self, timeout=20):
        """The next JSON line that is neither a pad nor stats (those update the counts)."""
        while True:
            e = await super().event(timeout)
            if e.get("event") == "pad":
                self.pads.append(e["kind"])
            elif e.get("event") == "stats":
                self.video, self.audio = e["video"], e["audio"]
                return e
            else:
                return e

    async def wait_class(self, kind, what, count, timeout):
        """Waits (a hang guard bounds it) until `count` frames (video) or seconds (audio) of `what`
        have been decoded."""
        deadline = asyncio.get_running_loop().time() + timeout
        while (self.video if kind == "video" else self.audio).get(what, 0) < count:
            left = deadline - asyncio.get_running_loop().time()
            assert left > 0, f"no {count} {what} of {kind} within {timeout}s: video {self.video}, audio {self.audio}"
            await self.event(timeout=left)
