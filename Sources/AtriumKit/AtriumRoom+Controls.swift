public import AtriumModel
public import AtriumProtocol

/// The share API in the seeds' terms (docs/swift-sdk.md maps each seed's calls), host controls, and
/// data messages: each is one request of the protocol, answered or refused with its documented code.
extension AtriumRoom {
    // MARK: - Your share

    /// Starts a screen share (the `screen_share` track): the room's share policy decides
    /// (`share_locked`, `share_in_progress`, `too_many_shares`, `share_request_required`, ...).
    /// Media goes through a `MediaSession`; without one the share exists in the room only.
    @discardableResult
    public func startScreenShare(name: String = "", width: Int = 0, height: Int = 0) async throws(AtriumError)
        -> ShareInfo
    {
        let r = try await request(
            .publish(TrackRequest(source: .screenShare, name: name, width: width, height: height)))
        guard case .published(_, let share?) = r else {
            throw AtriumError(code: "bad_message", message: "publishing a screen share started no share")
        }
        return share
    }

    /// Stops your share with a reason (`user_stopped` by default; `capture_ended` when the capture
    /// ended by itself: ReplayKit's broadcastFinished, PlanetKit's stop reasons).
    public func stopScreenShare(reason: ShareStopReason = .userStopped) async throws(AtriumError) {
        guard let share = myShare else { throw AtriumError(code: "share_not_found", message: "you are not sharing") }
        try await request(.stopShare(share.id, reason: reason))
    }

    /// ReplayKit's broadcastPaused / broadcastResumed.
    public func pauseScreenShare() async throws(AtriumError) {
        guard let share = myShare else { throw AtriumError(code: "share_not_found", message: "you are not sharing") }
        try await request(.pauseShare(share.id))
    }

    public func resumeScreenShare() async throws(AtriumError) {
        guard let share = myShare else { throw AtriumError(code: "share_not_found", message: "you are not sharing") }
        try await request(.resumeShare(share.id))
    }

    /// Asks the hosts for permission to share (a room with `shareRequestRequired`); the answer comes
    /// as `share_request_resolved`.
    public func requestScreenShare() async throws(AtriumError) -> ShareRequestID {
        guard case .shareRequested(let id) = try await request(.requestShare) else {
            throw AtriumError(code: "bad_message", message: "request_share answered without a request id")
        }
        return id
    }

    // MARK: - Watching shares

    /// Subscribes to a chosen share (or any track) at a quality (Zoom's subscribe to one of several
    /// shares; VideoSDK's `setQuality`).
    public func subscribe(_ track: TrackID, quality: VideoQuality = .high) async throws(AtriumError) {
        try await request(.subscribe(track, quality: quality))
    }

    public func unsubscribe(_ track: TrackID) async throws(AtriumError) {
        try await request(.unsubscribe(track))
    }

    /// The tile a track is shown in (VideoSDK's `setViewPort`): the layer sent follows it; 0 by 0: none.
    public func setViewport(_ track: TrackID, width: Int, height: Int) async throws(AtriumError) {
        try await request(.setViewport(track, width: width, height: height))
    }

    // MARK: - Host controls

    /// Zoom's `lockShare`: while locked only hosts and cohosts share (running shares of others stop
    /// with `locked`).
    public func setShareLock(_ locked: Bool) async throws(AtriumError) {
        try await request(.setShareLock(locked))
    }

    public func setSharePolicy(_ change: SharePolicyChange) async throws(AtriumError) {
        try await request(.setSharePolicy(change))
    }

    /// Grants or denies a pending share request (Stream's `grantPermission` on a request).
    public func answerShareRequest(_ id: ShareRequestID, grant: Bool) async throws(AtriumError) {
        try await request(.answerShareRequest(id, grant: grant))
    }

    /// Grants or revokes a participant's screen-share capability (Stream's grant and revoke);
    /// revoking stops its running share with `permission_revoked`.
    public func setScreenShareCapability(_ participant: ParticipantID, granted: Bool) async throws(AtriumError) {
        try await request(.setPermission(participant, target: nil, granted: granted))
    }

    /// Stops anyone's share (hosts: `moderated`).
    public func stopShare(_ id: ShareID, reason: ShareStopReason? = nil) async throws(AtriumError) {
        try await request(.stopShare(id, reason: reason))
    }

    public func muteParticipant(track: TrackID) async throws(AtriumError) {
        try await request(.muteParticipant(track))
    }

    public func removeParticipant(_ id: ParticipantID) async throws(AtriumError) {
        try await request(.removeParticipant(id))
    }

    public func endRoom() async throws(AtriumError) {
        try await request(.endRoom)
    }

    // MARK: - Your tracks, data and attributes

    /// Publishes a track without media yet (a camera, a microphone): its media comes from a
    /// `MediaSession`'s offer.
    @discardableResult
    public func publish(_ track: TrackRequest) async throws(AtriumError) -> TrackInfo {
        guard case .published(let t, _) = try await request(.publish(track)) else {
            throw AtriumError(code: "bad_message", message: "publish answered without a track")
        }
        return t
    }

    public func unpublish(_ track: TrackID) async throws(AtriumError) {
        try await request(.unpublish(track, reason: nil))
    }

    public func setMuted(_ track: TrackID, _ muted: Bool) async throws(AtriumError) {
        try await request(.mute(track, muted: muted))
    }

    /// A data message on a topic (`chat`, `reaction`, your own) to everyone or to some.
    @discardableResult
    public func sendData(topic: String, payload: String, to: [ParticipantID]? = nil) async throws(AtriumError)
        -> MessageID
    {
        guard case .dataSent(let id, _, _) = try await request(.sendData(topic: topic, payload: payload, to: to)) else {
            throw AtriumError(code: "bad_message", message: "send_data answered without a message id")
        }
        return id
    }

    /// Sets (a value) or removes (nil) your attributes (a raised hand).
    public func setAttributes(_ changes: [String: String?]) async throws(AtriumError) {
        try await request(.setAttributes(nil, changes))
    }
}
