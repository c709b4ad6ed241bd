"""Exits 0 when every requirement in the given file is installed (so `make` stays quiet), 1 otherwise."""
import sys
from importlib import metadata

try:
    from packaging.requirements import Requirement
except ImportError:  # packaging is missing: let pip sort it out
    sys.exit(1)

for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    req = Requirement(line)
    try:
        version = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        sys.exit(1)
    if req.specifier and not req.specifier.contains(version, prereleases=True):
        sys.exit(1)
sys.exit(0)
