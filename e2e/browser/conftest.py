"""Fixtures for the meeting page tests: an `atrium serve` per test (serving clients/ with --web-dir) and
headless Chromium sessions with fake camera, microphone and screen capture.

The browsers must not reach any real network: run this directory inside a network namespace that has
only the loopback interface, as `make test` does:

    unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser'

Outside such a namespace the suite refuses to run and says why (see `loopback_only_problem`). Screenshots, browser
console logs and server logs go to e2e/browser/artifacts/<test>/ (or $ATRIUM_BROWSER_ARTIFACTS).
"""
import base64
import fcntl
import importlib.util
import json
import math
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import wave

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WEB_DIR = os.path.join(ROOT, "clients")
ARTIFACTS = os.environ.get("ATRIUM_BROWSER_ARTIFACTS", os.path.join(HERE, "artifacts"))
CHROMIUM = os.environ.get("ATRIUM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("ATRIUM_CHROMEDRIVER", "/usr/bin/chromedriver")

# The integration suite's server harness (e2e/integration/conftest.py), loaded under its own name so
# that it does not clash with this conftest.
_spec = importlib.util.spec_from_file_location(
    "atrium_integration_harness", os.path.join(ROOT, "e2e", "integration", "conftest.py")
)
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
Server = harness.Server
ATRIUM_BIN = harness.ATRIUM_BIN

# Headless Chromium for the tests: fake capture without prompts (getUserMedia and
# getDisplayMedia), loopback ICE, no mDNS hiding of local addresses; plus sound without a gesture.
CHROME_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
    "--allow-loopback-in-peer-connection",
    "--disable-features=WebRtcHideLocalIpsWithMdns",
    "--autoplay-policy=no-user-gesture-required",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-sync",
    "--disable-component-update",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]

_saved = []  # every artifact written, listed at the end of the run


def loopback_only_problem():
    """Why this process is not in a loopback-only network namespace, or None when it is.

    The interfaces come from the kernel for this process's own namespace (if_nameindex, SIOCGIFFLAGS):
    /sys/class/net would still list the parent namespace's interfaces under a plain `unshare -n`,
    which does not remount sysfs."""
    try:
        interfaces = sorted(name for _, name in socket.if_nameindex())
    except OSError as e:
        return f"cannot list network interfaces: {e}"
    others = [i for i in interfaces if i != "lo"]
    if others:
        return (
            "the browser tests run only in a loopback-only network namespace, and this one also has "
            f"{', '.join(others)}; run: unshare -n -- sh -c 'ip link set lo up && python3 -m pytest e2e/browser'"
        )
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            request = struct.pack("16sH", b"lo", 0)
            flags = struct.unpack("16sH", fcntl.ioctl(s.fileno(), 0x8913, request)[:18])[1]  # SIOCGIFFLAGS
    except OSError:
        flags = 0
    if not flags & 1:  # IFF_UP
        return "the loopback interface is down; run `ip link set lo up` in the namespace first"
    return None


def missing_tools():
    """What the browser tests need and do not find, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    for path in (CHROMIUM, CHROMEDRIVER, ATRIUM_BIN):
        if not os.access(path, os.X_OK):
            return f"{path} is missing"
    return None


def pytest_collection_modifyitems(config, items):
    """Outside a loopback-only namespace, or without the browser and its driver, the suite does not run
    at all and says why: a failure, never a silent skip."""
    if not any(str(item.fspath).startswith(HERE) for item in items):
        return
    reason = loopback_only_problem() or missing_tools()
    if reason:
        raise pytest.UsageError(f"the browser tests cannot run: {reason}")


def pytest_terminal_summary(terminalreporter):
    if _saved:
        terminalreporter.write_sep("-", "browser test artifacts")
        for path in _saved:
            terminalreporter.write_line(path)


@pytest.fixture
def artifacts(request):
    """The test's artifact directory, emptied first; `save(name, text)` writes a file into it."""
    d = os.path.join(ARTIFACTS, request.node.name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d, exist_ok=True)
    return d


def start_server(tmp, *extra):
    """`atrium serve` on ephemeral TCP and UDP ports, serving this repository's clients/.
    ATRIUM_TEST_LOG_LEVEL (e.g. debug) sets its `--log-level` (the server's own ATRIUM_* variables are
    not passed on); its log is kept in the test's artifacts."""
    level = os.environ.get("ATRIUM_TEST_LOG_LEVEL")
    if level:
        extra += ("--log-level", level)
    return Server(
        os.path.join(tmp, "data"), "--store", "memory", "--udp-port", "0", "--web-dir", WEB_DIR, *extra
    ).start(timeout=15)


@pytest.fixture
def server_dir():
    d = tempfile.mkdtemp(prefix="atrium-browser-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def dev_server(server_dir, artifacts):
    """A development-mode server (so /dev/token exists) for one test."""
    s = start_server(server_dir, "--dev")
    yield s
    s.stop()
    _keep_server_logs(s, artifacts)


def _keep_server_logs(s, artifacts):
    path = os.path.join(artifacts, "server.log")
    with open(path, "w") as f:
        f.write(s.stderr_text)


class Browser:
    """One headless Chromium session (selenium) with helpers for the meeting page."""

    def __init__(self, name, artifacts, width=1280, height=800, audio_file=None, video_file=None, flags=()):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        self.name = name
        self.artifacts = artifacts
        o = Options()
        o.binary_location = CHROMIUM
        extra_flags = flags
        flags = CHROME_FLAGS + [f"--window-size={max(width, 800)},{height + 200}"]
        if audio_file:
            flags.append(f"--use-file-for-fake-audio-capture={audio_file}")
        if video_file:
            # The camera (getUserMedia) only: getDisplayMedia keeps Chromium's fake screen, the green
            # test pattern (checked with Chromium 156; see camera_y4m).
            flags.append(f"--use-file-for-fake-video-capture={video_file}")
        flags += list(extra_flags)
        for flag in flags:
            o.add_argument(flag)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver_log = os.path.join(artifacts, f"{name}-chromedriver.log")
        self.driver = webdriver.Chrome(options=o, service=Service(CHROMEDRIVER, log_output=self.driver_log))
        self.driver.set_page_load_timeout(20)
        self.driver.set_script_timeout(20)
        self.console = []
        self.set_size(width, height)

    # -- page access

    def open(self, url):
        self.driver.get(url)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def js_async(self, body, *args):
        """Runs `body` (JavaScript with `await`, returning a JSON-able value) and returns its result."""
        script = (
            "const done = arguments[arguments.length - 1];"
            f"(async () => {{ {body} }})().then((v) => done({{ok: v}}), (e) => done({{err: String(e && e.stack || e)}}));"
        )
        r = self.driver.execute_async_script(script, *args)
        if "err" in r:
            raise AssertionError(f"{self.name}: script failed: {r['err']}")
        return r.get("ok")

    def wait(self, script, timeout=15, what=None, interval=0.2):
        """Polls `script` (a JavaScript expression body, e.g. "return ...") until it returns a truthy value."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                last = self.js(script)
            except Exception as e:  # a page navigating or a script error: retry until the deadline
                last = f"error: {e}"
            else:
                if last:
                    return last
            time.sleep(interval)
        self.screenshot(f"timeout-{int(time.time())}")
        raise AssertionError(f"{self.name}: timed out after {timeout}s waiting for {what or script} (last: {last!r})")

    def q(self, testid, extra=""):
        """A CSS selector for a data-testid."""
        return f'[data-testid="{testid}"]{extra}'

    def real_click(self, testid, extra=""):
        """A mouse click at the element's centre, whatever its state (disabled buttons included): what a
        person's click would hit there, whether or not the element is on top."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By

        e = self.driver.find_element(By.CSS_SELECTOR, self.q(testid, extra))
        ActionChains(self.driver).move_to_element(e).click().perform()

    def top_element_is(self, testid, extra=""):
        """Whether the element's centre is its own (nothing, a notice say, lies over it)."""
        sel = self.q(testid, extra)
        return self.js(
            f"const e = document.querySelector({json.dumps(sel)}); if (!e) return false;"
            "const r = e.getBoundingClientRect(); const t = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
            "return !!t && (t === e || e.contains(t));")

    def click(self, testid, extra="", timeout=10):
        """Clicks the first visible, enabled element with that data-testid (like a person would)."""
        from selenium.webdriver.common.by import By

        sel = self.q(testid, extra)
        self.wait(
            f"const e = document.querySelector({json.dumps(sel)}); return !!e && !e.disabled && e.offsetParent !== null;",
            timeout,
            f"{sel} to be clickable",
        )
        from selenium.common.exceptions import StaleElementReferenceException

        # A list the page rebuilt between finding and clicking: find it again (a person would see the
        # new button and click that).
        for attempt in range(5):
            try:
                self.driver.find_element(By.CSS_SELECTOR, sel).click()
                return
            except StaleElementReferenceException:
                if attempt == 4:
                    raise
                time.sleep(0.2)

    def visible(self, testid, extra=""):
        sel = self.q(testid, extra)
        return self.js(f"const e = document.querySelector({json.dumps(sel)}); return !!e && e.offsetParent !== null;")

    def notices(self):
        return self.js(
            """return [...document.querySelectorAll('[data-testid="notice"]')].map((n) => ({
                 kind: n.dataset.kind, reason: n.dataset.reason || null, code: n.dataset.code || null,
                 text: n.querySelector('.text').textContent}));"""
        )

    def save_png(self, label, data_url):
        """Writes a canvas's PNG (a data URL from the page) as an artifact."""
        path = os.path.join(self.artifacts, f"{label}-{self.name}.png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(data_url.split(",", 1)[1]))
        _saved.append(path)
        return path

    def screenshot(self, label):
        path = os.path.join(self.artifacts, f"{label}-{self.name}.png")
        try:
            self.driver.save_screenshot(path)
            _saved.append(path)
        except Exception:
            pass
        return path

    def set_size(self, width, height):
        """Sets the page's viewport (CSS pixels); below 600 px wide it is a phone's (mobile emulation)."""
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )

    def collect_console(self):
        try:
            self.console += self.driver.get_log("browser")
        except Exception:
            pass
        return self.console

    def quit(self):
        self.collect_console()
        path = os.path.join(self.artifacts, f"{self.name}-console.log")
        with open(path, "w") as f:
            for entry in self.console:
                f.write(f"{entry.get('level')} {entry.get('message')}\n")
        try:
            self.driver.quit()
        except Exception:
            pass


@pytest.fixture(scope="session")
def tone_wav():
    """A steady 440 Hz tone at about -10 dBov, the fake microphone's input: Chromium's own fake
    microphone beeps briefly once a second, which averages far below the server's speaking threshold."""
    d = tempfile.mkdtemp(prefix="atrium-browser-audio-")
    path = os.path.join(d, "tone.wav")
    rate = 48000
    samples = bytearray()
    for i in range(rate * 2):  # 2 s (Chromium loops the file)
        samples += struct.pack("<h", int(0.3 * 32767 * math.sin(2 * math.pi * 440 * i / rate)))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(bytes(samples))
    yield path
    shutil.rmtree(d, ignore_errors=True)


# The camera pattern of `camera_y4m`: the left half saturated red, the right half white (RGB). Chromium's
# own fake camera and fake screen are both a green test pattern, so a received picture with this pattern
# came from the file camera, and a green one did not.
CAMERA_LEFT_RGB = (255, 0, 0)
CAMERA_RIGHT_RGB = (255, 255, 255)


def write_camera_y4m(path, width=640, height=360, fps=30, seconds=2):
    """A YUV4MPEG2 file (planar YUV 4:2:0, full-range BT.601 "C420jpeg") of the camera pattern, which
    Chromium loops as the fake camera with --use-file-for-fake-video-capture."""

    def yuv(rgb):
        r, g, b = rgb
        y = 0.299 * r + 0.587 * g + 0.114 * b
        clamp = lambda v: max(0, min(255, round(v)))  # noqa: E731
        return clamp(y), clamp(128 + (b - y) / 1.772), clamp(128 + (r - y) / 1.402)

    (ly, lu, lv), (ry, ru, rv) = yuv(CAMERA_LEFT_RGB), yuv(CAMERA_RIGHT_RGB)
    half, chroma_half = width // 2, width // 4
    y_plane = (bytes([ly]) * half + bytes([ry]) * (width - half)) * height
    u_plane = (bytes([lu]) * chroma_half + bytes([ru]) * (width // 2 - chroma_half)) * (height // 2)
    v_plane = (bytes([lv]) * chroma_half + bytes([rv]) * (width // 2 - chroma_half)) * (height // 2)
    frame = b"FRAME\n" + y_plane + u_plane + v_plane
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{width} H{height} F{fps}:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(fps * seconds):
            f.write(frame)


class CameraFile:
    """A fake camera's file and what its picture shows."""

    def __init__(self, path, width, height):
        self.path, self.width, self.height = path, width, height
        self.left_rgb, self.right_rgb = CAMERA_LEFT_RGB, CAMERA_RIGHT_RGB


@pytest.fixture(scope="session")
def camera_y4m():
    """The camera pattern as a .y4m file in a temporary directory (640x360, 2 s at 30 fps, about 20 MB):
    a CameraFile, for `browsers(..., camera=camera_y4m)`."""
    d = tempfile.mkdtemp(prefix="atrium-browser-video-")
    path = os.path.join(d, "camera.y4m")
    write_camera_y4m(path, 640, 360)
    yield CameraFile(path, 640, 360)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def browsers(artifacts, tone_wav):
    """`make(name, width=, height=, camera=)` opens a browser (`camera`: a CameraFile for its fake camera,
    else Chromium's green test pattern); every one is closed after the test."""
    opened = []

    def make(name, width=1280, height=800, camera=None, flags=()):
        b = Browser(name, artifacts, width, height, audio_file=tone_wav, video_file=camera and camera.path,
                    flags=flags)
        opened.append(b)
        return b

    yield make
    for b in opened:
        b.quit()


@pytest.fixture
def mint_token():
    """`mint(key, secret, room, identity, name, role)`: a participant token from `atrium token create`."""

    def mint(key, secret, room, identity, name, role):
        out = subprocess.run(
            [ATRIUM_BIN, "token", "create", "--key", key, "--secret", secret, "--room", room,
             "--identity", identity, "--name", name, "--role", role, "--ttl", "600"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
        return out.strip().split()[-1]

    return mint


@pytest.fixture
def keyed_server(server_dir, artifacts):
    """A server without --dev (no /dev/token), with a known API key, creating rooms on join."""
    key, secret = "browserkey", "c2VjcmV0LWZvci10aGUtYnJvd3Nlci10ZXN0cy0wMTIzNDU2Nzg"
    s = start_server(server_dir, "--keys", f"{key}:{secret}", "--auto-create-rooms", "any")
    s.key, s.secret = key, secret
    yield s
    s.stop()
    _keep_server_logs(s, artifacts)


@pytest.fixture
def figures(request):
    """`record(name, value, unit, target)`: a measured figure of the scenario (a gap, a loss, a time to
    recover), printed and, when ATRIUM_FIGURES names a file, appended to it as a JSON line for
    `make bench` (bench/browser_figures.py), which prints each figure's distribution over several runs
    beside its target. Figures are never asserted in the tests: a loaded machine moves them."""
    path = os.environ.get("ATRIUM_FIGURES")

    def record(name, value, unit="", target=""):
        print(f"figure {name}: {value if value is not None else 'none'} {unit} (target {target or '-'})")
        if path:
            with open(path, "a") as f:
                f.write(json.dumps({"test": request.node.name, "name": name, "value": value, "unit": unit,
                                    "target": target}) + "\n")

    return record
