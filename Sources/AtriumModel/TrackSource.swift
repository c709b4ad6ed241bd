/// Where a published track comes from. The server decides permissions per source, not per kind:
/// a participant may be allowed a camera and refused a screen share.
public enum TrackSource: String, CaseIterable, Sendable, Hashable, Codable {
    case camera
    case microphone
    case screenShare = "screen_share"
    case screenShareAudio = "screen_share_audio"
}

/// A participant's role in a room. Hosts and cohosts moderate; viewers only subscribe.
public enum ParticipantRole: String, CaseIterable, Sendable, Hashable, Codable {
    case host
    case cohost
    case participant
    case viewer
}
