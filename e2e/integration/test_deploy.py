"""deploy/: the Dockerfile's package lists, the systemd unit (systemd-analyze verify), the example config."""
import os
import subprocess

from conftest import ATRIUM_BIN, ROOT


def test_deploy_check():
    r = subprocess.run(["bash", os.path.join(ROOT, "deploy", "check.sh")], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "ATRIUM_BIN": ATRIUM_BIN}, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
