# Atrium: `make run` and `make test` install what is missing, build, and run.
# Debian packages come from deploy/packages-build.txt (the same list the Dockerfile's builder uses);
# Python test tools at the exact versions of e2e/requirements.lock (from e2e/requirements.txt).

SHELL := /bin/bash
SWIFT ?= swift
SWIFT_FLAGS := -Xswiftc -warnings-as-errors
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
BUILD_PACKAGES := $(shell sed -e 's/\#.*//' deploy/packages-build.txt)
# What the benchmarks add: the peer server they compare with (deploy/packages-bench.txt).
BENCH_PACKAGES := $(shell sed -e 's/\#.*//' deploy/packages-bench.txt)
# Tools the tests call: curl (README's quick start), systemd-analyze (deploy check), python with pip,
# headless Chromium and its driver (browser tests), unshare and ip (their loopback-only namespace), nft
# (a lossy viewer's firewall in the network tests), coturn (the TURN server the firewall tests start),
# ffmpeg and ffprobe (the recording tests), redis-server (with redis-cli: the cluster tests' Redis,
# e2e/integration/test_cluster.py, and the Redis unit tests), stunnel4 (a node's TLS to Redis,
# e2e/integration/test_cluster_redis_tls.py).
# GStreamer's webrtcbin (plugins-bad, with libnice, VP8 from plugins-good; its Python bindings from
# gir1.2-gst-plugins-bad-1.0, which nothing else pulls in) through Debian's Python is the third-party
# WHIP publisher of e2e/integration/gst_whip.py; nginx with the RTMP module receives the live streams
# of e2e/integration/test_streaming.py.
TEST_PACKAGES := curl systemd python3 python3-pip chromium chromium-driver iproute2 util-linux nftables coturn ffmpeg \
  nginx-light libnginx-mod-rtmp \
  redis-server stunnel4 python3-gst-1.0 gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad \
  gir1.2-gst-plugins-bad-1.0 gstreamer1.0-nice firefox-esr
PYTHON ?= python3
BIN := .build/debug/atrium
ATRIUM_FLAGS ?= --dev

.PHONY: all deps test-deps bench-deps pion-sfu build run test preflight unit integration netns browser tsan fuzz fuzz-build fuzz-smoke bench lint format clean

all: build

## Installs the missing Debian build packages (quiet when everything is present).
deps:
	@command -v $(SWIFT) >/dev/null || { echo "Swift 6 is needed (see README.md)"; exit 1; }
	@missing=""; for p in $(BUILD_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; fi

## Adds what the tests need: Debian tools and the Python packages pinned in e2e/requirements.lock.
test-deps: deps
	@missing=""; for p in $(TEST_PACKAGES); do \
	  command -v $$p >/dev/null 2>&1 && continue; \
	  [ $$p = systemd ] && command -v systemd-analyze >/dev/null && continue; \
	  [ $$p = python3-pip ] && $(PYTHON) -m pip --version >/dev/null 2>&1 && continue; \
	  [ $$p = chromium-driver ] && command -v chromedriver >/dev/null && continue; \
	  [ $$p = iproute2 ] && command -v ip >/dev/null && continue; \
	  [ $$p = util-linux ] && command -v unshare >/dev/null && continue; \
	  [ $$p = nftables ] && command -v nft >/dev/null && continue; \
	  [ $$p = coturn ] && command -v turnserver >/dev/null && continue; \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	  case " $$missing " in *" nginx-light "*) [ -n "$$(command -v systemctl)" ] && \
	    $(SUDO) systemctl disable --now nginx >/dev/null 2>&1 || true;; esac; fi
	@# nginx (installed here for the RTMP tests, which start their own on a free port): its Debian
	@# service, started on port 80 by the package, is stopped above when this installed it.
	@# Debian starts coturn's own service where systemd runs: the tests start the coturn they need.
	@if [ -n "$$(command -v systemctl)" ] && systemctl is-enabled coturn >/dev/null 2>&1; then \
	  $(SUDO) systemctl disable --now coturn >/dev/null 2>&1 || true; fi
	@# The same for redis-server: the cluster tests start their own Redis on free ports.
	@if [ -n "$$(command -v systemctl)" ] && systemctl is-enabled redis-server >/dev/null 2>&1; then \
	  $(SUDO) systemctl disable --now redis-server >/dev/null 2>&1 || true; fi
	@$(PYTHON) e2e/check_requirements.py e2e/requirements.lock || { echo "installing Python packages"; \
	  $(PYTHON) -m pip install -q -r e2e/requirements.lock 2>/dev/null \
	  || $(PYTHON) -m pip install -q --break-system-packages -r e2e/requirements.lock; }

build: deps
	$(SWIFT) build $(SWIFT_FLAGS) --product atrium
	$(SWIFT) build $(SWIFT_FLAGS) --product atrium-viewers

## Builds and starts a single-node server on embedded defaults (127.0.0.1:8800, SQLite in ./atrium-data).
run: build
	$(BIN) serve $(ATRIUM_FLAGS)

## Every test, each case once, in stages whose durations are printed (e2e/stages.sh): a preflight that
## names whatever is missing, lint, Swift unit tests, the fuzz corpora and a fixed-seed fuzz run, the
## signaling and media suites against a ThreadSanitizer build, the rest of the integration suite against
## the real server, then the lossy-link suite and the browser suite, each in a loopback-only network
## namespace. ATRIUM_GATE=1: a skipped test fails unless e2e/allowed-skips.txt lists it with its reason.
test: test-deps
	@ATRIUM_GATE=1 bash e2e/stages.sh preflight build lint unit fuzz-smoke tsan integration netns browser

preflight:
	@bash e2e/preflight.sh "$(FUZZ_RT)"

unit:
	$(SWIFT) build $(SWIFT_FLAGS) --build-tests
	@mkdir -p .build; set -o pipefail; $(SWIFT) test $(SWIFT_FLAGS) --skip-build 2>&1 | tee .build/unit.log
	@$(PYTHON) e2e/swift_skips.py .build/unit.log

## What no other stage runs (see the stage markers in e2e/gate.py). The integration stages run test files
## on PYTEST_WORKERS pytest-xdist workers (a file's tests stay on one worker; most of their time is
## spent waiting on the server and the network, so more workers than cores pay).
PYTEST_WORKERS ?= 6
XDIST = -n $(PYTEST_WORKERS) --dist loadfile
integration:
	ATRIUM_BIN=$(BIN) $(PYTHON) -m pytest -q $(XDIST) e2e/integration -m "not tsan and not tsan_cluster and not netns"

## Tests that shape one client's link (nftables rules), the TURN tests with the coturn they start, and the
## WHIP tests (GStreamer's libnice needs a non-loopback address: they add a veth inside): in a private
## network namespace with only loopback, one file at a time. The WHIP meeting page test runs here too,
## alone, not in `browser`: its veth must not be there while other Chromiums pick their ICE paths; and so
## does the native sharer's page test, whose VP8 encoder would load the browser suite's machine.
netns: test-deps build
	$(SUDO) unshare --net -- sh -c 'ip link set lo up && ATRIUM_GATE=$(ATRIUM_GATE) ATRIUM_BIN=$(BIN) $(PYTHON) -m pytest -q e2e/integration -m netns \
	  && ATRIUM_GATE=$(ATRIUM_GATE) ATRIUM_BIN=$(BIN) $(PYTHON) -m pytest -q e2e/browser/test_whip_page.py \
	     e2e/browser/test_native_share_page.py'

## The meeting page and the JS client in headless Chromium. Browsers and the server run in a network
## namespace that has only loopback (unshare needs root: sudo when not root). Two files at a time:
## each test runs two or three Chromiums encoding video. Scenarios marked `bench` (e2e/gate.py) only
## give `make bench` its figures.
BROWSER_XDIST = -n 2 --dist loadfile -m "not bench" --ignore=e2e/browser/test_whip_page.py \
  --ignore=e2e/browser/test_native_share_page.py
browser: test-deps build
	$(SUDO) unshare --net -- sh -c 'ip link set lo up && ATRIUM_GATE=$(ATRIUM_GATE) ATRIUM_BIN=$(BIN) $(PYTHON) -m pytest -q $(BROWSER_XDIST) e2e/browser'

## The server built with ThreadSanitizer (its own build directory), driven by the tests e2e/gate.py marks
## `tsan` (WebSocket, backpressure, edge protocols, signaling, media with 2 media workers per server: the
## signaling thread, the workers and the pipe between them) and `tsan_cluster` (the cluster's signaling
## relay: the Redis subscriber thread handing inbox messages to the service thread). A reported race
## makes the server exit 66 and the test fail. These cases run here only, not again in `integration`.
tsan: test-deps
	$(SWIFT) build --sanitize=thread --build-path .build-tsan --product atrium
	ATRIUM_BIN=.build-tsan/debug/atrium TSAN_OPTIONS="halt_on_error=1 exitcode=66" ATRIUM_TEST_MEDIA_WORKERS=2 \
	  $(PYTHON) -m pytest -q -n 3 --dist loadfile e2e/integration -m "tsan or tsan_cluster"

## libFuzzer targets for the parsers fed by the network (Fuzz/), corpora kept in Fuzz/Corpus/<target>.
FUZZ_TARGETS := STUN RTP RTCP SDP JSON DTLS
FUZZ_SECONDS ?= 60
SWIFT_USR := $(shell dirname $$(dirname $$(readlink -f $$(command -v $(SWIFT)))))
FUZZ_RT := $(firstword $(wildcard $(SWIFT_USR)/lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a))
FUZZ_FLAGS := -c release --build-path .build-fuzz -Xswiftc -sanitize=address \
  -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp -Xswiftc -DFUZZING \
  -Xlinker $(FUZZ_RT) -Xlinker -lstdc++

fuzz-build: deps
	@for t in $(FUZZ_TARGETS); do ATRIUM_EXCLUSIVITY_CHECKED=1 $(SWIFT) build $(FUZZ_FLAGS) --product Fuzz$$t || exit 1; done

## Long campaigns: `make fuzz FUZZ_SECONDS=600`; new interesting inputs are added to Fuzz/Corpus.
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  .build-fuzz/release/Fuzz$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 Fuzz/Corpus/$$t 2>&1 \
	  | grep -E "^(Done|==|SUMMARY)|ERROR"; test $${PIPESTATUS[0]} -eq 0 || exit 1; done

## In `make test`, the same run every time: each target replays every kept input under AddressSanitizer,
## then makes FUZZ_SMOKE_RUNS mutations from a fixed seed (new inputs go to a scratch directory, not
## into the repository). Random, timed campaigns are `make fuzz`.
FUZZ_SMOKE_RUNS ?= 20000
fuzz-smoke: fuzz-build
	@scratch=$$(mktemp -d); for t in $(FUZZ_TARGETS); do mkdir -p $$scratch/$$t; \
	  .build-fuzz/release/Fuzz$$t -seed=1 -runs=$(FUZZ_SMOKE_RUNS) -max_len=4096 $$scratch/$$t Fuzz/Corpus/$$t 2>&1 \
	  | grep -E "^Done|ERROR|SUMMARY|INITED" | sed "s/^/Fuzz$$t: /"; \
	  test $${PIPESTATUS[0]} -eq 0 || { rm -rf $$scratch; exit 1; }; done; rm -rf $$scratch

## Adds what the benchmarks need on top of the tests': the Debian packages in deploy/packages-bench.txt.
bench-deps: test-deps
	@missing=""; for p in $(BENCH_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	  $(SUDO) systemctl disable --now janus >/dev/null 2>&1 || true; fi

## Benchmarks (figures, not pass/fail): a release build, then, each side by side with Janus, signaling
## load (1,000 participants joining 100 rooms; bench/signal_load.py), media forwarding (one
## publisher, four subscribers; bench/media_forward.py) and simulcast forwarding (one publisher with a
## three-layer camera, six viewers of mixed quality; bench/simulcast_forward.py) and late joins (viewers
## joining a static screen share, then a live camera (its first live picture), Atrium with and without its
## key-frame cache and Janus; bench/late_join.py),
## WHIP (a POST to the first frame an aiortc viewer decodes, GStreamer publishing; bench/whip_first_frame.py, in
## a private namespace), data beside media (messages a second the hub carries in a 200-participant room with their latency and the
## server's CPU, the pointer's latency on a lossy data channel and over signaling; bench/data_fanout.py),
## after SRTP per packet for both backends (bench/srtp_bench.py: CPU ns per protect/unprotect and allocations),
## the viewer sweep (1 to 160 native viewers of one publisher, Atrium with all cores and with one media worker
## against Janus, then a saturation run; bench/viewers_sweep.py, `--quick` for N = 1 and 5; then 1,000 hidden
## viewers, Atrium alone: the anchors' CPU per packet would need several times this machine's cores),
## the browser scenarios' timing figures over BENCH_RUNS runs against their targets (shaped link, layer
## switches, a stalled ICE-TCP viewer, late joins; bench/browser_figures.py, in a private namespace), and
## bandwidth estimation (CPU per forwarded packet with 20 viewers with and without it, settle time after a
## link drop; Tests/AtriumMediaTests/BandwidthBench.swift, in memory, on the release build like the others: Janus has
## no per-viewer estimation to compare, which the bench says).
BENCH_RUNS ?= 5
## The pion SFU the viewer sweep measures beside Janus (bench/pion_sfu), from Debian's Go packages.
pion-sfu: bench-deps .build/pion_sfu

## GOPATH mode resolves pion's /v3 import paths ("minimal module compatibility") only for a package inside a
## GOPATH entry that has a go.mod: the source is copied into one under .build.
.build/pion_sfu: bench/pion_sfu/main.go bench/pion_sfu/go.mod
	@rm -rf .build/gopath && mkdir -p .build/gopath/src/pion_sfu .build/go-cache
	cp bench/pion_sfu/main.go bench/pion_sfu/go.mod .build/gopath/src/pion_sfu/
	cd .build/gopath/src/pion_sfu && GO111MODULE=off GOPATH=$(CURDIR)/.build/gopath:/usr/share/gocode \
	  GOCACHE=$(CURDIR)/.build/go-cache go build -o $(CURDIR)/$@ .

bench: bench-deps .build/pion_sfu
	$(SWIFT) build -c release --product atrium
	$(SWIFT) build -c release --product SRTPBench
	$(SWIFT) build -c release --product atrium-viewers
	$(PYTHON) bench/srtp_bench.py
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/signal_load.py --participants 1000 --rooms 100
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/media_forward.py
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/simulcast_forward.py
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/late_join.py
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/late_join.py --source camera --burst 0
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/alloc_per_packet.py
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/cluster_relay.py
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/cluster_fanout.py --runs 3
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/data_fanout.py --runs 3
	$(SUDO) ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/whip_first_frame.py --runs $(BENCH_RUNS)
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/stream_transcode.py --runs $(BENCH_RUNS)
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/native_publisher.py --runs $(BENCH_RUNS)
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/viewers_sweep.py --runs 3
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/viewers_sweep.py --viewers 1000 --hidden-viewers \
	  --saturation-viewers 0 --no-one-worker --skip janus --skip pion --start-timeout 300 --runs 3
	ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/meetings.py --runs 3
	$(SUDO) ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/browser_figures.py --runs $(BENCH_RUNS)
	$(SUDO) ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/browser_figures.py --runs $(BENCH_RUNS) \
	  --tests e2e/browser/test_whip_page.py
	$(SUDO) ATRIUM_BIN=.build/release/atrium $(PYTHON) bench/browser_figures.py --runs $(BENCH_RUNS) \
	  --tests e2e/browser/test_e2ee_cost.py
	$(SWIFT) build -c release -Xswiftc -enable-testing --build-tests
	ATRIUM_BENCH=1 $(SWIFT) test -c release -Xswiftc -enable-testing --skip-build --filter BandwidthBench

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Fuzz Package.swift

format:
	$(SWIFT) format format --in-place --recursive Sources Tests Fuzz Package.swift

clean:
	rm -rf .build .build-tsan .build-fuzz
