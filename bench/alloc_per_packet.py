"""Heap allocations per forwarded packet in the media server (`make bench`).

Builds bench/malloc_count.c (a malloc-counting LD_PRELOAD), starts the server with it, has one aiortc
publisher (camera, screen, microphone) send to three subscribers through it, and reads the allocation
counts and the server's forwarded-packet counter at the start and the end of a steady window. Prints
allocations per forwarded packet for the whole process and for the media worker threads (the packet
path, and the worker's control traffic: STUN consent, RTCP), and, when perf's uprobes are available
(root), swift_retain and swift_release calls per forwarded packet on the media threads (`perf probe` on
libswiftCore's entry points, `perf stat -t` on the atrium-media-* threads). MALLOC_COUNT_TRACE=N in the
environment writes every Nth media-thread allocation's backtrace to the server's stderr (kept in
--trace-file). All traffic on 127.0.0.1.
"""
import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import shutil
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "e2e", "integration"))
from media_peer import Publisher, Subscriber   # noqa: E402
from signal_client import connect              # noqa: E402


class Target:
    """What signal_client.connect needs of a server."""
    def __init__(self, port, key, secret):
        self.port, self.key, self.secret = port, key, secret


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def swift_core(binary):
    """The libswiftCore.so the server runs with (for the uprobes)."""
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    m = re.search(r"libswiftCore\.so => (\S+)", out)
    return m.group(1) if m else None


def add_probes(core):
    """swift_retain and swift_release uprobes; None when perf cannot place them."""
    if not core or not shutil.which("perf"):
        return None
    events = []
    for fn in ("swift_retain", "swift_release"):
        subprocess.run(["perf", "probe", "-q", "-x", core, "--add", fn], capture_output=True, text=True)
        events.append(f"probe_libswiftCore:{fn}")
    listed = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True).stdout
    return events if all(e in listed for e in events) else None


def media_threads(pid):
    tids = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            if open(f"/proc/{pid}/task/{tid}/comm").read().startswith("atrium-media"):
                tids.append(tid)
        except OSError:
            pass
    return tids


def count_refcounting(events, pid, seconds, record=None):
    """swift_retain and swift_release calls on the media threads over `seconds`; with `record` (a
    file), perf records them with their call stacks instead and their callers are printed."""
    tids = media_threads(pid)
    if record:
        subprocess.run(["perf", "record", "-q", "-e", ",".join(events), "--call-graph", "dwarf,8192", "-t",
                        ",".join(tids), "-o", record, "--", "sleep", str(seconds)], capture_output=True)
        return callers(record)
    r = subprocess.run(["perf", "stat", "-x", ",", "-e", ",".join(events), "-t", ",".join(tids), "--", "sleep",
                        str(seconds)], capture_output=True, text=True)
    counts = {}
    for line in r.stderr.splitlines():
        parts = line.split(",")
        if len(parts) > 2 and parts[0].strip().isdigit():
            counts[parts[2].split(":")[-1]] = int(parts[0])
    return counts.get("swift_retain"), counts.get("swift_release")


def callers(record):
    """Counts each probe's calls and prints the functions that made them (the first frame of the call
    stack that is not the runtime's), most first."""
    out = subprocess.run(["perf", "script", "-i", record, "-F", "event,ip,sym", "--no-inline"],
                         capture_output=True, text=True).stdout
    counts, by_caller, event, frames = {}, {}, None, []

    def done():
        if event is None:
            return
        counts[event] = counts.get(event, 0) + 1
        caller = next((f for f in frames[1:] if not f.startswith(("swift_", "_swift"))), "?")
        by_caller.setdefault(event, {}).setdefault(caller, 0)
        by_caller[event][caller] += 1

    for line in out.splitlines():
        if not line.strip():
            continue
        if ":" in line and not line.strip()[:1].isdigit() and not line.startswith("\t"):
            done()
            event, frames = line.strip().rstrip(":").split(":")[-1], []
        else:
            parts = line.split(None, 1)
            frames.append(parts[1].split("+")[0].strip() if len(parts) > 1 else "?")
    done()
    for e, table in by_caller.items():
        total = sum(table.values())
        print(f"{e}: {total} calls by caller")
        for name, n in sorted(table.items(), key=lambda x: -x[1])[:20]:
            print(f"  {n:7d} {100.0 * n / total:5.1f} %  {name[:150]}")
    return counts.get("swift_retain"), counts.get("swift_release")


async def measure(binary, seconds, subscribers, trace_file, record=None):
    work = tempfile.mkdtemp(prefix="atrium-alloc-")
    shim = os.path.join(work, "malloc_count.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(ROOT, "bench", "malloc_count.c"), "-ldl"],
                   check=True)
    port = free_port()
    err_path = os.path.join(work, "stderr.log")
    server = subprocess.Popen([binary, "serve", "--dev", "--store", "memory", "--port", str(port), "--udp-port", "0",
                               "--data-dir", os.path.join(work, "data"), "--auto-create-rooms", "any"],
                              stdout=subprocess.DEVNULL, stderr=open(err_path, "w"),
                              env=dict(os.environ, LD_PRELOAD=shim))
    events = add_probes(swift_core(binary))
    opened = []
    try:
        key_file = os.path.join(work, "data", "dev-key.json")
        for _ in range(100):
            if os.path.exists(key_file) and "msg=listening" in open(err_path).read():
                break
            time.sleep(0.05)
        creds = json.load(open(key_file))
        target = Target(port, creds["key"], creds["secret"])
        alice = await connect(target, "alice", room="alloc")
        await alice.join()
        opened.append(alice)
        for i in range(subscribers):
            c = await connect(target, f"sub{i}", room="alloc")
            await c.join()
            opened.append(c)
            opened.append(Subscriber(c))
        pub = await Publisher.start(alice, ["camera", "screen_share", "microphone"])
        opened.append(pub)
        await asyncio.sleep(5)     # every subscriber receiving, key frames through

        def sample():
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
            # One series per media worker (a `worker` label) when there are several: summed.
            forwarded = sum(int(v) for labels, v in re.findall(r'atrium_media_packets_total\{([^}]*)\} (\d+)', body)
                            if 'direction="out"' in labels)
            server.send_signal(signal.SIGUSR2)
            time.sleep(0.2)
            last = re.findall(r"MALLOCS (\d+) MEDIA (\d+)", open(err_path).read())[-1]
            return forwarded, int(last[0]), int(last[1])

        f0, m0, w0 = await asyncio.to_thread(sample)
        if events:
            retains, releases = await asyncio.to_thread(count_refcounting, events, server.pid, seconds, record)
        else:
            retains = releases = None
            await asyncio.sleep(seconds)
        f1, m1, w1 = await asyncio.to_thread(sample)
        if trace_file:
            shutil.copy(err_path, trace_file)
        return f1 - f0, m1 - m0, w1 - w0, retains, releases
    finally:
        for x in reversed(opened):
            try:
                await asyncio.wait_for(x.close(), 10)
            except Exception:
                pass
        server.terminate()
        server.wait(10)
        subprocess.run(["rm", "-rf", work])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--subscribers", type=int, default=3)
    ap.add_argument("--trace-file", help="keep the server's stderr (backtraces with MALLOC_COUNT_TRACE=N) here")
    ap.add_argument("--record", help="perf-record the retain/release calls into this file and print their callers")
    args = ap.parse_args()
    binary = os.environ.get("ATRIUM_BIN", os.path.join(ROOT, ".build", "release", "atrium"))
    forwarded, mallocs, media, retains, releases = asyncio.run(
        measure(binary, args.seconds, args.subscribers, args.trace_file, args.record))
    n = max(1, forwarded)
    print(f"allocations per forwarded packet ({binary}, 1 publisher, {args.subscribers} subscribers, "
          f"{args.seconds:.0f} s): {mallocs} allocations / {forwarded} packets = {mallocs / n:.3f} (whole process); "
          f"media threads {media} = {media / n:.3f}")
    if retains is not None:
        print(f"media threads per forwarded packet: swift_retain {retains / n:.2f}, swift_release {releases / n:.2f} "
              f"({retains} / {releases} calls)")
    else:
        print("swift_retain/swift_release not counted (perf uprobes unavailable)")


if __name__ == "__main__":
    main()
