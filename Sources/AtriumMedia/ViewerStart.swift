/// How a new (or resumed) video viewer starts, as a pure decision: from the key-frame cache (the
/// picture as the server holds it: a key frame and every delta since), or from a fresh key frame
/// asked of the publisher. A replay shows the current picture at once only when its chain is short;
/// a long one (seconds of deltas, megabytes) shows an old picture first and then freezes while the
/// browser catches up. So a publisher that answers key-frame requests is asked (the request
/// coalesced with other joiners by the throttle), and the cache is the fallback for one that does
/// not answer within `answerBound` (a static screen whose encoder never sends another key frame).
enum ViewerStart: Equatable, Sendable {
    /// Replay the cached picture now.
    case replay
    /// Ask the publisher for a key frame; replay the cache if none came `fallbackAfter` seconds later.
    case request(fallbackAfter: Double)

    /// A cached chain whose key frame is at most this old is short: replayed (it is nearly live).
    static let shortChainAge = 0.5
    /// A publisher that sent a key frame within this many seconds of a request answers; one that did
    /// not by then does not (until it answers again).
    static let answerBound = 1.0

    /// What a publisher's recent answers to key-frame requests say: unknown before the first request,
    /// or the time its last answer took, or that its last request went unanswered.
    enum Answers: Equatable, Sendable {
        case unknown
        case within(Double)
        case never
    }

    /// How long after its key frame a camera's picture is kept by default: the 0.5 s a start replays
    /// and the 1 s a start waits for the key frame it asked before replaying.
    static let cameraKeep = shortChainAge + answerBound

    /// How long after its key frame a stream's cached picture is kept. A camera's is only replayed
    /// while its chain is short (a later start asks it for a key frame, and falls back to the cache
    /// only within `answerBound`): kept `cameraKeep`, then let go, so that a camera whose encoder
    /// sends key frames only when asked (a browser's) does not hold megabytes of deltas nobody
    /// replays. Kept to the next key frame (or the cache's bound): a screen share's (the static
    /// screen the cache is for), a camera's known to ignore requests, and one the engine is `waiting`
    /// on (a start may fall back on it, a recorder may need its last picture).
    static func keep(answers: Answers, screenShare: Bool, waiting: Bool) -> Double {
        if screenShare || waiting || answers == .never { return .infinity }
        return cameraKeep
    }

    /// The decision for one start. `keyFrameAge`: seconds since the cached key frame (nil: nothing
    /// servable cached, so a request it is, with no fallback). A publisher never asked yet: a camera
    /// is asked (camera encoders answer), a screen share is replayed (the static screen the cache is
    /// for may never send another key frame, and its sharer is not bothered).
    /// A camera's picture is let go 1.5 s after its key frame (`keep`): with nothing servable, a camera
    /// not known to ignore requests gets a fresh start all the same.
    static func decide(keyFrameAge: Double?, answers: Answers, screenShare: Bool) -> ViewerStart? {
        if let age = keyFrameAge, age <= shortChainAge { return .replay }
        let decision: ViewerStart =
            switch answers {
            case .never: .replay
            case .unknown: screenShare ? .replay : .request(fallbackAfter: answerBound)
            case .within(let t): .request(fallbackAfter: fallback(t))
            }
        // Nothing servable: no replay, and a screen share's start is a plain request.
        guard keyFrameAge == nil else { return decision }
        return decision == .replay || screenShare ? nil : decision
    }

    /// Twice the publisher's last answer (a round trip and a frame), a tenth of a second to `answerBound`.
    static func fallback(_ answered: Double) -> Double { min(answerBound, max(0.1, 2 * answered)) }
}
