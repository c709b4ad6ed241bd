"""Writes e2e/requirements.lock: the exact installed versions of e2e/requirements.txt and everything it
pulls in (its dependency closure, extras and markers evaluated here). Run after changing
requirements.txt and installing it; `make test` installs the lock, so every run tests with the same
Python packages."""
import os
import re
from importlib import metadata

from packaging.requirements import Requirement

HERE = os.path.dirname(os.path.abspath(__file__))


def closure(roots):
    seen = {}
    stack = list(roots)
    while stack:
        r = stack.pop()
        if r.marker and not r.marker.evaluate({"extra": ""}):
            continue
        name = re.sub(r"[-_.]+", "-", r.name).lower()
        if name in seen:
            continue
        d = metadata.distribution(r.name)
        seen[name] = d.version
        for q in map(Requirement, d.requires or []):
            if q.marker and not any(q.marker.evaluate({"extra": e}) for e in (r.extras or {""})):
                continue
            stack.append(q)
    return seen


def main():
    lines = (l.split("#", 1)[0].strip() for l in open(os.path.join(HERE, "requirements.txt")))
    pins = closure(Requirement(l) for l in lines if l)
    with open(os.path.join(HERE, "requirements.lock"), "w") as f:
        f.write("# Exact versions of e2e/requirements.txt and everything it pulls in, as `make test` installs them\n"
                "# (regenerate with e2e/lock_requirements.py after changing requirements.txt).\n")
        for name in sorted(pins):
            f.write(f"{name}=={pins[name]}\n")


if __name__ == "__main__":
    main()
