"""Active speaker detection: the server reads the audio level header extension (RFC 6464) of
microphone tracks and pushes `active_speakers` to the room when the set of speakers changes."""
import os

import pytest

from conftest import MEDIA_BASE_ARGS, Server, stopped_cleanly
from signal_client import run
from test_media import Session, run_in_room, snapshot_after
from test_media_bad_datagrams import media_port


def test_a_speaking_microphone_is_announced_and_its_end_too(media_server):
    async def scenario(s):
        alice = await s.join("alice")
        bob = await s.join("bob")
        pub = await s.publish(alice, ["microphone"])
        assert pub.rejected == []
        ev = await bob.expect("active_speakers", lambda m: m["speakers"], timeout=10)
        speaker = ev["speakers"][0]
        assert speaker["participantId"] == alice.participant_id
        assert 0 < speaker["level"] <= 1
        # The microphone stops: the next announcement has nobody speaking.
        await alice.request("unpublish", trackId=pub.track_id("microphone"))
        await bob.expect("active_speakers", lambda m: m["speakers"] == [], timeout=10)

    run_in_room(media_server, "media-speakers", scenario)


@pytest.fixture
def two_worker_server(tmp_path):
    """A media server with two workers, so two rooms are placed one on each."""
    s = Server(os.path.join(tmp_path, "data"), *MEDIA_BASE_ARGS, "--media-workers", "2").start()
    yield s
    stopped_cleanly(s)


def test_speakers_of_rooms_on_two_workers_do_not_clear_each_other(two_worker_server):
    """Alice speaks in one room, Carol in another, each room on its own worker: every announcement
    Bob (Alice's room) gets while both keep speaking names Alice; none clears her because the other
    worker reported only Carol's room. Each worker reports levels every 0.5 s and refreshes its
    metrics snapshot every second: once both snapshots have moved on three times, each worker has
    reported several times since Bob's first announcement."""
    s = two_worker_server

    async def scenario():
        one, two = Session(s, "speakers-one"), Session(s, "speakers-two")
        try:
            alice = await one.join("alice")
            bob = await one.join("bob")
            carol = await two.join("carol")
            pubs = [await one.publish(alice, ["microphone"]), await two.publish(carol, ["microphone"])]
            ports = {media_port(p.result["sdp"]) for p in pubs}
            assert len(ports) == 2, ports
            await bob.expect("active_speakers", lambda m: m["speakers"], timeout=30)
            bob.drain()
            await snapshot_after(s, *(p.track_id("microphone") for p in pubs), refreshes=3)
            assert "pong" in await bob.request("ping")   # what the reports caused has reached bob
            said = [m["speakers"] for m in bob.events if m.get("type") == "active_speakers"]
            assert all(any(x["participantId"] == alice.participant_id for x in sp) for sp in said), said
        finally:
            await one.close()
            await two.close()

    run(scenario(), 120)
