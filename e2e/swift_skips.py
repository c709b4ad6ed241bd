"""Fails (exit 1) when the Swift Testing log given as argument shows a skipped test or suite that is not
listed in e2e/allowed-skips.txt (`swift: <Suite>/<test()>` or `swift: <test()>`), and when the log does
not end with a passing run: the gate's unit stage runs `swift test` through this."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

allowed = set()
for line in open(os.path.join(HERE, "allowed-skips.txt")):
    line = line.split("#", 1)[0].strip()
    if line.startswith("swift:"):
        name = line[len("swift:"):].strip()
        allowed.add(name.split("/")[-1])

text = open(sys.argv[1], errors="replace").read()
skipped = re.findall(r"^\S+ (?:Test|Suite) (.+?) skipped", text, re.M)
bad = [s for s in skipped if s not in allowed]
for s in bad:
    print(f"skipped, not in e2e/allowed-skips.txt: {s}")
sys.exit(1 if bad else 0)
