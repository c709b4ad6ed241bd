"""Headless Firefox (Debian's firefox-esr) driven over its own WebDriver BiDi endpoint: Debian packages
no geckodriver, and Firefox speaks BiDi itself (`--remote-debugging-port`). `FirefoxPage` has the
calls the browser tests make of a Chromium `Browser` (`open`, `js`, `js_async`, `wait`), so the
same page scripts run in both.

Prefs that matter (checked on firefox-esr 153): fake capture without a prompt
(`media.navigator.streams.fake`, `media.navigator.permission.disabled`); ICE on the loopback
interface (`media.peerconnection.ice.loopback`) and a granted camera permission, without which
Firefox gathers no candidate in a namespace that has no default route.
"""
import base64
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from websockets.sync.client import connect

from conftest import Browser

FIREFOX = os.environ.get("ATRIUM_FIREFOX", "/usr/bin/firefox-esr")

PREFS = {
    "media.navigator.streams.fake": True,
    "media.navigator.permission.disabled": True,
    "permissions.default.camera": 1,
    "permissions.default.microphone": 1,
    "media.peerconnection.ice.loopback": True,
    "media.peerconnection.ice.obfuscate_host_addresses": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.aboutwelcome.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.disabledForTesting": True,
    "app.normandy.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
}

LISTENING = re.compile(r"WebDriver BiDi listening on (ws://\S+)")


class FirefoxPage:
    """One headless Firefox with one tab, stopped by its process group's PID."""

    def __init__(self, name, artifacts, startup_timeout=60):
        self.name = name
        self.artifacts = artifacts
        self.profile = tempfile.mkdtemp(prefix="atrium-firefox-")
        with open(os.path.join(self.profile, "user.js"), "w") as f:
            for k, v in PREFS.items():
                f.write(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n")
        self.log = []
        self.ids = itertools.count(1)
        self.ws = None
        self.proc = subprocess.Popen(
            [FIREFOX, "--headless", "--remote-debugging-port=0", "--profile", self.profile, "--no-remote",
             "--new-instance"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "MOZ_CRASHREPORTER_DISABLE": "1"}, start_new_session=True)
        url = []
        found = threading.Event()

        def pump():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace")
                self.log = self.log[-200:] + [line]
                m = LISTENING.search(line)
                if m and not found.is_set():
                    url.append(m.group(1))
                    found.set()

        threading.Thread(target=pump, daemon=True).start()
        if not found.wait(startup_timeout):
            self.quit()
            raise AssertionError(f"{name}: Firefox did not listen for WebDriver BiDi: {''.join(self.log[-20:])}")
        self.connection = contextlib.ExitStack()
        self.ws = self.connection.enter_context(connect(url[0] + "/session", max_size=None, open_timeout=30))
        self.send("session.new", {"capabilities": {}})
        self.context = self.send("browsingContext.getTree", {"maxDepth": 0})["contexts"][0]["context"]

    def send(self, method, params, timeout=60):
        call = next(self.ids)
        self.ws.send(json.dumps({"id": call, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.name}: {method} timed out")
            msg = json.loads(self.ws.recv(timeout=left))
            if msg.get("id") != call:
                continue
            if msg.get("type") == "error":
                raise AssertionError(f"{self.name}: {method}: {msg.get('error')}: {msg.get('message')}")
            return msg["result"]

    def open(self, url):
        self.send("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def _evaluate(self, function_body, args, timeout=60):
        # The body runs as a function's with `arguments`; its value crosses as JSON.
        expression = (f"(async function() {{ {function_body} }}).apply(null, {json.dumps(list(args))})"
                      ".then((v) => JSON.stringify(v === undefined ? null : v))")
        r = self.send("script.evaluate", {"expression": expression, "target": {"context": self.context},
                                          "awaitPromise": True, "userActivation": True}, timeout)
        if r["type"] == "exception":
            d = r["exceptionDetails"]
            raise AssertionError(f"{self.name}: script failed: {d.get('text')}")
        return json.loads(r["result"]["value"])

    def js(self, script, *args):
        return self._evaluate(script, args)

    def js_async(self, body, *args):
        return self._evaluate(body, args)

    wait = Browser.wait  # polls `js` the same way, with a screenshot on timeout

    def screenshot(self, label):
        """The tab as a PNG in the test's artifacts (as a Chromium session saves it on a timeout)."""
        try:
            shot = self.send("browsingContext.captureScreenshot", {"context": self.context}, timeout=10)
            with open(os.path.join(self.artifacts, f"{label}-{self.name}.png"), "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        except Exception:
            pass  # never in the way of the failure it illustrates

    def quit(self):
        if self.ws is not None:
            try:
                self.connection.close()
            except Exception:
                pass
            self.ws = None
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)
