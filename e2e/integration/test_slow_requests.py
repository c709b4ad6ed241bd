"""Clients that hold connections without finishing a request: slow bodies and slow heads
are answered 408 and closed at the request deadline (`--request-timeout`), connections are capped
per address and in total below the descriptor limit, and at that limit the server stays responsive,
does not spin and does not flood its log."""
import asyncio
import os
import socket
import time

import pytest

from conftest import Server, stopped_cleanly
from signal_client import close_all, joined, run

# Seconds: long enough that what a test checks before the deadline is done well before it, however
# loaded the machine.
DEADLINE = 10


def cpu_seconds(pid):
    """User + system CPU time of a process, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metric(server, name):
    _, _, body, _ = server.request("GET", "/metrics", token=None)
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no {name} in /metrics")


def open_slow(port, n, head_only=False):
    """n connections that announce a 100000-byte body (or send only part of a head) and stop."""
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.setblocking(False)
        if head_only:
            s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        else:
            s.send(b"POST /v1/rooms HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Content-Length: 100000\r\n\r\n{")
        socks.append(s)
    return socks


def read_ready(s):
    """What a non-blocking socket has to read: bytes, b"" at EOF, None when nothing is there yet. A
    reset counts as the end."""
    try:
        return s.recv(4096)
    except BlockingIOError:
        return None
    except (ConnectionResetError, BrokenPipeError):
        return b""


def collect(s, answers):
    """Reads what the server sent on `s` so far into `answers[s]` = (bytes, closed); returns whether
    the server closed it."""
    got, done = answers.get(s, (b"", False))
    while not done and (chunk := read_ready(s)) is not None:
        if chunk:
            got += chunk
        else:
            done = True
    if got or done:
        answers[s] = (got, done)
    return done


def trickle(socks, answers):
    """One more byte on every connection the server has neither answered nor closed (each is read
    just before its byte, so that no byte goes into a connection the server closed, whose reset would
    swallow the answer). Returns how many are still open."""
    for s in socks:
        if not collect(s, answers) and s not in answers:
            try:
                s.send(b"a")
            except OSError:
                answers[s] = (b"", True)
    return sum(1 for s in socks if not answers.get(s, (b"", False))[1])


def closed(socks, answers):
    """How many of `socks` the server has closed (what each got goes to `answers`)."""
    return sum(1 for s in socks if collect(s, answers))


def wait_until(check, what, timeout=60):
    """Polls `check()` until it is true; `timeout` is a hang guard."""
    deadline = time.time() + timeout
    while not check():
        assert time.time() < deadline, f"{what} within {timeout} s"
        time.sleep(0.1)


@pytest.fixture
def short_deadline(tmpdir_path):
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any",
               "--request-timeout", str(DEADLINE), "--max-connections-per-address", "2000").start()
    yield s
    stopped_cleanly(s)


def test_500_slow_bodies_are_closed_at_the_deadline(short_deadline):
    """500 clients that trickle a byte every 0.3 s and never finish a request: each is answered 408
    and closed. A timer restarted by every byte (an idle timeout) would never fire; the deadline is
    per request. Meanwhile health checks, a join and pings are answered while every slow client is
    still connected and none has reached the deadline."""
    s = short_deadline
    socks = open_slow(s.port, 450) + open_slow(s.port, 50, head_only=True)
    answers = {}
    try:
        async def meanwhile():
            a = await joined(s, "alice", room="slow")
            try:
                for _ in range(3):
                    assert s.healthy()
                    assert "pong" in await a.request("ping")
                    assert trickle(socks, answers) == 500, "a slow connection was closed already"
                    assert metric(s, "atrium_http_request_timeouts_total") == 0
            finally:
                await close_all(a)
        run(meanwhile())
        started = time.time()
        while trickle(socks, answers) > 0:
            assert time.time() - started < 60, f"{len(socks) - len(answers)} slow connections still open"
            time.sleep(0.3)
        print(f"the 500 closed within {time.time() - started:.1f} s of the last health check "
              f"(deadline {DEADLINE} s)")
        answered = [got for got, _ in answers.values() if got.startswith(b"HTTP/1.1 408 ")]
        # Each is answered 408 request_timeout (a reset may swallow a few answers, never most).
        assert len(answered) >= 450, f"only {len(answered)} of 500 got the 408"
        assert b'"request_timeout"' in answered[0]
        assert s.alive() and s.healthy()
        assert metric(s, "atrium_http_request_timeouts_total") >= 500
    finally:
        for x in socks:
            x.close()


def test_keep_alive_requests_each_get_the_full_deadline(short_deadline):
    """The clock restarts after each response: a keep-alive client sending a request a second is
    served for longer than one deadline, and none of its requests times out."""
    import http.client
    timeouts = metric(short_deadline, "atrium_http_request_timeouts_total")
    c = http.client.HTTPConnection("127.0.0.1", short_deadline.port, timeout=60)
    opened = time.monotonic()
    for _ in range(DEADLINE + 2):
        c.request("GET", "/healthz")
        r = c.getresponse()
        assert r.status == 200
        r.read()
        time.sleep(0.9)
    assert time.monotonic() - opened > DEADLINE
    c.close()
    assert metric(short_deadline, "atrium_http_request_timeouts_total") == timeouts


def test_connections_per_address_are_capped(tmpdir_path):
    """20 connections held from 127.0.0.1: the 21st is refused (accepted in order, so no wait is
    needed), and once three are closed a request is served again."""
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory",
               "--max-connections-per-address", "20", "--request-timeout", "30").start()
    held = []
    try:
        held = [socket.create_connection(("127.0.0.1", s.port), timeout=5) for _ in range(20)]
        extra = socket.create_connection(("127.0.0.1", s.port), timeout=30)
        extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        try:
            while True:
                chunk = extra.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except ConnectionResetError:
            pass
        extra.close()
        assert reply == b"" or reply.startswith(b"HTTP/1.1 503 "), reply
        if reply:
            assert b'"too_many_connections"' in reply
        for _ in range(3):
            held.pop().close()
        wait_until(lambda: served(s), "no request served after three connections closed")
        assert metric(s, "atrium_http_connections_refused_total") >= 1
        assert s.alive()
    finally:
        for x in held:
            x.close()
        stopped_cleanly(s)
    assert s.stderr_text.count("connections refused") <= 2


def served(server):
    """Whether a health check on a new connection is answered 200 (not refused at the cap)."""
    try:
        return server.healthy()
    except OSError:     # refused: closed before or while the request was read
        return False


def test_low_descriptor_limit_stays_responsive_and_quiet(tmpdir_path):
    """RLIMIT_NOFILE 160: the cap is 160 - 64 = 96 connections. 400 connections arrive; those over the
    cap are refused at once (503), accept never fails with EMFILE (no log flood, no spinning), a meeting
    in progress goes on while the server is at its limit, and once the held ones are closed for
    sending nothing (lws's idle timeout, 10 s, before the request deadline of 20 s) the server answers
    everyone again. The server's CPU time is printed."""
    s = Server(os.path.join(tmpdir_path, "data"), "--dev", "--store", "memory", "--auto-create-rooms", "any",
               "--request-timeout", "20", "--udp-port", "-1", nofile=160).start()
    socks = []
    answers = {}
    refused_probes = []
    started = time.time()

    def probe():
        """A health check on a new connection: True if served, False if refused (and counted)."""
        ok = served(s)
        if not ok:
            refused_probes.append(time.time())
        return ok

    try:
        async def go():
            a = await joined(s, "host", room="limit", role="host")
            b = await joined(s, "guest", room="limit")
            try:
                cpu_before = cpu_seconds(s.proc.pid)
                t0 = time.time()
                for _ in range(400):
                    try:
                        c = socket.create_connection(("127.0.0.1", s.port), timeout=2)
                        c.setblocking(False)
                        socks.append(c)
                    except OSError:
                        pass
                # The server has refused what is over the cap (each refused one reads its 503, or EOF).
                await asyncio.to_thread(wait_until, lambda: closed(socks, answers) >= len(socks) - 96,
                                        "the connections over the cap were not refused")
                # The meeting works at the limit, where a new connection is refused.
                assert "pong" in await a.request("ping")
                await b.request("publish", source="camera")
                await a.expect("track_published")
                assert not probe(), "a health check was served: the server is not at its limit"
                print(f"server CPU at the limit: {cpu_seconds(s.proc.pid) - cpu_before:.2f} s in "
                      f"{time.time() - t0:.2f} s")
                # Once the held connections are closed, new requests are served.
                await asyncio.to_thread(wait_until, lambda: closed(socks, answers) == len(socks),
                                        "the held connections were not closed")
                await asyncio.to_thread(wait_until, probe, "no request served once they were closed")
                assert "pong" in await a.request("ping")
            finally:
                await close_all(a, b)
        run(go(), timeout=180)
        assert s.alive()
        outcomes = [got[:13] for got, _ in answers.values()]
        refused = outcomes.count(b"HTTP/1.1 503 ")
        timed_out = outcomes.count(b"HTTP/1.1 408 ")
        # Each connection was refused (503) or held and then closed, answered 408 or not at all.
        assert refused + timed_out + outcomes.count(b"") == len(socks), set(outcomes)
        assert refused >= len(socks) - 96, (refused, len(socks))
        # Every connection over the cap is counted refused, and so is every health check refused.
        counted = metric(s, "atrium_http_connections_refused_total")
        assert counted == refused + len(refused_probes), (counted, refused, len(refused_probes), timed_out)
        assert metric(s, "atrium_http_request_timeouts_total") == timed_out
    finally:
        for x in socks:
            x.close()
        s.stop()
    err = s.stderr_text
    assert "connections refused" in err and "reason=total" in err, err[-2000:]  # the limit was reached
    assert "errno 24" not in err, err[-2000:]
    # At most one "connections refused" line per 10 s (EdgeServer+Limits.swift).
    refusals = err.count("connections refused")
    assert refusals <= (time.time() - started) / 10 + 1, f"{refusals} refusal lines:\n{err[-3000:]}"
    assert len(err.splitlines()) < 40, f"{len(err.splitlines())} log lines:\n{err[-3000:]}"

