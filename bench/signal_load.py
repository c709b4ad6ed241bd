"""Signaling load benchmark: N WebSocket participants joining R rooms, Atrium and Janus side by side in one run.

The same scenario runs against Atrium and then against Janus (Debian's `janus` package, VideoRoom
plugin over its WebSocket API, janus.transport.websockets), both on 127.0.0.1:

1. The server starts (Janus from bench/janus_peer.py: a configuration of our own, only the VideoRoom
   plugin and the WebSocket transport on a free 127.0.0.1 port, its default 60 s session timeout).
2. The R rooms are created, untimed: Atrium's with `POST /v1/rooms` (names load-0 ...), Janus's with
   the VideoRoom's `create` (ids 1 ...) from one admin session, `notify_joining` on, so that Janus,
   like Atrium (`participant_joined`), tells the others in a room of each participant who joins and
   lists the ones already there in its answer (Atrium's join snapshot).
3. The N participants join, participant i in room i % R, at most `--concurrency` at a time (the
   same for both servers), each on its own WebSocket:
   - Atrium: connect to /v1/signal with a token in the URL, read `welcome`, send `join`, wait for
     its result (the room's snapshot);
   - Janus: connect (subprotocol janus-protocol), `create` a session, `attach`
     janus.plugin.videoroom, send the VideoRoom `join` as a publisher (ptype "publisher", no jsep:
     no media), wait for its `joined` event.
   Join latency is taken two ways for both: from before the TCP connect to the join's answer
   (`connect -> joined`), and from the participant's first request (Atrium's `join`, Janus's
   `create`) to it (`first request -> joined`).
4. Every participant keeps its connection alive from its join on: a keepalive every `--keepalive`
   seconds (Atrium's `ping`, Janus's session `keepalive`), reading everything the server sends. After
   the last join all of them stay `--hold` seconds; then the figures are taken.

Figures: join latency p50/p90/p99/max, joins per second over the join phase, the server process's CPU
time (user + sys, /proc/PID/stat) during the joins and during the hold, its RSS (/proc/PID/status)
with the rooms created and no participant, at the end, and its peak, its thread count; the
notifications of a join the other participants received (should be the same for both servers:
sum over rooms of n(n-1)/2), keepalives answered; this client's CPU during the joins (whether the
client, not the server, was the limit: it is one Python process).

A benchmark, not a test: it asserts nothing about speed. Usage:
    python3 bench/signal_load.py [--participants 1000] [--rooms 100] [--concurrency 100]
                                 [--hold 10] [--keepalive 10] [--skip atrium|janus]
It starts its own servers on 127.0.0.1 and stops them: ATRIUM_BIN (default .build/release/atrium if
built, else .build/debug/atrium), and `janus` from PATH.
"""
import argparse
import asyncio
import base64
import hashlib
import hmac
import http.client
import json
import os
import platform
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import websockets

from janus_peer import JanusError, JanusProcess, dies_with_parent, janus_version, missing as janus_missing
from side_by_side import Table, stop_process

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")
JOIN_TIMEOUT = 60        # seconds one participant's join may take before it counts as failed


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=")


def token(key, secret, identity=None, **grants):
    now = int(time.time())
    head = b64(b'{"alg":"HS256","typ":"JWT"}')
    claims = {"iss": key, "iat": now, "exp": now + 3600, "grants": grants}
    if identity is not None:
        claims["sub"] = identity
    body = b64(json.dumps(claims).encode())
    sig = b64(hmac.new(secret.encode(), head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


# -- process figures --------------------------------------------------------------------------------

def cpu_seconds(pid):
    """user + sys CPU time of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# -- one participant's connection, either server ----------------------------------------------------

class Participant:
    """A joined participant's WebSocket: reads everything the server sends (counting the join
    notifications about others and the answers to its keepalives) and sends a keepalive every
    `interval` seconds until closed."""

    def __init__(self, side, ws, session=None):
        self.side = side
        self.ws = ws
        self.session = session          # Janus's session id
        self.notifications = 0
        self.keepalives_sent = 0
        self.keepalives_answered = 0
        self.lost = None                # why the connection ended early, if it did
        self.tasks = []

    def start(self, interval):
        loop = asyncio.get_running_loop()
        self.tasks = [loop.create_task(self._read()), loop.create_task(self._keepalive(interval))]

    async def _read(self):
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                if self.side.is_notification(msg):
                    self.notifications += 1
                elif self.side.is_keepalive_answer(msg):
                    self.keepalives_answered += 1
        except websockets.ConnectionClosed as e:
            self.lost = f"closed: {e}"
        else:
            self.lost = "closed by the server"

    async def _keepalive(self, interval):
        await asyncio.sleep(interval * random.random())     # spread, as clients that joined apart would
        while True:
            self.keepalives_sent += 1
            try:
                await self.ws.send(json.dumps(self.side.keepalive(self, self.keepalives_sent)))
            except websockets.ConnectionClosed:
                return
            await asyncio.sleep(interval)

    async def close(self):
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        try:
            await asyncio.wait_for(self.ws.close(), 5)
        except Exception:
            self.ws.transport.abort()


async def connect(url, **kwargs):
    return await websockets.connect(url, max_queue=None, ping_interval=None, open_timeout=JOIN_TIMEOUT, **kwargs)


# -- Atrium -----------------------------------------------------------------------------------------

class AtriumSide:
    name = "Atrium"
    KEY, SECRET = "bench", "b" * 40

    def __init__(self, args, workdir):
        self.args = args
        self.binary = os.environ["ATRIUM_BIN"]
        self.data = os.path.join(workdir, "atrium-data")
        os.makedirs(self.data)
        self.proc = None
        self.port = None

    def start(self, timeout=10):
        self.err = open(os.path.join(self.data, "stderr.log"), "w+")
        cmd = [self.binary, "serve", "--bind", "127.0.0.1", "--port", "0", "--udp-port", "0",
               "--media-bind", "127.0.0.1", "--store", "memory", "--data-dir", self.data,
               "--keys", f"{self.KEY}:{self.SECRET}", "--auto-create-rooms", "grant"]
        self.proc = subprocess.Popen(dies_with_parent() + cmd, stdout=subprocess.DEVNULL, stderr=self.err)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"atrium exited with {self.proc.returncode}: {self.log()[-3000:]}")
            m = re.search(r"msg=listening .*port=(\d+)", self.log())
            if m:
                self.port = int(m.group(1))
                return
            time.sleep(0.05)
        raise RuntimeError(f"atrium did not start in {timeout}s: {self.log()[-3000:]}")

    @property
    def pid(self):
        return self.proc.pid

    def log(self):
        with open(self.err.name) as f:
            return f.read()

    def stop(self):
        stop_process(self.proc)
        if self.proc:
            self.err.close()

    def _create_room(self, name, auth):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            body = {"name": name}
            if self.args.per_room > 50:          # the default maxParticipants
                body["maxParticipants"] = self.args.per_room
            conn.request("POST", "/v1/rooms", body=json.dumps(body),
                         headers={"Authorization": f"Bearer {auth}", "Content-Type": "application/json"})
            r = conn.getresponse()
            raw = r.read()
        finally:
            conn.close()
        if r.status != 201:
            raise RuntimeError(f"POST /v1/rooms {name}: HTTP {r.status} {raw[:300]!r}")

    async def create_rooms(self):
        auth = token(self.KEY, self.SECRET, roomCreate=True)
        for k in range(self.args.rooms):
            await asyncio.to_thread(self._create_room, f"load-{k}", auth)

    async def join(self, i):
        """Returns (participant, connect -> joined, first request -> joined), seconds."""
        t0 = time.perf_counter()
        url = (f"ws://127.0.0.1:{self.port}/v1/signal?access_token="
               + token(self.KEY, self.SECRET, f"user-{i}", room=f"load-{i % self.args.rooms}", roomJoin=True,
                       roomCreate=True, canPublish=True, canSubscribe=True, role="participant"))
        ws = await connect(url)
        try:
            welcome = json.loads(await ws.recv())
            if welcome.get("type") != "welcome":
                raise RuntimeError(f"expected welcome, got {welcome}")
            t1 = time.perf_counter()
            await ws.send(json.dumps({"type": "join", "id": 1, "protocol": 1, "autoSubscribe": True}))
            while True:
                msg = json.loads(await ws.recv())
                if msg.get("type") in ("result", "error") and msg.get("id") == 1:
                    break
            if msg["type"] == "error":
                raise RuntimeError(f"join: {msg}")
        except BaseException:
            ws.transport.abort()
            raise
        t2 = time.perf_counter()
        return Participant(self, ws), t2 - t0, t2 - t1

    @staticmethod
    def is_notification(msg):
        return msg.get("type") == "participant_joined"

    @staticmethod
    def is_keepalive_answer(msg):
        return msg.get("type") == "result" and str(msg.get("id", "")).startswith("k")

    @staticmethod
    def keepalive(p, n):
        return {"type": "ping", "id": f"k{n}"}

    def version(self):
        out = subprocess.run([self.binary, "version"], capture_output=True, text=True)
        return f"{out.stdout.strip() or out.stderr.strip()} ({self.binary}; signaling WebSocket /v1/signal)"

    async def close(self):
        pass


# -- Janus ------------------------------------------------------------------------------------------

class JanusSide:
    name = "Janus"

    def __init__(self, args, workdir):
        self.args = args
        # Janus's default session timeout (60 s): the participants' keepalives are what keep them.
        self.janus = JanusProcess(workdir, http=False, websockets=True, session_timeout=60)
        self.admin = None

    def start(self):
        self.janus.start()

    @property
    def pid(self):
        return self.janus.proc.pid

    def log(self):
        return self.janus.log()

    def stop(self):
        self.janus.stop()

    @property
    def url(self):
        return f"ws://127.0.0.1:{self.janus.ws_port}"

    @staticmethod
    async def _request(ws, req, tx):
        """Sends a Janus request and returns the answer with its transaction: `success`, or for a
        plugin message its `event` (after the `ack`). An error, or a plugin error, raises."""
        await ws.send(json.dumps({**req, "transaction": tx}))
        while True:
            msg = json.loads(await ws.recv())
            if msg.get("transaction") != tx or msg.get("janus") == "ack":
                continue
            if msg.get("janus") == "error":
                raise JanusError(f"{req}: {msg.get('error')}")
            data = msg.get("plugindata", {}).get("data", {})
            if "error" in data:
                raise JanusError(f"{req}: {data}")
            return msg

    async def _session(self, ws):
        session = (await self._request(ws, {"janus": "create"}, "c"))["data"]["id"]
        handle = (await self._request(ws, {"janus": "attach", "session_id": session,
                                           "plugin": "janus.plugin.videoroom"}, "a"))["data"]["id"]
        return session, handle

    async def create_rooms(self):
        ws = await connect(self.url, subprotocols=["janus-protocol"])
        session, handle = await self._session(ws)
        for k in range(self.args.rooms):
            r = await self._request(ws, {"janus": "message", "session_id": session, "handle_id": handle, "body": {
                "request": "create", "room": k + 1, "description": f"load-{k}", "permanent": False,
                "publishers": self.args.per_room, "notify_joining": True}}, f"r{k}")
            if r["plugindata"]["data"].get("videoroom") != "created":
                raise JanusError(f"create room {k + 1}: {r}")
        self.admin = Participant(self, ws, session)
        self.admin.start(self.args.keepalive)

    async def join(self, i):
        t0 = time.perf_counter()
        ws = await connect(self.url, subprotocols=["janus-protocol"])
        try:
            t1 = time.perf_counter()
            session, handle = await self._session(ws)
            r = await self._request(ws, {"janus": "message", "session_id": session, "handle_id": handle, "body": {
                "request": "join", "ptype": "publisher", "room": i % self.args.rooms + 1, "display": f"user-{i}"}},
                "j")
            if r.get("janus") != "event" or r["plugindata"]["data"].get("videoroom") != "joined":
                raise JanusError(f"join: {r}")
        except BaseException:
            ws.transport.abort()
            raise
        t2 = time.perf_counter()
        return Participant(self, ws, session), t2 - t0, t2 - t1

    @staticmethod
    def is_notification(msg):
        return msg.get("janus") == "event" and "joining" in msg.get("plugindata", {}).get("data", {})

    @staticmethod
    def is_keepalive_answer(msg):
        return msg.get("janus") == "ack" and str(msg.get("transaction", "")).startswith("k")

    @staticmethod
    def keepalive(p, n):
        return {"janus": "keepalive", "session_id": p.session, "transaction": f"k{n}"}

    def version(self):
        return f"{janus_version()} (VideoRoom, WebSocket API; one event loop thread per handle, its default)"

    async def close(self):
        if self.admin:
            await self.admin.close()


# -- the run common to both servers -----------------------------------------------------------------

async def run_side(side, args):
    participants = []
    failures = []
    connect_lat, first_lat = [], []
    sem = asyncio.Semaphore(args.concurrency)

    async def join(i):
        async with sem:
            try:
                p, whole, first = await asyncio.wait_for(side.join(i), JOIN_TIMEOUT)
            except Exception as e:
                failures.append(f"user-{i}: {type(e).__name__}: {e}")
                return
        connect_lat.append(whole)
        first_lat.append(first)
        p.start(args.keepalive)
        participants.append(p)

    try:
        await side.create_rooms()
        await asyncio.sleep(0.5)
        me = os.getpid()
        rss_idle = proc_status(side.pid, "VmRSS")
        loadavg = " ".join(open("/proc/loadavg").read().split()[:3])
        cpu0, mine0, t0 = cpu_seconds(side.pid), cpu_seconds(me), time.perf_counter()
        await asyncio.gather(*(join(i) for i in range(args.participants)))
        cpu1, mine1, t1 = cpu_seconds(side.pid), cpu_seconds(me), time.perf_counter()
        await asyncio.sleep(args.hold)
        cpu2, t2 = cpu_seconds(side.pid), time.perf_counter()
        figures = {
            "name": side.name, "version": side.version(), "loadavg": loadavg,
            "joined": len(connect_lat), "failures": failures,
            "connect_lat": sorted(connect_lat), "first_lat": sorted(first_lat),
            "join_wall": t1 - t0, "hold_wall": t2 - t1,
            "cpu_join": cpu1 - cpu0, "cpu_hold": cpu2 - cpu1, "cpu_total": cpu2,
            "client_cpu_join": mine1 - mine0,
            "rss_idle": rss_idle, "rss": proc_status(side.pid, "VmRSS"), "hwm": proc_status(side.pid, "VmHWM"),
            "threads": proc_status(side.pid, "Threads"),
            "notifications": sum(p.notifications for p in participants),
            "keepalives_sent": sum(p.keepalives_sent for p in participants),
            "keepalives_answered": sum(p.keepalives_answered for p in participants),
            "lost": [p.lost for p in participants if p.lost],
        }
        return figures
    except Exception:
        print(f"{side.name} log (end):\n" + "".join(side.log().splitlines(True)[-40:]), file=sys.stderr)
        raise
    finally:
        await asyncio.gather(*(p.close() for p in participants), return_exceptions=True)
        await side.close()


# -- report -----------------------------------------------------------------------------------------

def expected_notifications(args):
    sizes = [args.participants // args.rooms + (1 if k < args.participants % args.rooms else 0)
             for k in range(args.rooms)]
    return sum(n * (n - 1) // 2 for n in sizes)


def report(args, results, wall):
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print()
    print(f"machine: {os.cpu_count()} cores ({model}), Linux {platform.release()}, Python "
          f"{platform.python_version()}, websockets {websockets.__version__}; load average before the joins: "
          + "; ".join(f"{r['name']} {r['loadavg']}" for r in results))
    print("versions: " + "; ".join(r["version"] for r in results))
    print(f"scenario: {args.participants} participants, each on its own WebSocket, joining {args.rooms} rooms "
          f"(participant i in room i % {args.rooms}; rooms created beforehand, untimed), at most "
          f"{args.concurrency} joining at a time, from one Python asyncio client; no media; a keepalive every "
          f"{args.keepalive:g} s from each join on; figures after {args.hold:g} s with everyone joined; all on "
          f"127.0.0.1. Janus: session, attach janus.plugin.videoroom, join as publisher without jsep, rooms with "
          f"notify_joining")
    print()

    table = Table(results, min_column=12)
    row = table.row

    def pct(lat, q):
        return lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else None

    row("participants joined", [r["joined"] for r in results])
    for q in (0.50, 0.90, 0.99):
        row(f"join latency p{int(q * 100)}, connect -> joined (ms)", [pct(r["connect_lat"], q) for r in results],
            "{:.2f}", ratio=True)
    row("join latency max, connect -> joined (ms)", [r["connect_lat"][-1] * 1000 if r["connect_lat"] else None
                                                     for r in results], "{:.2f}", ratio=True)
    for q in (0.50, 0.99):
        row(f"join latency p{int(q * 100)}, first request -> joined (ms)", [pct(r["first_lat"], q) for r in results],
            "{:.2f}", ratio=True)
    row("joins per second", [r["joined"] / r["join_wall"] for r in results], "{:.0f}", ratio=True)
    row("join phase wall time (s)", [r["join_wall"] for r in results], "{:.2f}")
    row("server CPU during the joins, user+sys (s)", [r["cpu_join"] for r in results], "{:.2f}", ratio=True)
    row("server CPU per join (ms)", [1000 * r["cpu_join"] / r["joined"] if r["joined"] else None for r in results],
        "{:.2f}", ratio=True)
    row("server CPU during the joins (% of one core)", [100 * r["cpu_join"] / r["join_wall"] for r in results],
        "{:.0f}")
    row("server CPU during the hold (% of one core)", [100 * r["cpu_hold"] / r["hold_wall"] for r in results],
        "{:.1f}", ratio=True)
    row("server CPU since its start, at the end (s)", [r["cpu_total"] for r in results], "{:.2f}", ratio=True)
    row("server RSS, rooms created, nobody in (MiB)", [r["rss_idle"] / 1024 for r in results], "{:.1f}", ratio=True)
    row("server RSS at the end (MiB)", [r["rss"] / 1024 for r in results], "{:.1f}", ratio=True)
    row("server RSS added per participant (KiB)", [(r["rss"] - r["rss_idle"]) / r["joined"] if r["joined"] else None
                                                   for r in results], "{:.1f}", ratio=True)
    row("server peak RSS (MiB)", [r["hwm"] / 1024 for r in results], "{:.1f}", ratio=True)
    row("server threads at the end", [r["threads"] for r in results], "{}")
    row(f"join notifications received (expected {expected_notifications(args)})",
        [r["notifications"] for r in results])
    row("keepalives answered / sent", [f"{r['keepalives_answered']}/{r['keepalives_sent']}" for r in results])
    row("client CPU during the joins (% of one core)", [100 * r["client_cpu_join"] / r["join_wall"] for r in results],
        "{:.0f}")

    table.print()
    for r in results:
        if r["failures"]:
            print(f"\n{r['name']}: {len(r['failures'])} joins failed, first: {r['failures'][:3]}")
        if r["lost"]:
            print(f"\n{r['name']}: {len(r['lost'])} connections ended before the end, first: {r['lost'][:3]}")
        if r["client_cpu_join"] / r["join_wall"] > 0.9:
            print(f"\nNOTE: the client used {100 * r['client_cpu_join'] / r['join_wall']:.0f}% of a core during "
                  f"{r['name']}'s joins: it may have been the limit (lower --concurrency, or fewer --participants).")
    print(f"\nwall time: {wall:.1f} s")


async def main_async(args):
    results = []
    workdir = tempfile.mkdtemp(prefix="atrium-signal-bench-")
    try:
        for cls in (AtriumSide, JanusSide):
            if cls.name.lower() in args.skip:
                continue
            print(f"running {cls.name} ...", flush=True)
            side = cls(args, workdir)
            try:
                side.start()
                r = await run_side(side, args)
            finally:
                side.stop()
            print(f"  {r['joined']} joined in {r['join_wall']:.2f} s, {len(r['failures'])} failed", flush=True)
            results.append(r)
            await asyncio.sleep(1)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--participants", type=int, default=1000)
    ap.add_argument("--rooms", type=int, default=100)
    ap.add_argument("--concurrency", type=int, default=100, help="participants joining at once, for both servers")
    ap.add_argument("--hold", type=float, default=10, help="seconds everyone stays joined before the figures")
    ap.add_argument("--keepalive", type=float, default=10, help="seconds between one participant's keepalives")
    ap.add_argument("--skip", action="append", default=[], choices=["atrium", "janus"],
                    help="leave one server out (no ratios then)")
    args = ap.parse_args()
    args.per_room = -(-args.participants // args.rooms)
    if "janus" not in args.skip and janus_missing(["websockets"]):
        sys.exit(janus_missing(["websockets"]) + " (or --skip janus)")
    if not os.environ.get("ATRIUM_BIN"):
        os.environ["ATRIUM_BIN"] = next(
            (p for p in (os.path.join(ROOT, ".build/release/atrium"), os.path.join(ROOT, ".build/debug/atrium"))
             if os.path.exists(p)), os.path.join(ROOT, ".build/debug/atrium"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))     # the servers inherit it
    t0 = time.monotonic()
    results = asyncio.run(main_async(args))
    report(args, results, time.monotonic() - t0)


if __name__ == "__main__":
    main()
