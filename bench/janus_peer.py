"""The peer server the benchmarks run side by side with Atrium: `janus` (Debian's package, 1.1.2)
started from a configuration directory of our own in a temporary directory, only on 127.0.0.1.

Only the VideoRoom plugin is loaded, and the transports a benchmark asks for: the HTTP API
(janus.transport.http, bench/media_forward.py) and/or the WebSocket API (janus.transport.websockets,
bench/signal_load.py), each on a free 127.0.0.1 port. ICE runs on `lo` only, without STUN (see
LOOPBACK_SHIM_C). The package's own service is left off: `make bench-deps` disables it, and nothing
here reads /etc/janus.

    janus = JanusProcess(workdir, http=True, websockets=False).start()
    ... janus.port (HTTP), janus.ws_port (WebSockets), janus.proc.pid ...
    janus.stop()
"""
import os
import re
import shutil
import socket
import subprocess
import time

from side_by_side import stop_process

JANUS_LIB = f"/usr/lib/{os.uname().machine}-linux-gnu/janus"      # Debian's multiarch directory
TRANSPORTS = {"http": "libjanus_http.so", "websockets": "libjanus_websockets.so"}

# Janus 1.1.2 cannot gather a 127.0.0.1 candidate: janus_ice_setup_local (src/ice.c) skips every
# interface flagged IFF_LOOPBACK before it looks at ice_enforce_list, and when it has added no address
# libnice gathers on every other interface. So Janus runs with this getifaddrs() in LD_PRELOAD: lo
# without its loopback flag, every other interface down. Janus then gathers on 127.0.0.1 only (and
# with `interface = "127.0.0.1"` puts that address in its SDP); nothing else in it changes.
LOOPBACK_SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stddef.h>

int getifaddrs(struct ifaddrs **ifap) {
    int (*real)(struct ifaddrs **) = (int (*)(struct ifaddrs **))dlsym(RTLD_NEXT, "getifaddrs");
    int r = real(ifap);
    if (r != 0)
        return r;
    for (struct ifaddrs *ifa = *ifap; ifa != NULL; ifa = ifa->ifa_next) {
        if (ifa->ifa_flags & IFF_LOOPBACK)
            ifa->ifa_flags &= ~IFF_LOOPBACK;
        else
            ifa->ifa_flags &= ~(IFF_UP | IFF_RUNNING);
    }
    return 0;
}
"""


class JanusError(Exception):
    pass


def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_loopback_shim(directory):
    """Compiles LOOPBACK_SHIM_C with the first C compiler found (cc, gcc, clang, or the clang of
    the Swift toolchain); returns the shared object's path."""
    source = os.path.join(directory, "loopback_only.c")
    target = os.path.join(directory, "loopback_only.so")
    with open(source, "w") as f:
        f.write(LOOPBACK_SHIM_C)
    compilers = [shutil.which(c) for c in ("cc", "gcc", "clang")]
    swift = shutil.which("swift")
    if swift:
        compilers.append(os.path.join(os.path.dirname(os.path.realpath(swift)), "clang"))
    for cc in filter(None, compilers):
        if os.path.exists(cc) and subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", target, source, "-ldl"],
                                                 capture_output=True).returncode == 0:
            return target
    raise RuntimeError("no C compiler could build the Janus loopback shim (install gcc)")


def janus_lib_dir():
    for d in (JANUS_LIB, "/usr/lib/janus", "/usr/local/lib/janus", "/opt/janus/lib/janus"):
        if os.path.exists(os.path.join(d, "plugins", "libjanus_videoroom.so")):
            return d
    raise RuntimeError("Janus's VideoRoom plugin not found (apt-get install janus)")


def missing(transports=("http",)):
    """Why Janus cannot run with these transports here (None when it can): not installed, no
    VideoRoom plugin, or a transport's library absent."""
    if shutil.which("janus") is None:
        return "janus is not installed (Debian package `janus`; `make bench` installs deploy/packages-bench.txt)"
    try:
        lib = janus_lib_dir()
    except RuntimeError as e:
        return str(e)
    for t in transports:
        if not os.path.exists(os.path.join(lib, "transports", TRANSPORTS[t])):
            return f"Janus's {t} transport ({TRANSPORTS[t]}) is not installed in {lib}/transports"
    return None


def write_janus_config(root, http_port=None, ws_port=None, session_timeout=0):
    """A configuration directory of our own: only the VideoRoom plugin and the transports given a
    port (the folders Janus loads hold links to those), each listening on 127.0.0.1 only, ICE on
    `lo` only, no STUN. `session_timeout` 0 keeps sessions without keepalives; Janus's default is 60 s."""
    lib = janus_lib_dir()
    conf, plugins, transports, empty = (os.path.join(root, d) for d in ("conf", "plugins", "transports", "empty"))
    for d in (conf, plugins, transports, empty):
        os.makedirs(d, exist_ok=True)
    os.symlink(os.path.join(lib, "plugins", "libjanus_videoroom.so"), os.path.join(plugins, "libjanus_videoroom.so"))
    for name, port in (("http", http_port), ("websockets", ws_port)):
        if port is not None:
            os.symlink(os.path.join(lib, "transports", TRANSPORTS[name]), os.path.join(transports, TRANSPORTS[name]))
    with open(os.path.join(conf, "janus.jcfg"), "w") as f:
        f.write(f"""general: {{
	configs_folder = "{conf}"
	plugins_folder = "{plugins}"
	transports_folder = "{transports}"
	events_folder = "{empty}"
	loggers_folder = "{empty}"
	debug_level = 4
	interface = "127.0.0.1"
	session_timeout = {session_timeout}
}}
certificates: {{
}}
media: {{
	ipv6 = false
}}
nat: {{
	nice_debug = false
	ice_enforce_list = "lo"
	ignore_mdns = true
}}
plugins: {{
}}
transports: {{
}}
loggers: {{
}}
events: {{
}}
""")
    if http_port is not None:
        with open(os.path.join(conf, "janus.transport.http.jcfg"), "w") as f:
            f.write(f"""general: {{
	json = "plain"
	base_path = "/janus"
	http = true
	port = {http_port}
	ip = "127.0.0.1"
	https = false
}}
admin: {{
	admin_http = false
	admin_https = false
}}
""")
    if ws_port is not None:
        with open(os.path.join(conf, "janus.transport.websockets.jcfg"), "w") as f:
            f.write(f"""general: {{
	json = "plain"
	ws = true
	ws_port = {ws_port}
	ws_ip = "127.0.0.1"
	wss = false
}}
admin: {{
	admin_ws = false
	admin_wss = false
}}
""")
    with open(os.path.join(conf, "janus.plugin.videoroom.jcfg"), "w") as f:
        f.write("general: {\n}\n")
    return os.path.join(conf, "janus.jcfg")


class JanusProcess:
    """`janus` started on the configuration of write_janus_config, its output in a log file.
    `port` is the HTTP API's (None without it), `ws_port` the WebSocket API's (None without it)."""

    def __init__(self, workdir, http=True, websockets=False, session_timeout=0):
        self.root = os.path.join(workdir, "janus")
        self.port = free_tcp_port() if http else None
        self.ws_port = free_tcp_port() if websockets else None
        self.config = write_janus_config(self.root, self.port, self.ws_port, session_timeout)
        self.log_path = os.path.join(self.root, "janus.log")
        self.proc = None

    def start(self, timeout=15):
        self._log = open(self.log_path, "w+")
        env = dict(os.environ, LD_PRELOAD=build_loopback_shim(self.root))
        self.proc = subprocess.Popen(dies_with_parent() + ["janus", "-C", self.config, "-F",
                                                           os.path.dirname(self.config), "-o"],
                                     stdout=self._log, stderr=subprocess.STDOUT, env=env)
        ports = [p for p in (self.port, self.ws_port) if p is not None]
        deadline = time.time() + timeout
        try:
            while time.time() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"janus exited with {self.proc.returncode}: {self.log()[-3000:]}")
                if "VideoRoom plugin initialized" in self.log() and all(map(_accepts, ports)):
                    return self
                time.sleep(0.05)
            raise RuntimeError(f"janus did not start in {timeout}s: {self.log()[-3000:]}")
        except BaseException:
            self.stop()
            raise

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        stop_process(self.proc)
        if self.proc:
            self._log.close()


def dies_with_parent():
    """A command prefix that has the server terminated when the benchmark's process ends, however
    it ends (killed too): util-linux's setpriv sets PR_SET_PDEATHSIG and execs the command, which
    keeps its pid. Empty without setpriv (stop() then is the only cleanup)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM"] if setpriv else []


def _accepts(port):
    try:
        socket.create_connection(("127.0.0.1", port), 0.5).close()
        return True
    except OSError:
        return False


def janus_version():
    # Janus 1.1.2 has no --version option: every invocation prints the version banner first.
    out = subprocess.run(["janus", "--help"], capture_output=True, text=True)
    m = re.search(r"Janus version: (\d+) \(([^)]+)\)", out.stdout + out.stderr)
    return f"Janus {m.group(2)} ({m.group(1)})" if m else "Janus (version unknown)"
