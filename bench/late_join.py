"""Late-join benchmark: how long a viewer joining a running screen share waits for its first decoded
frame, Atrium with its key-frame cache, Atrium with `--key-frame-cache-bytes 0`, and Janus's
VideoRoom, side by side in one run (docs/protocol.md §14, "The key-frame cache").

One aiortc sharer (a publisher worker of e2e/integration/media_peer.py) sends a static screen
(1280x720, 15 fps, the stripes of media_peer's screen, VP8 made VBR by `vbr_vp8`, so that an
unchanging picture costs what a screen encoder spends on one) and answers key-frame requests (PLI,
FIR) as aiortc does: its next frame is a key frame. It ignores REMB (`ignore_remb`): aiortc's VP8
encoder starts again, with a key frame, whenever REMB moves its target by 10%, and those key frames
would start viewers that asked for none. After a warm-up, `--joins` viewers join one after
another, `--interval` seconds apart; each is an aiortc peer that decodes, and is closed once it has
decoded its first frame. Per join: the time from its request (Atrium: the WebSocket connect and
`join`, which subscribes it; Janus: `attach` and the subscriber `join`, on a session opened before)
to its first decoded frame, which must show the share (media_peer's `classify_video`). Printed: p50,
p95, min and max of those times, the key-frame requests the sharer got and the key frames it sent
during the joins (counted in the worker), and Atrium's own counters (cache starts, PLIs sent,
its first-frame histogram).

With the cache a viewer starts from the server's copy of the current picture and the sharer is asked
for nothing; without it (and in Janus) each viewer waits for the key frame its join makes the server
ask for. A benchmark, not a test: it asserts nothing about speed. Usage:
    python3 bench/late_join.py [--joins 20] [--interval 1] [--warmup 3]
It starts its own servers on 127.0.0.1 (ATRIUM_BIN, and `janus` configured by bench/janus_peer.py)
and stops them; every candidate either server announces is checked to be 127.0.0.1.
"""
import argparse
import asyncio
import os
import platform
import shutil
import tempfile
import time

# Importing media_forward puts e2e/integration on the path (media_peer's import confines aioice to
# 127.0.0.1) and picks ATRIUM_BIN.
import media_forward as mf
from media_forward import (JanusProcess, JanusSession, Table, atrium_metric, atrium_version,
                           janus_version, loopback_candidates_only)
import aiortc
from aiortc import RTCSessionDescription
from aiortc.mediastreams import MediaStreamError
from media_peer import (VIDEO, Publisher, Subscriber, _Worker, classify_video, peer_connection, read_stamp,
                        stamp_not_before)

SOURCE = "screen_share"     # the static screen; `--source camera`: a live camera (see publisher_options)


def publisher_options(source):
    """The sharer's worker options. The static screen: VP8 made VBR, so an unchanging picture costs
    what a screen encoder spends on one. The live camera: the busy camera (fresh noise in every frame,
    so its cached picture grows by every frame's full size) with the capture clock in the picture,
    which tells a viewer's first live picture (captured after its join) from the cached old one."""
    if source == "camera":
        return {"busy": [source], "stamped": [source], "ignore_remb": [source]}
    return {"vbr_vp8": True, "ignore_remb": [source]}
CASES = [("Atrium, cache", "atrium", ()), ("Atrium, no cache", "atrium", ("--key-frame-cache-bytes", "0")),
         ("Janus", "janus", ())]


def percentile(values, p):
    """The nearest-rank percentile of `values` (p in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-len(ordered) * p // 100) - 1))]


async def first_frame(track, out, live_after_ms=None):
    """Drains a received video track; notes when its first frame was decoded and what it showed, and
    with `live_after_ms`, when the first frame captured at or after it was."""
    while True:
        try:
            frame = await track.recv()
        except MediaStreamError:
            return
        if "at" not in out:
            out["at"] = time.monotonic()
            out["class"] = classify_video(frame)
        if live_after_ms is not None and "live" not in out and stamp_not_before(read_stamp(frame), live_after_ms):
            out["live"] = time.monotonic()


async def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def joins(args, join_one, sharer, burst=0, server_snapshot=None):
    """Runs `args.joins` joins, `args.interval` apart, then `burst` joins at once; `join_one(i)` returns
    (seconds to the first frame or None, what it showed). Returns the figures, with the sharer's
    counts over the joins, and `server_snapshot()` (a coroutine) taken before and after the burst."""
    before = await sharer.call("stats")
    times, failures, wrong = [], 0, 0
    for i in range(args.joins):
        started = time.monotonic()
        seconds, shown = await join_one(i)
        if seconds is None:
            failures += 1
        else:
            times.append(seconds)
            wrong += shown != args.source
        await asyncio.sleep(max(0.0, started + args.interval - time.monotonic()))
    burst_times = []
    burst_server = None
    if burst:
        if server_snapshot:
            burst_server = [await server_snapshot()]
        for seconds, shown in await asyncio.gather(*(join_one(args.joins + j) for j in range(burst))):
            if seconds is None:
                failures += 1
            else:
                burst_times.append(seconds)
                wrong += shown != args.source
        if server_snapshot:
            await asyncio.sleep(1.5)        # the metrics snapshot is refreshed once a second
            burst_server.append(await server_snapshot())
    after = await sharer.call("stats")
    return {"times": times, "burst_times": burst_times, "burst_server": burst_server, "failures": failures,
            "wrong": wrong,
            "requests": after["keyFrameRequests"][args.source] - before["keyFrameRequests"][args.source],
            "key_frames": after["keyFramesSent"][args.source] - before["keyFramesSent"][args.source],
            "sharer_key_frames": after["keyFramesSent"][args.source]}


async def run_atrium(args, workdir, name, flags):
    from conftest import Server
    from signal_client import joined

    server = Server(os.path.join(workdir, f"atrium-{len(flags)}"), *mf.ATRIUM_ARGS, *flags).start()
    opened = []
    try:
        sharer = await joined(server, "sharer", room="late")
        sharer.start_keepalive(5)
        opened.append(sharer)
        source = args.source
        pub = await Publisher.start(sharer, [source], **publisher_options(source))
        opened.append(pub)
        loopback_candidates_only(pub.result["sdp"], "Atrium's publisher answer")
        await asyncio.sleep(args.warmup)

        async def counters():
            return {k: await atrium_metric(server, metric, **labels) for k, metric, labels in (
                ("served", "atrium_media_key_frame_cache_starts_total", {"result": "served"}),
                ("missed", "atrium_media_key_frame_cache_starts_total", {"result": "missed"}),
                ("plis", "atrium_media_track_plis_sent_total", {"track": pub.track_id(source)}),
                ("cache_sum", "atrium_media_first_frame_seconds_sum", {"source": "cache"}),
                ("cache_count", "atrium_media_first_frame_seconds_count", {"source": "cache"}),
                ("request_sum", "atrium_media_first_frame_seconds_sum", {"source": "request"}),
                ("request_count", "atrium_media_first_frame_seconds_count", {"source": "request"}))}

        async def join_one(i):
            started = time.monotonic()
            joined_ms = int(time.time() * 1000)
            client = await joined(server, f"viewer-{i}", room="late")
            sub = Subscriber(client, live_after_ms=joined_ms if source == "camera" else None)

            def at(st):
                return st.live_at if source == "camera" else st.first_frame_at
            try:
                ok = await wait_for(lambda: (st := sub.by_track(pub.track_id(source))) is not None
                                    and at(st) is not None, args.timeout)
                if not ok:
                    return None, None
                st = sub.by_track(pub.track_id(source))
                return at(st) - started, st.first_class
            finally:
                await sub.close()
                await client.close()

        async def burst_snapshot():
            """The server's side of a burst: its first-frame histogram (cache starts), and the
            picture cached for the track (what each viewer's decoder has to go through)."""
            buckets = {b: await atrium_metric(server, "atrium_media_first_frame_seconds_bucket", source="cache",
                                              le=b) for b in FIRST_FRAME_BOUNDS}
            cached = await atrium_metric(server, "atrium_media_track_key_frame_cache_bytes",
                                         track=pub.track_id(source))
            return {"buckets": buckets, "cached": cached}

        c0 = await counters()
        figures = await joins(args, join_one, pub.worker, burst=args.burst, server_snapshot=burst_snapshot)
        await asyncio.sleep(1.5)        # the metrics snapshot is refreshed once a second
        c1 = await counters()
        delta = {k: c1[k] - c0[k] for k in c0}
        figures.update(name=name, served=delta["served"], missed=delta["missed"], server_plis=delta["plis"],
                       server_first_frame={
                           src: (delta[f"{src}_sum"] / delta[f"{src}_count"] if delta[f"{src}_count"] else None,
                                 int(delta[f"{src}_count"])) for src in ("cache", "request")})
        return figures
    finally:
        for x in reversed(opened):
            try:
                await asyncio.wait_for(x.close(), 10)
            except Exception:
                pass
        server.stop()


async def run_janus(args, workdir, name, _flags):
    janus = JanusProcess(workdir).start()
    session = None
    worker = None
    try:
        session = JanusSession(janus.port)
        await session.create()
        admin = await session.attach()
        room = 4321
        await session.create_room(admin, room)

        worker = await _Worker.spawn(max_seconds=args.warmup + args.joins * (args.interval + args.timeout) + 120)
        offer = await worker.call("offer", sources=[args.source], **publisher_options(args.source))
        pub = await session.attach()
        await session.message(pub, {"request": "join", "ptype": "publisher", "room": room, "display": "sharer"})
        joined, _ = await session.event(pub)
        feed = joined["id"]
        await session.message(pub, {"request": "publish",
                                    "descriptions": [{"mid": offer["mids"][args.source], "description": args.source}]},
                              jsep={"type": "offer", "sdp": offer["sdp"], "trickle": False})
        _, answer = await session.event(pub)
        loopback_candidates_only(answer["sdp"], "Janus's publisher answer")
        await worker.call("answer", sdp=answer["sdp"])
        await session.event(pub, "webrtcup")
        await asyncio.sleep(args.warmup)

        async def join_one(i):
            started = time.monotonic()
            h = await session.attach()
            pc = peer_connection()
            seen, drains = {}, []
            live_after = int(time.time() * 1000) if args.source == "camera" else None
            pc.on("track", lambda track: drains.append(asyncio.ensure_future(first_frame(track, seen, live_after))))
            try:
                await session.message(h, {"request": "join", "ptype": "subscriber", "room": room,
                                          "streams": [{"feed": feed}]})
                _, jsep = await session.event(h)
                loopback_candidates_only(jsep["sdp"], "Janus's subscriber offer")
                await pc.setRemoteDescription(RTCSessionDescription(sdp=jsep["sdp"], type="offer"))
                await pc.setLocalDescription(await pc.createAnswer())
                await session.message(h, {"request": "start"},
                                      jsep={"type": "answer", "sdp": pc.localDescription.sdp, "trickle": False})
                key = "live" if args.source == "camera" else "at"
                if not await wait_for(lambda: key in seen, args.timeout):
                    return None, None
                return seen[key] - started, seen["class"]
            finally:
                await pc.close()
                for d in drains:
                    d.cancel()
                try:
                    await session.post(f"/janus/{session.session}/{h}", {"janus": "detach"})
                except Exception:
                    pass

        figures = await joins(args, join_one, worker)
        figures.update(name=name, served=None, missed=None, server_plis=None, server_first_frame=None)
        return figures
    finally:
        if worker is not None:
            await worker.close()
        if session is not None:
            await session.destroy()
        janus.stop()


FIRST_FRAME_BOUNDS = ["0.05", "0.1", "0.2", "0.3", "0.5", "1.0", "2.0", "5.0", "10.0", "+Inf"]


def server_burst_p95(r):
    """The burst's p95 on the server's side (from a viewer's answer to its first forwarded packet), as
    the histogram bucket it falls in ("<= 50 ms"), and the cached picture's size; None without one."""
    snaps = r.get("burst_server")
    if not snaps:
        return None
    before, after = snaps
    counts = {b: after["buckets"][b] - before["buckets"][b] for b in FIRST_FRAME_BOUNDS}
    total = counts["+Inf"]
    if not total:
        return None
    bucket = next(b for b in FIRST_FRAME_BOUNDS if counts[b] >= 0.95 * total)
    bound = "over 10 s" if bucket == "+Inf" else f"<= {float(bucket) * 1000:.0f} ms"
    return f"{bound} (n {total:g}; {after['cached'] / 1000:.0f} kB cached)"


def report(args, results, wall):
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print()
    print(f"machine: {os.cpu_count()} cores ({model}), Linux {platform.release()}, Python "
          f"{platform.python_version()}, load average before the run {args.loadavg}")
    print(f"versions: {atrium_version()} ({os.environ['ATRIUM_BIN']}); {janus_version()} (VideoRoom, HTTP API); "
          f"aiortc {aiortc.__version__}")
    spec = VIDEO[args.source]
    camera = args.source == "camera"
    what = (f"a live camera {spec['width']}x{spec['height']} 30 fps with fresh noise in every frame and the capture "
            f"clock in the picture, VP8" if camera else
            f"a static screen {spec['width']}x{spec['height']} {spec['fps']} fps, VP8 (VBR)")
    print(f"scenario: 1 aiortc publisher, {what}, answering key-frame requests, ignoring REMB; after "
          f"{args.warmup:g} s, {args.joins} viewers joining one at a time {args.interval:g} s apart, each an aiortc "
          f"peer that decodes and leaves after its {'first live picture (captured after its join)' if camera else 'first frame'}; "
          f"all on 127.0.0.1")
    print()
    table = Table(results, min_column=18)
    row = table.row

    def stat(r, f):
        return f(r["times"]) if r["times"] else None
    row("joins that decoded a frame", [f"{len(r['times'])}/{len(r['times']) + r['failures']}" for r in results])
    first = "first live picture" if camera else "first frame"
    target = 300 if camera else 150
    row(f"{first}, p50 (ms)", [stat(r, lambda t: 1000 * percentile(t, 50)) for r in results], "{:.0f}")
    row(f"{first}, p95 (ms; target {target})", [stat(r, lambda t: 1000 * percentile(t, 95)) for r in results],
        "{:.0f}")
    row(f"burst of {args.burst} at once, p95 (ms; target {target})",
        [1000 * percentile(r["burst_times"], 95) if r.get("burst_times") else None for r in results], "{:.0f}")
    row("burst, server's part p95", [server_burst_p95(r) for r in results])
    row(f"{first}, min (ms)", [stat(r, lambda t: 1000 * min(t)) for r in results], "{:.0f}")
    row(f"{first}, max (ms)", [stat(r, lambda t: 1000 * max(t)) for r in results], "{:.0f}")
    row("first frames not showing the share", [r["wrong"] for r in results])
    row("sharer got key-frame requests", [r["requests"] for r in results])
    row("sharer sent key frames (joins / all)", [f"{r['key_frames']}/{r['sharer_key_frames']}" for r in results])
    row("server: cache starts served / missed",
        [None if r["served"] is None else f"{r['served']:g}/{r['missed']:g}" for r in results])
    row("server: PLIs sent for the track", [r["server_plis"] for r in results], "{:g}")
    row("server: first frame, cache (ms, n)",
        [None if not r["server_first_frame"] or r["server_first_frame"]["cache"][0] is None else
         "{:.0f}, {}".format(1000 * r["server_first_frame"]["cache"][0], r["server_first_frame"]["cache"][1])
         for r in results])
    row("server: first frame, request (ms, n)",
        [None if not r["server_first_frame"] or r["server_first_frame"]["request"][0] is None else
         "{:.0f}, {}".format(1000 * r["server_first_frame"]["request"][0], r["server_first_frame"]["request"][1])
         for r in results])
    table.print()
    print("(the server's first-frame figures are its own mean, from a viewer's answer to its first forwarded "
          "key frame; the rows above are the viewers', from the join to the first decoded frame. The burst's "
          "viewers are aiortc peers in this one Python process, each decoding the whole cached picture, key frame "
          "and every delta since: when the server's part is far under the viewers' p95, the client was the limit)")
    print(f"\nwall time: {wall:.1f} s")


async def main_async(args):
    workdir = tempfile.mkdtemp(prefix="atrium-late-join-")
    results = []
    args.loadavg = " ".join(open("/proc/loadavg").read().split()[:3])
    try:
        for name, server, flags in CASES:
            if server in args.skip:
                continue
            print(f"running {name} ...", flush=True)
            fn = run_atrium if server == "atrium" else run_janus
            results.append(await asyncio.wait_for(fn(args, workdir, name, flags),
                                                  args.warmup + args.joins * (args.interval + args.timeout) + 60))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--joins", type=int, default=20)
    ap.add_argument("--burst", type=int, default=10, help="viewers joining at once after the others (Atrium only)")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds from one join's start to the next's")
    ap.add_argument("--warmup", type=float, default=3, help="seconds between the share's start and the first join")
    ap.add_argument("--source", choices=["screen_share", "camera"], default=SOURCE,
                    help="the static screen, or a live camera (the first live picture is timed)")
    ap.add_argument("--timeout", type=float, default=10, help="seconds a viewer waits for its first frame")
    ap.add_argument("--skip", action="append", default=[], choices=["atrium", "janus"],
                    help="leave one server out")
    args = ap.parse_args()
    mf.run_comparison(args, main_async, report)


if __name__ == "__main__":
    main()
