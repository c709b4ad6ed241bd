public import AtriumModel

/// Makes ids from injected randomness, so tests are deterministic.
public struct IDGenerator {
    public var random: () -> UInt64

    public init(random: @escaping () -> UInt64) { self.random = random }

    func make(_ prefix: String) -> String {
        prefix + Base32.encode(random(), count: 8) + Base32.encode(random(), count: 8)
    }

    public func participant() -> ParticipantID { ParticipantID(make("pa_")) }
    public func track() -> TrackID { TrackID(make("tr_")) }
    public func share() -> ShareID { ShareID(make("sh_")) }
    public func request() -> ShareRequestID { ShareRequestID(make("rq_")) }
    public func message() -> MessageID { MessageID(make("dm_")) }
}
