import AtriumMedia
package import AtriumModel
import AtriumProtocol
import AtriumRooms

/// What the worker reports, handled on the service thread: transport states (logged by the worker)
/// and audio levels, which become `active_speakers`.
extension MediaCoordinator {
    /// A share whose capture stopped without a word (its RTCP BYE, or silence past the capture
    /// timeout) stops with `capture_ended`, as if the sharer had said so: the same path as every stop.
    func captureEnded(_ track: TrackID, rooms: any MediaRooms) -> RoomChange? {
        guard let info = producers[track], let state = rooms.state(info.room),
            let share = state.shares.first(where: { $0.videoTrack == track || $0.audioTrack == track })
        else { return nil }
        return .stopShare(share.id, by: info.owner, in: info.room, reason: .captureEnded)
    }

    /// A microphone at or above this level (dBov, RFC 6464: 0 loudest) counts as speaking.
    static let speakingThreshold = 60
    static let maxSpeakers = 3

    /// Drains the worker's events: a transport's state goes to its participant (`media_state`), the
    /// layers wanted to the publisher (`layers_wanted`); the `active_speakers` to broadcast and the
    /// room changes to make (shares whose capture ended) are returned.
    package func drainEvents(rooms: any MediaRooms, now: Int64) -> (speakers: [ActiveSpeakers], changes: [RoomChange]) {
        var out: [ActiveSpeakers] = []
        var changes: [RoomChange] = []
        var reallocate = false
        defer {
            if reallocate { allocateAll() }
            allocateReleased()
        }
        for event in plane.events() {
            switch event {
            case .dataChannel, .dataMessage:
                dataEvent(event)
                continue
            case .transportState(let id, let state):
                transportStates[id] = state == .closed ? nil : state
            default: break
            }
            if case .estimate(let transport, let bitrate) = event {
                estimates[transport] = bitrate
                reallocate = true
                continue
            }
            if case .bottleneck(let transport, let suspected) = event {
                if suspected { bottlenecks.insert(transport) } else { bottlenecks.remove(transport) }
                reallocate = true
                continue
            }
            if case .layers(let id, let layers) = event {
                let track = TrackID(id)
                guard producers[track] != nil else { continue }
                layerStats[track] = layers
                reallocate = true
                continue
            }
            if case .producerEnded(let id, let reason) = event {
                if reason == .nodeLost, let info = producers[TrackID(id)] {
                    // Its media is gone with the node (its capture may live on): a share stops, any
                    // other track is unpublished, with `connection_lost`.
                    changes.append(.unpublish(TrackID(id), by: info.owner, in: info.room))
                } else if let change = captureEnded(TrackID(id), rooms: rooms) {
                    changes.append(change)
                }
                continue
            }
            if case .layersWanted(let id, let rids) = event {
                // The publisher may turn the other encodings off (`layers_wanted`).
                let track = TrackID(id)
                guard let info = producers[track] else { continue }
                wantedLayers[track] = rids
                push(info.owner, .layersWanted(track: track, rids: rids))
                continue
            }
            if case .transportState(let id, let state) = event, state != .closed {
                for (pid, peer) in peers {
                    let target: MediaTarget? =
                        peer.publisher?.transport == id
                        ? .publisher : peer.subscriber?.transport == id ? .subscriber : nil
                    if let target {
                        push(pid, .mediaState(target: target, state: state))
                    }
                }
                if state == .failed { renewSubscriber(transport: id) }
                continue
            }
            guard case .audioLevels(let report, let worker) = event else { continue }
            levelReports[worker] = report.isEmpty ? nil : report
            var byRoom: [RoomID: [(ParticipantID, Int)]] = [:]
            for l in levelReports.values.joined() where l.dBov <= Self.speakingThreshold {
                guard let info = producers[TrackID(l.producer)],
                    rooms.state(info.room)?.tracks[info.track]?.source == .microphone,
                    rooms.state(info.room)?.tracks[info.track]?.muted == false
                else { continue }
                byRoom[info.room, default: []].append((info.owner, l.dBov))
            }
            let rooms = Set(byRoom.keys).union(speakers.keys)
            for room in rooms {
                let loudest = (byRoom[room] ?? []).sorted { $0.1 < $1.1 }.prefix(Self.maxSpeakers)
                let ids = loudest.map(\.0)
                guard ids != speakers[room] ?? [] else { continue }
                if ids.first != speakers[room]?.first { reallocate = true }
                speakers[room] = ids.isEmpty ? nil : ids
                let list = loudest.map { pid, dBov in
                    // Linear amplitude, 1 at 0 dBov, rounded to three places.
                    ActiveSpeakers.Speaker(participant: pid, level: (Self.amplitude(dBov) * 1000).rounded() / 1000)
                }
                let message = ActiveSpeakers(room: room, speakers: list)
                announced[room] = list.isEmpty ? nil : message
                out.append(message)
            }
        }
        return (out, changes)
    }

    /// The room's current `active_speakers`, for a participant who joins or resumes; nil when nobody
    /// speaks.
    package func currentSpeakers(in room: RoomID) -> ActiveSpeakers? { announced[room] }

    /// The loudest speaker of a room now, if anyone speaks (a live stream of the active speaker).
    package func activeSpeaker(in room: RoomID) -> ParticipantID? { speakers[room]?.first }

    static func amplitude(_ dBov: Int) -> Double {
        var a = 1.0
        // 10^(-dBov/20) without Foundation: each 20 dB is a factor of ten, the rest by 1 dB steps.
        for _ in 0..<(dBov / 20) { a /= 10 }
        for _ in 0..<(dBov % 20) { a /= 1.122_018_454_301_963_4 }
        return a
    }
}
