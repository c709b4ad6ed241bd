#!/usr/bin/env bash
# Before anything is built: names everything `make test` needs and does not find, in one list, and
# prints the versions of the clients the tests drive. Arguments: the fuzzer runtime's path (empty when
# the toolchain has none).
fuzz_rt="$1"
missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 ($2)"); }
need swift "the toolchain"
need chromium "browser tests"
need chromedriver "browser tests"
need firefox-esr "the Firefox browser test"
need unshare "private network namespaces"
need ip "the namespaces' loopback"
need tc "shaped links in the browser tests"
need nft "a lossy viewer's firewall"
need turnserver "coturn, the TURN tests"
need redis-server "the cluster and Redis tests"
need redis-cli "the cluster tests"
need ffmpeg "recording tests"
need ffprobe "recording tests"
/usr/bin/python3 -c 'import gi; gi.require_version("GstWebRTC", "1.0")' 2>/dev/null \
  || missing+=("GStreamer's webrtcbin bindings for /usr/bin/python3 (gir1.2-gst-plugins-bad-1.0: the WHIP tests)")
[ -n "$fuzz_rt" ] && [ -f "$fuzz_rt" ] || missing+=("libclang_rt.fuzzer_no_main (the fuzz smoke: the toolchain's fuzzer runtime)")
if command -v unshare >/dev/null 2>&1; then
  unshare --net -- sh -c 'ip link set lo up' 2>/dev/null \
    || missing+=("permission for unshare --net and ip link (run as root: the netns and browser stages make namespaces)")
fi
python3 e2e/check_requirements.py e2e/requirements.lock || missing+=("the Python packages of e2e/requirements.lock")
if [ ${#missing[@]} -gt 0 ]; then
  echo "make test cannot run here; missing:"
  printf '  - %s\n' "${missing[@]}"
  exit 1
fi
echo "clients: $(chromium --version 2>/dev/null | head -1); $(firefox-esr --version 2>/dev/null | head -1); aiortc $(python3 -c 'import aiortc; print(aiortc.__version__)')," \
  "selenium $(python3 -c 'import selenium; print(selenium.__version__)'), $(redis-server --version | cut -d' ' -f1-3)," \
  "coturn $(turnserver --version 2>/dev/null | head -1 | cut -c1-40), $(ffmpeg -version | head -1 | cut -d' ' -f1-3)"
echo "swift: $(swift --version 2>&1 | head -1)"
