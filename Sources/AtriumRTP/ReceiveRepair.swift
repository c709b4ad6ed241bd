/// A receiver's repair decisions for one video stream, on the owner's clock (nanoseconds): which
/// missing packets to ask for again (Generic NACK, RFC 4585 section 6.2.1), when a gap is given up
/// (`FrameAssembler.giveUp`), and when to ask for a key frame (PLI). Pure: the owner passes what its
/// `FrameAssembler` misses and needs, and acts on the answer.
///
/// | situation | action |
/// |---|---|
/// | a sequence number newly missing | NACK it at once |
/// | still missing `retryInterval` after the last ask, asked fewer than `maxTries` times | NACK it again |
/// | missing for `giveUpAfter` | give the gap up |
/// | the stream needs a key frame, none asked for within `keyFrameInterval` | PLI |
public struct ReceiveRepair: Sendable {
    public struct Actions: Equatable, Sendable {
        public var nack: [UInt16] = []
        public var giveUp = false
        public var keyFrameRequest = false

        public init(nack: [UInt16] = [], giveUp: Bool = false, keyFrameRequest: Bool = false) {
            self.nack = nack
            self.giveUp = giveUp
            self.keyFrameRequest = keyFrameRequest
        }
    }

    struct Ask {
        var first: UInt64
        var last: UInt64
        var tries: Int
    }

    public var retryInterval: UInt64 = 100_000_000
    public var maxTries = 4
    public var giveUpAfter: UInt64 = 1_000_000_000
    public var keyFrameInterval: UInt64 = 500_000_000
    var asked: [UInt16: Ask] = [:]
    var lastKeyFrameRequest: UInt64?
    /// NACKed sequence numbers and PLIs sent, for the owner's counters.
    public private(set) var nacksSent = 0
    public private(set) var keyFrameRequestsSent = 0

    public init() {}

    /// What to do now, given the sequence numbers the assembler misses and whether it needs a key frame.
    public mutating func update(missing: [UInt16], needsKeyFrame: Bool, now: UInt64) -> Actions {
        var out = Actions()
        let still = Set(missing)
        for k in asked.keys where !still.contains(k) { asked[k] = nil }
        for s in missing {
            if var a = asked[s] {
                if now &- a.first >= giveUpAfter { out.giveUp = true }
                if a.tries < maxTries && now &- a.last >= retryInterval {
                    a.last = now
                    a.tries += 1
                    asked[s] = a
                    out.nack.append(s)
                }
            } else {
                asked[s] = Ask(first: now, last: now, tries: 1)
                out.nack.append(s)
            }
        }
        if needsKeyFrame { out.keyFrameRequest = keyFrameDue(now) }
        nacksSent += out.nack.count
        return out
    }

    /// A key frame is wanted for another reason (the decoder failed): a PLI unless one went out
    /// within `keyFrameInterval`.
    public mutating func keyFrameWanted(now: UInt64) -> Bool { keyFrameDue(now) }

    mutating func keyFrameDue(_ now: UInt64) -> Bool {
        if let last = lastKeyFrameRequest, now &- last < keyFrameInterval { return false }
        lastKeyFrameRequest = now
        keyFrameRequestsSent += 1
        return true
    }
}
