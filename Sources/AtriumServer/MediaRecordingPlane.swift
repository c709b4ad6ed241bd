import AtriumMedia
import AtriumMediaControl
import AtriumModel
import AtriumRecording
import AtriumRooms
import AtriumUDP

/// Recordings' view of the media plane: a track's producer from the coordinator, recorders on the
/// worker that owns the producer (`MediaWorkers` routes a recorder by its producer). Recorders send
/// to 127.0.0.1 only: the ffmpeg the server runs on this machine.
final class MediaRecordingPlane: RecordingPlane {
    let coordinator: MediaCoordinator
    let plane: any MediaPlane

    init(coordinator: MediaCoordinator, plane: any MediaPlane) {
        self.coordinator = coordinator
        self.plane = plane
    }

    func recordable(_ track: TrackID) -> RecordableTrack? {
        guard let spec = coordinator.producer(of: track) else { return nil }
        return RecordableTrack(
            producer: spec.id, kind: spec.kind == .audio ? .audio : .video, codec: spec.videoCodec ?? "opus",
            clockRate: spec.clockRate)
    }

    func attach(recorder: String, producer: String, port: Int, ssrc: UInt32, payloadType: UInt8, line: String?) {
        guard let p = UInt16(exactly: port) else { return }
        plane.submit(
            .addRecorder(
                RecorderSpec(
                    id: recorder, producer: producer, destination: .v4(address: 0x7F00_0001, port: p), ssrc: ssrc,
                    payloadType: payloadType, line: line)))
    }

    func detach(recorder: String) {
        plane.submit(.closeRecorder(id: recorder))
    }

    func openLine(_ line: StreamLine, room: RoomID) {
        guard let p = UInt16(exactly: line.port) else { return }
        plane.submit(
            .openRecorderLine(
                RecorderLineSpec(
                    id: line.id, router: room.rawValue, destination: .v4(address: 0x7F00_0001, port: p),
                    ssrc: line.ssrc, payloadType: line.payloadType, kind: line.kind == .audio ? .audio : .video,
                    clockRate: line.clockRate)))
    }

    func closeLine(_ id: String) {
        plane.submit(.closeRecorderLine(id: id))
    }

    func activeSpeaker(in room: RoomID) -> ParticipantID? { coordinator.activeSpeaker(in: room) }
}
