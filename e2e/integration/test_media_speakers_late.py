"""Who speaks is part of what a participant finds when it arrives: the current `active_speakers`
comes right after the `join` (and `resume`) result, before anything else of the room. Otherwise a
late joiner sees nobody speaking until the set of speakers changes, which a steady talker never does."""
from test_media import run_in_room


def test_a_late_joiner_is_told_who_speaks_now(media_server):
    async def scenario(s):
        alice = await s.join("alice")
        bob = await s.join("bob")
        pub = await s.publish(alice, ["microphone"])
        assert pub.rejected == []
        await bob.expect("active_speakers", lambda m: m["speakers"], timeout=30)
        carol = await s.join("carol")
        # No change of speakers since bob was told (alice's tone is steady): carol is told anyway.
        ev = await carol.expect("active_speakers", timeout=30)
        assert [sp["participantId"] for sp in ev["speakers"]] == [alice.participant_id], ev

    run_in_room(media_server, "media-speakers-late", scenario)
