"""The browser scenarios' timing figures, several runs each, against their targets.

`make test` checks that the behaviour happens (a shaped viewer steps down and comes back, a switch
lands on the new layer, a stalled ICE-TCP viewer is dropped, a late viewer decodes the cached
picture); the tests record how long it took and what it cost (the `figures` fixture in
e2e/browser/conftest.py). This runs those tests `--runs` times in a loopback-only network namespace
(the same as `make browser`) and prints, per figure, its median, p90 and max over the runs beside
its target, with the machine's load: a figure off its target on a loaded machine, or with the
publishing browser CPU-limited (`publisher_cpu_limited`), says the client or the machine was the
limit, not the server. Nothing here fails: failed runs are counted and their figures kept.

    python3 bench/browser_figures.py [--runs 5] [--tests e2e/browser/test_bandwidth.py ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from side_by_side import percentile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = [
    "e2e/browser/test_bandwidth.py",                 # shaped link: gaps, loss, time back; a step down
                                                     # behind a short queue (bench only)
    "e2e/browser/test_simulcast.py",                 # layer switches
    "e2e/browser/test_firewalls.py::test_a_viewer_without_udp_receives_camera_and_share_over_ice_tcp",
    "e2e/browser/test_key_frame_cache.py",           # late join of a static screen
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tests", nargs="*", default=SCENARIOS)
    args = ap.parse_args()
    binary = os.environ.get("ATRIUM_BIN", os.path.join(ROOT, ".build/release/atrium"))
    out = tempfile.NamedTemporaryFile(prefix="atrium-figures-", suffix=".jsonl", delete=False).name
    failed, loads = 0, []
    for run in range(args.runs):
        load0 = os.getloadavg()[0]
        t0 = time.time()
        cmd = (f"ip link set lo up && ATRIUM_FIGURES={out} ATRIUM_BIN={binary} {sys.executable} -m pytest -q "
               f"-p no:cacheprovider {' '.join(args.tests)}")
        r = subprocess.run(["unshare", "--net", "--", "sh", "-c", cmd], cwd=ROOT, capture_output=True, text=True)
        loads.append((load0, os.getloadavg()[0]))
        summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()[-200:]
        print(f"run {run + 1}/{args.runs}: {summary} ({time.time() - t0:.0f} s, load {load0:.1f} -> "
              f"{os.getloadavg()[0]:.1f})", flush=True)
        failed += r.returncode != 0
    rows = {}
    for line in open(out):
        f = json.loads(line)
        if f["value"] is None:
            continue
        rows.setdefault((f["test"], f["name"]), {"unit": f["unit"], "target": f["target"], "values": []})
        rows[(f["test"], f["name"])]["values"].append(float(f["value"]))
    print(f"\nbrowser scenario figures over {args.runs} runs ({failed} failed); machine: {os.cpu_count()} cores, "
          f"load average at the runs' start {min(l[0] for l in loads):.1f}-{max(l[0] for l in loads):.1f}")
    print(f"{'figure':52} {'n':>3} {'median':>8} {'p90':>8} {'max':>8}  target")
    for (test, name), row in sorted(rows.items()):
        v = row["values"]
        print(f"{name[:52]:52} {len(v):>3} {statistics.median(v):>8.2f} {percentile(v, 90):>8.2f} {max(v):>8.2f}  "
              f"{row['target'] or '-'} {row['unit']}")
    os.unlink(out)


if __name__ == "__main__":
    main()
