"""A small asyncio client for `/v1/signal`, for the integration tests.

    c = await connect(server, "alice", room="demo", role="host")   # reads the welcome
    snap = await c.join()                                          # the join result's data
    data = await c.request("publish", source="screen_share")       # result data, or raises SignalError
    ev = await c.expect("share_started", lambda m: m["share"]["participantId"] == pid)
    await c.no_event("participant_left")                           # none before a ping's answer

A background task reads every message. Results and errors that carry the id of a pending request
resolve that request; everything else (pushed events, errors without an id) is buffered in arrival
order until `expect` takes it. `log` keeps every message received, so a test can check ordering.
"""
import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import subprocess
import time

import websockets

from conftest import ATRIUM_BIN

# A hang guard for every request and event, not a figure: generous enough for a ThreadSanitizer build.
DEFAULT_TIMEOUT = 10.0


def mint(server, room, identity, role=None, sources=None, name=None, admin=False, ttl=None):
    """A participant token from `atrium token create` (signed with the dev key of `server`)."""
    cmd = [ATRIUM_BIN, "token", "create", "--key", server.key, "--secret", server.secret,
           "--room", room, "--identity", identity]
    if role:
        cmd += ["--role", role]
    if sources is not None:
        cmd += ["--sources", ",".join(sources) if not isinstance(sources, str) else sources]
    if name:
        cmd += ["--name", name]
    if admin:
        cmd += ["--admin"]
    if ttl:
        cmd += ["--ttl", str(ttl)]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


def mint_jwt(server, identity, grants, ttl=3600, name=None):
    """A token signed here (HS256), for grants the CLI cannot express (hidden participants)."""
    def b64(b):
        return base64.urlsafe_b64encode(b).rstrip(b"=")
    now = int(time.time())
    claims = {"iss": server.key, "sub": identity, "iat": now, "exp": now + ttl, "grants": grants}
    if name:
        claims["name"] = name
    head = b64(b'{"alg":"HS256","typ":"JWT"}')
    body = b64(json.dumps(claims).encode())
    sig = b64(hmac.new(server.secret.encode(), head + b"." + body, hashlib.sha256).digest())
    return (head + b"." + body + b"." + sig).decode()


def signal_url(server, token=None):
    u = f"ws://127.0.0.1:{server.port}/v1/signal"
    return u + ("?access_token=" + token if token else "")


class SignalError(Exception):
    """An `error` answer: `code`, `message` and, for invalid_field, the `field` it names."""

    def __init__(self, request_type, msg):
        self.request_type = request_type
        self.reply = msg
        err = msg.get("error") or {}
        self.code = err.get("code")
        self.message = err.get("message", "")
        super().__init__(f"{request_type}: {self.code}: {self.message}")

    @property
    def field(self):
        # HubError.invalidField's message is "<field>: <why>"
        return self.message.split(":", 1)[0] if self.code == "invalid_field" else None


class Closed(Exception):
    """The socket closed while a request was pending or an event awaited."""


class Client:
    _ids = itertools.count(1)

    def __init__(self, ws, label):
        self.ws = ws
        self.label = label
        self.log = []          # every message received, in order
        self.events = []       # buffered, not yet expected
        self.welcome = None
        self.snapshot = None
        self.participant_id = None
        self.resume_token = None
        self.close_code = None
        self.close_reason = None
        self._pending = {}
        self._arrived = asyncio.Event()
        self._closed = asyncio.Event()
        self._keepalive = None
        self._reader = asyncio.get_running_loop().create_task(self._read())

    # -- reading -----------------------------------------------------------------------------------

    async def _read(self):
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                self.log.append(msg)
                mid = msg.get("id")
                if msg.get("type") in ("result", "error") and mid is not None:
                    if isinstance(mid, str) and mid.startswith("keepalive-"):
                        continue
                    fut = self._pending.pop(mid, None)
                    if fut is not None and not fut.done():
                        fut.set_result((len(self.log) - 1, msg))
                        continue
                self.events.append(msg)
                self._arrived.set()
        except websockets.ConnectionClosed:
            pass
        except Exception as e:  # a non-JSON message is a failure of the server; surface it
            self.events.append({"type": "__reader_error__", "error": repr(e)})
        finally:
            self.close_code = self.ws.close_code
            self.close_reason = self.ws.close_reason
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(Closed(f"{self.label}: closed {self.close_code} {self.close_reason!r}"))
            self._pending.clear()
            self._closed.set()
            self._arrived.set()

    @property
    def is_closed(self):
        return self._closed.is_set()

    # -- requests ----------------------------------------------------------------------------------

    async def send_json(self, obj):
        await self.ws.send(json.dumps(obj))

    async def send_raw(self, data):
        await self.ws.send(data)

    async def request(self, type_, timeout=DEFAULT_TIMEOUT, **fields):
        """Sends `{"type": type_, "id": n, **fields}`; returns the result's data, raises SignalError."""
        data, _ = await self.request_indexed(type_, timeout=timeout, **fields)
        return data

    async def request_indexed(self, type_, timeout=DEFAULT_TIMEOUT, **fields):
        """Like `request`, also returns the index in `log` of the answer (to check event ordering)."""
        if self.is_closed:
            raise Closed(f"{self.label}: already closed {self.close_code}")
        rid = next(Client._ids)
        fut = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        await self.send_json({"type": type_, "id": rid, **fields})
        try:
            index, msg = await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            self._pending.pop(rid, None)
            raise AssertionError(f"{self.label}: no answer to {type_} within {timeout}s; buffered {self.events}")
        if msg["type"] == "error":
            raise SignalError(type_, msg)
        return msg.get("data"), index

    async def refused(self, type_, code=None, timeout=DEFAULT_TIMEOUT, **fields):
        """Sends a request that must fail; returns the SignalError (checking its code when given)."""
        try:
            data = await self.request(type_, timeout=timeout, **fields)
        except SignalError as e:
            if code is not None:
                assert e.code == code, f"{self.label}: {type_} refused with {e.code} ({e.message}), expected {code}"
            return e
        raise AssertionError(f"{self.label}: {type_} {fields} succeeded ({data}), expected error {code}")

    async def join(self, protocol=1, **fields):
        data = await self.request("join", protocol=protocol, **fields)
        self._remember(data)
        return data

    async def resume(self, resume_token, protocol=1):
        data = await self.request("resume", protocol=protocol, resumeToken=resume_token)
        self._remember(data)
        return data

    async def leave(self, timeout=DEFAULT_TIMEOUT):
        """Sends `leave` (not awaiting its answer) and waits for the close; returns its code."""
        await self.send_json({"type": "leave", "id": f"leave-{next(Client._ids)}"})
        return (await self.wait_closed(timeout))[0]

    def _remember(self, snapshot):
        self.snapshot = snapshot
        self.participant_id = snapshot["participant"]["id"]
        self.resume_token = snapshot["resumeToken"]

    # -- events ------------------------------------------------------------------------------------

    def _take(self, type_, predicate):
        for i, m in enumerate(self.events):
            if m.get("type") == type_ and (predicate is None or predicate(m)):
                return self.events.pop(i)
        return None

    async def expect(self, type_, predicate=None, timeout=DEFAULT_TIMEOUT):
        """Waits for a pushed message of `type_` matching `predicate`; other messages stay buffered."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            m = self._take(type_, predicate)
            if m is not None:
                return m
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0 or self.is_closed:
                raise AssertionError(
                    f"{self.label}: no {type_} event matching within {timeout}s"
                    f"{' (closed %s)' % self.close_code if self.is_closed else ''}; buffered: {self.events}")
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def expect_error(self, code, timeout=DEFAULT_TIMEOUT):
        """Waits for an `error` without a pending request (malformed_json, rate_limited, ...)."""
        return await self.expect("error", lambda m: m["error"]["code"] == code, timeout)

    async def no_event(self, type_, predicate=None):
        """Asserts that no message of `type_` (matching `predicate`) arrived before the answer to a
        `ping` sent now. The server handles one request at a time and pushes a request's events before
        its result (docs/protocol.md, "Ordering"), so once another client's request has been answered,
        this ping's answer comes after every event that request caused here: a fence, not a wait."""
        _, fence = await self.request_indexed("ping")
        before = {id(m) for m in self.log[:fence]}
        hits = [m for m in self.events
                if id(m) in before and m.get("type") == type_ and (predicate is None or predicate(m))]
        assert not hits, f"{self.label}: unexpected {type_}: {hits}"

    def drain(self):
        """Drops every buffered event (after a phase whose events were checked)."""
        self.events.clear()

    def index_of(self, msg):
        """Position of a received message in `log` (identity, not equality)."""
        for i, m in enumerate(self.log):
            if m is msg:
                return i
        raise ValueError("not received")

    # -- connection --------------------------------------------------------------------------------

    def start_keepalive(self, interval=1.0):
        """Pings every `interval` seconds (for servers with a short idle timeout)."""
        async def loop():
            n = 0
            while not self.is_closed:
                n += 1
                try:
                    await self.send_json({"type": "ping", "id": f"keepalive-{n}"})
                except websockets.ConnectionClosed:
                    return
                await asyncio.sleep(interval)
        self._keepalive = asyncio.get_running_loop().create_task(loop())

    async def wait_closed(self, timeout=DEFAULT_TIMEOUT):
        """Waits for the server to close; returns (code, reason) of its close frame (1006 if none)."""
        try:
            await asyncio.wait_for(self._closed.wait(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"{self.label}: still open after {timeout}s; buffered {self.events}")
        return self.close_code, self.close_reason

    def pause_reading(self):
        """Stops reading the socket at the TCP level (a half-open peer)."""
        self.ws.transport.pause_reading()

    def resume_reading(self):
        self.ws.transport.resume_reading()

    def abort(self):
        """Drops the TCP connection without a closing handshake."""
        self.ws.transport.abort()

    async def close(self):
        if self._keepalive:
            self._keepalive.cancel()
        try:
            await asyncio.wait_for(self.ws.close(), 2)
        except Exception:
            self.ws.transport.abort()
        try:
            await asyncio.wait_for(self._reader, 2)
        except Exception:
            self._reader.cancel()


async def connect(server, identity, room="main", role=None, sources=None, token=None, label=None, **ws_options):
    """Opens `/v1/signal` with a minted token (or `token`) and waits for the welcome."""
    if token is None:
        token = mint(server, room, identity, role=role, sources=sources)
    ws_options.setdefault("ping_interval", None)
    ws = await websockets.connect(signal_url(server, token), open_timeout=DEFAULT_TIMEOUT, **ws_options)
    c = Client(ws, label or identity)
    welcome = await c.expect("welcome")
    c.welcome = welcome
    return c


async def joined(server, identity, room="main", role=None, sources=None, token=None, **join_fields):
    """connect + join."""
    c = await connect(server, identity, room=room, role=role, sources=sources, token=token)
    await c.join(**join_fields)
    return c


async def close_all(*clients):
    for c in clients:
        if c is not None:
            await c.close()


async def close_quietly(opened, timeout=10):
    """Closes what a test opened, last first, each within `timeout`, ignoring what fails: for tests
    that kill nodes, whose peers and sockets may be gone or hang."""
    for x in reversed(opened):
        try:
            await asyncio.wait_for(x.close(), timeout)
        except Exception:
            pass


class Opened:
    """What a test opens inside `async with Opened() as opened:`, closed on the way out whatever
    happens (close_quietly: last first, each within 10 s). `opened.add(x)` keeps x and returns it."""

    def __init__(self):
        self.items = []

    def add(self, x):
        self.items.append(x)
        return x

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await close_quietly(self.items)


def run(coro, timeout=60):
    return asyncio.run(asyncio.wait_for(coro, timeout))
