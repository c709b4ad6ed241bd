"""Active speaker detection: the server reads the audio level header extension (RFC 6464) of
microphone tracks and pushes `active_speakers` to the room when the set of speakers changes."""
from test_media import run_in_room


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
