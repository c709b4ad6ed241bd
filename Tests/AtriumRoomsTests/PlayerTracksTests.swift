import AtriumModel
import Testing

@testable import AtriumMediaControl
@testable import AtriumRooms

/// What a player (WHEP) carries, decided from the room alone: the active share with its audio (else
/// the sharer's microphone), or one participant's tracks; only tracks with media.
@Suite struct PlayerTracksTests {
    typealias Follow = MediaCoordinator.Follow

    @Test func theShareWithItsAudioElseTheSharersMicrophone() throws {
        var h = RoomHarness {
            $0.shareMode = .multi
            $0.maxConcurrentShares = 2
        }
        let a = try h.join("a", .participant)
        let b = try h.join("b", .participant)
        let all: (TrackID) -> Bool = { _ in true }
        #expect(MediaCoordinator.playerTracks(.share, h.state, hasMedia: all) == ([], []))
        let (aMic, _, _) = try h.publish(a, .microphone)
        let (aScreen, _, _) = try h.publish(a, .screenShare)
        #expect(MediaCoordinator.playerTracks(.share, h.state, hasMedia: all) == ([aScreen], [aMic]))
        let (aShareAudio, _, _) = try h.publish(a, .screenShareAudio)
        #expect(MediaCoordinator.playerTracks(.share, h.state, hasMedia: all) == ([aScreen], [aShareAudio, aMic]))
        // A newer share is the one followed; without media yet, the older one still is.
        let (bScreen, bShare, _) = try h.publish(b, .screenShare)
        #expect(MediaCoordinator.playerTracks(.share, h.state) { $0 != bScreen } == ([aScreen], [aShareAudio, aMic]))
        #expect(MediaCoordinator.playerTracks(.share, h.state, hasMedia: all) == ([bScreen], []))
        // A paused share gives way to a running one.
        _ = try h.state.pause(try #require(bShare), by: b)
        #expect(MediaCoordinator.playerTracks(.share, h.state, hasMedia: all).video == [aScreen])
    }

    @Test func oneParticipantsCameraAndMicrophoneFirst() throws {
        var h = RoomHarness()
        let a = try h.join("a", .participant)
        let all: (TrackID) -> Bool = { _ in true }
        #expect(MediaCoordinator.playerTracks(.participant("a"), h.state, hasMedia: all) == ([], []))
        #expect(MediaCoordinator.playerTracks(.participant("nobody"), h.state, hasMedia: all) == ([], []))
        let (screen, _, _) = try h.publish(a, .screenShare)
        let (camera, _, _) = try h.publish(a, .camera)
        let (mic, _, _) = try h.publish(a, .microphone)
        #expect(MediaCoordinator.playerTracks(.participant("a"), h.state, hasMedia: all) == ([camera, screen], [mic]))
        #expect(MediaCoordinator.playerTracks(.participant("a"), h.state) { $0 != camera } == ([screen], [mic]))
    }
}
