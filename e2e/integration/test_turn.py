"""TURN through coturn (docs/firewalls.md): the server hands every participant time-limited
TURN REST API credentials at join and resume, signed with coturn's static-auth-secret; coturn (Debian's
`turnserver`, started by the test on 127.0.0.1) accepts them and refuses expired or forged ones; an aiortc
publisher with no host candidate at all publishes through coturn over UDP and a viewer decodes it.

coturn runs only in a private loopback-only namespace (`make netns`, part of `make test`):

    unshare --net -- sh -c 'ip link set lo up && python3 -m pytest e2e/integration/test_turn.py'
"""
import asyncio
import os
import socket
import time

import aioice.stun
import aioice.turn
import pytest

from conftest import Server, stopped_cleanly
from coturn import TURNSERVER, Coturn, rest_credential
from signal_client import connect
from test_media import assert_carries, run_in_room

_OTHERS = [name for _, name in socket.if_nameindex() if name != "lo"]
pytestmark = [
    pytest.mark.skipif(bool(_OTHERS), reason=f"needs a loopback-only network namespace, not {_OTHERS}"),
    pytest.mark.skipif(not os.access(TURNSERVER, os.X_OK), reason="coturn (turnserver) is not installed"),
]

SECRET = "coturn-shared-secret-for-the-integration-tests-0123"
TTL = 600


@pytest.fixture(scope="module")
def coturn():
    c = Coturn(SECRET).start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def turn_server(tmp_path_factory, coturn):
    s = Server(os.path.join(tmp_path_factory.mktemp("turn"), "data"), "--dev", "--store", "memory",
               "--auto-create-rooms", "any", "--udp-port", "0", "--media-bind", "127.0.0.1",
               *coturn.server_flags(ttl=TTL)).start()
    yield s
    stopped_cleanly(s)


class _Sink(asyncio.DatagramProtocol):
    pass


async def allocate(coturn, username, password, transport="udp"):
    """A TURN Allocate with these long-term credentials: True when coturn grants it, False on 401.

    A 437 (allocation mismatch) means the kernel gave this socket the port of one of this test's
    earlier allocations, which coturn still holds for that 5-tuple: the Allocate is made again
    from a new socket (a fresh run saw it once)."""
    for _ in range(5):
        try:
            t, _ = await aioice.turn.create_turn_endpoint(
                _Sink, server_addr=("127.0.0.1", coturn.port), username=username, password=password,
                transport=transport)
        except aioice.stun.TransactionFailed as e:
            code = e.response.attributes["ERROR-CODE"][0]
            if code == 437:
                continue
            assert code == 401, e.response
            return False
        t.close()
        return True
    raise AssertionError("coturn answered 437 (allocation mismatch) to five sockets in a row")


def check_credentials(servers, identity, coturn, before, after):
    assert len(servers) == 1 and servers[0]["urls"] == coturn.urls(), servers
    username, credential = servers[0]["username"], servers[0]["credential"]
    expiry, _, who = username.partition(":")
    assert who == identity, username
    # Valid for the TTL from when it was made, never longer.
    assert before + TTL <= int(expiry) <= after + TTL, (username, before, after)
    assert credential == rest_credential(SECRET, username)
    return username, credential


def test_join_and_resume_hand_out_credentials_coturn_accepts_and_it_refuses_expired_or_forged_ones(
        turn_server, coturn):
    async def scenario(s):
        before = int(time.time())
        alice = await s.join("alice")
        after = int(time.time())
        username, credential = check_credentials(alice.snapshot["iceServers"], "alice", coturn, before, after)
        assert await allocate(coturn, username, credential, "udp")
        assert await allocate(coturn, username, credential, "tcp")

        # A resume gets fresh ones, again within the TTL.
        back = await connect(turn_server, "alice", room=s.room)
        before = int(time.time())
        data = await back.resume(alice.resume_token)
        after = int(time.time())
        check_credentials(data["iceServers"], "alice", coturn, before, after)
        await back.close()

        # Expired: signed with the right secret, but its time has passed.
        expired = f"{int(time.time()) - 60}:alice"
        assert not await allocate(coturn, expired, rest_credential(SECRET, expired))
        # Forged: signed with another secret; or a valid credential with its expiry pushed further out.
        assert not await allocate(coturn, username, rest_credential("not-the-secret", username))
        stretched = f"{int(username.split(':')[0]) + 86400}:alice"
        assert not await allocate(coturn, stretched, credential)
    run_in_room(turn_server, "turn-credentials", scenario)


def test_an_aiortc_publisher_reaching_the_server_only_through_coturn_over_udp_is_decoded(turn_server, coturn):
    sources = ["camera", "microphone"]

    async def scenario(s):
        alice = await s.join("alice")
        servers = alice.snapshot["iceServers"]
        udp_only = [{**servers[0], "urls": [u for u in servers[0]["urls"] if u.endswith("transport=udp")]}]
        pub = await s.publish(alice, sources, ice_servers=udp_only, relay_only=True)
        assert "typ host" not in pub.offer_sdp and "typ relay" in pub.offer_sdp, pub.offer_sdp
        bob = await s.join("bob")
        sub = s.subscribe(bob)
        ids = {src: pub.track_id(src) for src in sources}
        await sub.wait_frames(list(ids.values()), 30, timeout=30)
        assert_carries(sub, ids, alice.participant_id)
        pair = await pub.worker.call("ice_pair")
        assert pair and pair["local"] == "relay" and pair["remote"] == "host", pair
    run_in_room(turn_server, "turn-udp", scenario)
