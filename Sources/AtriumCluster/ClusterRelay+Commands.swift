import AtriumJSON
import AtriumModel
import AtriumRedis
public import AtriumRooms

/// Hub commands for rooms another node runs (`RoomRouter.send`): the command travels encoded to the
/// owner's inbox, which applies it to its hub (never sending it on) and answers with the events or
/// the refusal. The caller waits as for a relayed admin call.
extension ClusterRelay {
    public func send(_ command: RoomCommand, to target: String) -> Result<[RoomEvent], HubError> {
        guard NodeID.isValid(target), target != me else { return .failure(.roomNotFound(command.room.rawValue)) }
        guard let body = try? JSONValueEncoder().encode(command) else {
            return .failure(.badRequest("the command cannot be encoded"))
        }
        calls += 1
        let id = "\(me):\(calls)"
        guard let subscriber, publish(to: target, .command(from: me, call: id, body: body)) else {
            return .failure(.clusterUnavailable("the node running the room cannot be reached"))
        }
        let answer = subscriber.take(within: callTimeoutMillis) { m in
            guard case .commandReply(let call, _) = message(m.payload) else { return false }
            return call == id
        }
        return CommandOutcome.result(of: answer.flatMap { message($0.payload) })
    }

    /// Applies a command sent by another node to a room live here and sends the answer back.
    func answerCommand(_ call: String, from: String, _ body: JSONValue) {
        guard let hub, NodeID.isValid(from) else { return }
        let outcome: CommandOutcome
        do {
            let command = try JSONValueDecoder().decode(RoomCommand.self, from: body)
            outcome = CommandOutcome(hub.applyHere(command, now: node.now()))
        } catch {
            outcome = .refused(.badRequest("the relayed command is malformed: \(error)"))
        }
        guard let reply = try? JSONValueEncoder().encode(outcome) else { return }
        _ = publish(to: from, .commandReply(call: call, body: reply))
    }
}

/// What the owner answers a command with: its events, or the hub's refusal.
public enum CommandOutcome: Equatable, Sendable, Codable {
    case events([RoomEvent])
    case refused(HubError)

    public init(_ result: Result<[RoomEvent], HubError>) {
        switch result {
        case .success(let events): self = .events(events)
        case .failure(let error): self = .refused(error)
        }
    }

    /// What the caller makes of the owner's answer: none in time, one it cannot read (a node of
    /// another version answered), or the owner's outcome.
    public static func result(of answer: RelayMessage?) -> Result<[RoomEvent], HubError> {
        guard let answer, case .commandReply(_, let reply) = answer else {
            return .failure(.clusterUnavailable("the node running the room did not answer in time"))
        }
        guard let outcome = try? JSONValueDecoder().decode(CommandOutcome.self, from: reply) else {
            return .failure(
                .clusterUnavailable("the node running the room answered in a form this node cannot read"))
        }
        return outcome.result
    }

    public var result: Result<[RoomEvent], HubError> {
        switch self {
        case .events(let events): .success(events)
        case .refused(let error): .failure(error)
        }
    }
}
