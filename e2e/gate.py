"""The test gate's pytest plugin (loaded by pytest.ini for every suite under e2e/).

- Stages: which integration tests run against the ThreadSanitizer build (`tsan`, `tsan_cluster`) and
  which only in a private network namespace (`netns`), as markers given here from one table, so that
  `make test` runs each case once: `integration` takes what no other stage takes; and which browser
  scenarios only `make bench` runs (`bench`).
- Parallel: the integration stages run files on several pytest-xdist workers (`--dist loadfile`: a
  file's tests share a worker, each server on ephemeral ports).
- Loud: with ATRIUM_GATE=1 (set by `make test`) a skipped test fails the run unless it is listed in
  e2e/allowed-skips.txt with its reason.
"""
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# Files whose every test also makes sense against the instrumented server (WebSocket, signaling, media
# with two workers), and the tests of those files that do not: one measures a rate the instrumented
# build is too slow to give, and a single Python client of the 400-join burst is starved of CPU by the
# instrumented server until the server rightly drops it as a stalled reader.
TSAN_FILES = {
    "test_websocket.py", "test_websocket_backpressure.py", "test_edge_protocols.py", "test_signal_bad_input.py",
    "test_signal_flows.py", "test_media.py", "test_media_workers.py", "test_data.py",
    # usrsctp's timer thread hands packets and events to the media workers through a lock.
    "test_data_channels.py",
}
TSAN_LEFT_OUT = {
    "test_a_busy_720p_screen_share_reaches_1_5_mbits_thanks_to_remb",
    "test_400_simultaneous_joins_reach_healthy_clients",
}
# The cluster's signaling relay (the Redis subscriber thread handing inbox messages to the service
# thread), through these three-node tests.
TSAN_CLUSTER = {
    "test_every_node_lists_the_three_nodes_with_their_addresses",
    "test_a_room_created_on_node_1_is_listed_by_nodes_2_and_3",
    "test_a_host_on_one_node_locks_sharing_and_the_sharer_on_a_third_sees_its_share_stop",
    "test_a_dropped_session_resumes_through_a_third_node",
}
# Tests that shape a client's link (nftables) or start coturn: only in a loopback-only namespace.
NETNS_FILES = {"test_netns_media.py", "test_turn.py", "test_whip.py"}
# Browser scenarios run only by `make bench` (bench/browser_figures.py) for their figures: what they
# show is tested in the gate another way (here: a step down on a shaped link in test_bandwidth's
# first test, and behind a short queue in memory, StepDownEngineTests).
# And what end-to-end encryption costs the browsers and the server (e2ee tested in test_e2ee_page).
BENCH_ONLY = {"test_a_step_down_behind_a_short_queue_keeps_the_picture_moving", "test_e2ee_cost"}


def pytest_configure(config):
    config.addinivalue_line("markers", "tsan: runs in the ThreadSanitizer stage (with two media workers)")
    config.addinivalue_line("markers", "tsan_cluster: a cluster test run in the ThreadSanitizer stage")
    config.addinivalue_line("markers", "netns: runs only in a loopback-only network namespace")
    config.addinivalue_line("markers", "bench: a browser scenario run only by make bench, for its figures")
    config._atrium_skipped = []


def pytest_collection_modifyitems(config, items):
    for item in items:
        file = os.path.basename(str(item.fspath))
        name = getattr(item, "originalname", item.name)
        if file in TSAN_FILES and name not in TSAN_LEFT_OUT:
            item.add_marker(pytest.mark.tsan)
        if file == "test_cluster.py" and name in TSAN_CLUSTER:
            item.add_marker(pytest.mark.tsan_cluster)
        if file in NETNS_FILES:
            item.add_marker(pytest.mark.netns)
        if name in BENCH_ONLY:
            item.add_marker(pytest.mark.bench)


def allowed_skips():
    """Node ids (or their prefixes) allowed to skip in the gate, from e2e/allowed-skips.txt."""
    out = []
    for line in open(os.path.join(HERE, "allowed-skips.txt")):
        line = line.split("#", 1)[0].strip()
        if line.startswith("pytest:"):
            out.append(line[len("pytest:"):].strip())
    return out


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report)


_skipped = []


def pytest_sessionfinish(session, exitstatus):
    # Under pytest-xdist the controller sees every worker's reports: it alone decides.
    if os.environ.get("ATRIUM_GATE") != "1" or hasattr(session.config, "workerinput"):
        return
    allowed = allowed_skips()
    bad = [r for r in _skipped if not any(r.nodeid.startswith(a) for a in allowed)]
    if not bad:
        return
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr:
        tr.write_sep("=", "skipped tests fail the gate (not in e2e/allowed-skips.txt)", red=True)
        for r in bad:
            reason = r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
            tr.write_line(f"{r.nodeid}: {reason}")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
