"""What the side-by-side benchmarks (bench/viewers_sweep.py, bench/meetings.py) share about the
processes they run: a process's CPU time, RSS, run-queue wait, pinning and nice values, a measured
window's machine figures, and the pion SFU (bench/pion_sfu, built by `make pion-sfu`) started and
spoken to over its HTTP API."""
import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def use_integration_harness():
    """For a benchmark script, before it imports the integration harness (e2e/integration): the
    harness on the import path, and ATRIUM_BIN defaulting to the release build if built, else the
    debug one."""
    sys.path.insert(0, os.path.join(ROOT, "e2e", "integration"))
    if not os.environ.get("ATRIUM_BIN"):
        builds = [os.path.join(ROOT, f".build/{c}/atrium") for c in ("release", "debug")]
        os.environ["ATRIUM_BIN"] = next((p for p in builds if os.path.exists(p)), builds[1])


def run_niced(nice, coroutine):
    """Runs a benchmark's main coroutine with this session's scheduler autogroup at `nice` (none when
    0; restored after), then prints the wall time."""
    t0 = time.monotonic()
    old_nice = autogroup_nice(nice) if nice else None
    try:
        asyncio.run(coroutine)
    finally:
        if old_nice is not None:
            autogroup_nice(old_nice)
    print(f"\nwall time: {time.monotonic() - t0:.0f} s")


async def machine_window(server_pid, pids, seconds):
    """What the machine says over `seconds`: the server's CPU seconds (`cpu`, `window_cpu`), each process's UDP
    sockets before and after (`udp0`, `udp1`: `media_forward.udp_sockets`), the share of the window
    each of `pids` ({name: pid}) waited for a CPU (`waited`), and the time it took (`elapsed`)."""
    from media_forward import udp_sockets
    udp0 = udp_sockets(pids.values())
    wait0 = {k: runqueue_wait(pid) for k, pid in pids.items()}
    t0 = time.monotonic()
    cpu0, threads0 = cpu_seconds(server_pid), threads_cpu_seconds(server_pid)
    await asyncio.sleep(seconds)
    cpu1, threads1 = cpu_seconds(server_pid), threads_cpu_seconds(server_pid)
    elapsed = time.monotonic() - t0
    udp1 = udp_sockets(pids.values())
    waited = {k: (runqueue_wait(pid) - wait0[k]) / elapsed for k, pid in pids.items()}
    return {"cpu": window_cpu((cpu0, cpu1), (threads0, threads1)), "elapsed": elapsed, "udp0": udp0, "udp1": udp1, "waited": waited}


def cpu_seconds(pid):
    """User + system CPU seconds of a process, all its threads, exited ones included, in clock ticks
    (10 ms)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def threads_schedstat(pid, field):
    """Field `field` of /proc/PID/task/TID/schedstat summed over a process's live threads, in seconds
    (0: time on a CPU, 1: time runnable but waiting for one); a thread that exited is no longer
    counted. None when no thread could be read."""
    total, read = 0, 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[field])
            read += 1
        except (OSError, IndexError, ValueError):
            pass    # it exited between the listing and the read
    return total / 1e9 if read else None


def threads_cpu_seconds(pid):
    """The CPU seconds of a process's live threads to the nanosecond (the time /proc/PID/stat counts
    in ticks); None when no thread could be read."""
    return threads_schedstat(pid, 0)


def window_cpu(ticks, threads):
    """A window's CPU seconds from its (start, end) readings of `cpu_seconds` and
    `threads_cpu_seconds`: the threads' nanoseconds, unless a thread exited in the window (the ticks
    then say more than they can by quantization: two ticks and 5 %; a thread that both started and
    exited within the window is missed below that, and none of the servers measured starts or ends
    threads in a steady window). The ticks alone were off by up to a sixth where a server used 60 ms
    in a window (one viewer)."""
    by_ticks = ticks[1] - ticks[0]
    if threads[0] is None or threads[1] is None:
        return by_ticks
    by_threads = threads[1] - threads[0]
    return by_ticks if by_ticks > by_threads * 1.05 + 2 / CLK_TCK else by_threads


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def runqueue_wait(pid):
    """Seconds the process's threads spent runnable but waiting for a CPU (the second field of
    /proc/PID/task/TID/schedstat, summed over the threads: the server's media workers, the load
    clients' one thread); 0 when no thread could be read."""
    return threads_schedstat(pid, 1) or 0.0


def usable_cores():
    return len(os.sched_getaffinity(0))


def pin(pid, cpus):
    """Restricts every thread of `pid` to `cpus` (threads it starts later inherit it): `taskset -a -p`."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass      # a thread that just ended


def autogroup_nice(nice):
    """Sets the nice value of this session's scheduler autogroup (Linux with sched_autogroup_enabled:
    nice values rank threads only within their autogroup, so this is what ranks the servers and clients,
    which run in this script's session, against other work on the machine). Returns the old value, or
    None where there are no autogroups."""
    try:
        with open("/proc/self/autogroup") as f:
            old = int(f.read().split("nice")[1])
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
        return old
    except (OSError, IndexError, ValueError):
        return None


def prioritize(pid, nice):
    """Sets the nice value of every thread of `pid` (threads it starts later inherit it)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.setpriority(os.PRIO_PROCESS, int(tid), nice)
        except OSError:
            pass


def pinning():
    """(server CPUs, client CPUs) for the pinned saturation run: the first usable CPU for the server,
    the others for the clients; None with fewer than two."""
    cpus = sorted(os.sched_getaffinity(0))
    return ({cpus[0]}, set(cpus[1:])) if len(cpus) > 1 else None


PION_SFU = os.environ.get("ATRIUM_PION_SFU", os.path.join(ROOT, ".build", "pion_sfu"))


def pion_missing():
    """Why the pion SFU cannot run, or None (`make pion-sfu` builds it from Debian's Go packages)."""
    return None if os.access(PION_SFU, os.X_OK) else f"{PION_SFU} is missing: make pion-sfu (or --skip pion)"


def pion_version():
    """The Debian version of pion/webrtc v3 the SFU was built from."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "golang-github-pion-webrtc.v3-dev"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "?"


class PionProcess:
    """The pion SFU process on a free port: `await launch()`, `await post(path, body)` (JSON both
    ways), `await stop()`."""
    name = "pion"

    def __init__(self):
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid

    async def launch(self):
        self.proc = subprocess.Popen([PION_SFU, "-port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        line = await asyncio.to_thread(self.proc.stdout.readline)
        if not line.startswith("listening port="):
            raise RuntimeError(f"pion_sfu did not start: {line!r}")
        self.port = int(line.split("=")[1])

    def _post(self, path, body):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    async def post(self, path, body):
        return await asyncio.to_thread(self._post, path, body)

    async def stop(self):
        from side_by_side import stop_process
        stop_process(self.proc)
