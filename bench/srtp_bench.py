"""SRTP cost per packet for both backends (`make bench`): runs bench/SRTPBench (release build) twice.

First plain, for CPU nanoseconds per protect and unprotect (the thread's own clock: figures do not grow
with the load of other processes, though a busy machine still slows them through shared caches), per
profile (AEAD_AES_128_GCM, AES_CM_128_HMAC_SHA1_80), backend (Atrium's OpenSSL one, Debian's libsrtp2)
and packet size (100 and 1200 bytes). Then with bench/malloc_count.c preloaded, for heap allocations
per packet in the last timed round of each loop. Figures, not pass/fail.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    binary = os.environ.get("SRTP_BENCH_BIN", os.path.join(ROOT, ".build", "release", "SRTPBench"))
    rounds = sys.argv[1] if len(sys.argv) > 1 else "6"
    print(subprocess.run([binary, rounds], check=True, capture_output=True, text=True).stdout, end="")
    work = tempfile.mkdtemp(prefix="atrium-srtp-bench-")
    shim = os.path.join(work, "malloc_count.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(ROOT, "bench", "malloc_count.c"),
                    "-ldl"], check=True)
    run = subprocess.run([binary, "1"], capture_output=True, text=True, env=dict(os.environ, LD_PRELOAD=shim),
                         check=True)
    subprocess.run(["rm", "-rf", work])
    # The preload answers each SIGUSR2 with "MALLOCS <n>" after the bench's "MARK <label>" line.
    events = re.findall(r"MARK ([^\n]+)\n(?:[^\n]*\n)*?MALLOCS (\d+)", run.stderr)
    start = {}
    for label, count in events:
        kind, _, name = label.partition(" ")
        if kind.endswith("-end"):
            base = kind[:-4]
            begun = start.pop((base, name), None)
            if begun is not None:
                # Each loop moves 8192 packets.
                print(f"allocations per {base}  {name}: {(int(count) - begun) / 8192:.3f}")
        else:
            start[(kind, name)] = int(count)


if __name__ == "__main__":
    main()
