import AtriumCrypto
import AtriumJSON
import AtriumModel
import AtriumProtocol
import AtriumSFrame

/// Key rotation when a member leaves (docs/e2ee.md, "Rotation when someone leaves"): the JavaScript
/// SDK's messages on the data topic `atrium.e2ee`, so pages and native clients roll together.
/// - `hello`: an ECDH P-256 public key and its HMAC under a key from index 0's secret, bound to the
///   sender's id: only a holder of the passphrase proves a key.
/// - `keys`: a secret under a key index, AES-GCM-wrapped for each member under HKDF of the two members'
///   ECDH (many members to a message); `ack`: held; `send`: everyone sends with it. The member that
///   joined first leads.
struct KeyRotation {
    static let topic = "atrium.e2ee"
    /// How long the leader waits for every member to hold a new key before all switch (a hang guard).
    static let ackWait: Duration = .seconds(5)
    /// Wrapped secrets per `keys` message: about 125 bytes each, well under a data message's 16 KiB.
    static let wrapsPerMessage = 60
    /// A message refused by the data rate limit is sent again after a second, this many times at most.
    static let rateLimitedRetries = 10

    let pair: ECDHP256
    let auth: [UInt8]
    let hello: String
    /// Proven members: the AES key that wraps secrets between each and this client.
    var members: [ParticipantID: [UInt8]] = [:]
    /// Members that left: a replay of their `hello` is not taken.
    var departed: Set<ParticipantID> = []
    /// A roll this client leads: its key index and the members yet to hold it.
    var waiting: (index: UInt64, pending: Set<ParticipantID>)?
    /// The messages sent so far, in order: each waits for the one before.
    var outbox: Task<Void, Never>?
    /// The highest key index a roll named (a leader taking over mid-roll goes above it).
    var seen: UInt64 = 0
    /// The index of the last roll this client finished: the key in use, also while its own frames
    /// switch to it (after its `send` message is out).
    var rolled: UInt64 = 0
}

extension AtriumRoom {
    /// Rolls the end-to-end key by hand (docs/e2ee.md): `key` under key index `index` (a new one each
    /// time), for receiving, and for sending too unless `send` is false; earlier indexes still decrypt.
    public func setE2EEKey(_ key: [UInt8], index: UInt64, send: Bool = true) throws(AtriumError) {
        guard let keys, !key.isEmpty else {
            throw AtriumError(code: "e2ee_off", message: "the room was not joined with end-to-end encryption")
        }
        guard (1...SFrame.maxKeyIndex).contains(index) else {
            throw AtriumError(code: "invalid_field", message: "index: 1 to \(SFrame.maxKeyIndex)")
        }
        keys.add(secret: key, index: index, send: send)
        if send { publish(.e2eeKey(index: index)) }
    }

    /// The key index frames are sent with (nil outside an end-to-end encrypted room).
    public var e2eeKeyIndex: UInt64? { keys?.sendIndex }

    /// The keyring of an encrypted room, from the join's secret; with rotation, this client's proven key
    /// announced to the room.
    func startE2EE(rotateOnLeave: Bool) async throws(AtriumError) {
        guard let e2ee else {
            throw AtriumError(
                code: "e2ee_required", message: "the room is end-to-end encrypted: join with its e2ee secret")
        }
        guard let room, let me else { throw AtriumError(code: "bad_message", message: "no snapshot") }
        let ring: SFrameKeyring? =
            switch e2ee {
            case .passphrase(let p): SFrameKeyring(passphrase: p, roomID: room.id.rawValue)
            case .key(let k): k.isEmpty ? nil : SFrameKeyring(secret: k)
            }
        guard let ring else { throw AtriumError(code: "e2ee_failed", message: "the key could not be derived") }
        keys = ring
        guard rotateOnLeave else { return }
        guard let pair = ECDHP256(), let auth = ring.authKey else {
            throw AtriumError(code: "e2ee_failed", message: "no ECDH key pair")
        }
        rotation = KeyRotation(pair: pair, auth: auth, hello: Self.hello(pair, auth: auth, me: me.id))
        try await sendData(topic: KeyRotation.topic, payload: rotation?.hello ?? "")
    }

    /// After a rejoin (a new participant id): this client's key proven again under the new id, to the
    /// room; members answer as to a newcomer, and the leader hands it the key in use.
    func announceAgain() {
        guard let rotation, let me else { return }
        var next = KeyRotation(
            pair: rotation.pair, auth: rotation.auth, hello: Self.hello(rotation.pair, auth: rotation.auth, me: me.id))
        next.departed = rotation.departed
        next.outbox = rotation.outbox
        next.seen = rotation.seen
        next.rolled = rotation.rolled
        self.rotation = next
        rotationSend([next.hello], to: nil)
    }

    /// A `hello`: this client's public key and its proof under `me`.
    static func hello(_ pair: ECDHP256, auth: [UInt8], me: ParticipantID) -> String {
        let pub = pair.publicKey
        let mac = HMACSHA256.authenticate(Array("\(me.rawValue)/".utf8) + pub, key: auth)
        return message(["t": .string("hello"), "pub": .string(Base64.encode(pub)), "mac": .string(Base64.encode(mac))])
    }

    static func message(_ o: JSONObject) -> String { JSONValue.object(o).serialized() }

    /// Rotation's messages to some members (or the room), sent after every one before them; one refused by
    /// the data rate limit, or while the socket is down, is sent again a second later.
    func rotationSend(_ payloads: [String], to members: [ParticipantID]?) {
        guard rotation != nil else { return }
        let previous = rotation?.outbox
        rotation?.outbox = Task {
            await previous?.value
            for p in payloads {
                for _ in 0...KeyRotation.rateLimitedRetries {
                    do throws(AtriumError) {
                        _ = try await self.sendData(topic: KeyRotation.topic, payload: p, to: members)
                        break
                    } catch  where ["data_rate_limited", "disconnected"].contains(error.code) {
                        try? await Task.sleep(for: .seconds(1))
                    } catch {
                        break
                    }
                }
            }
        }
    }

    /// The member that leads: the one in the room that joined first, which every member works out alike
    /// from the server's order, so two never roll at once.
    func leader() -> ParticipantID? {
        guard let me, let rotation else { return nil }
        var first = me.id
        for id in participants.keys where !rotation.departed.contains(id) {
            if (joinRank[id] ?? .max) < (joinRank[first] ?? .max) { first = id }
        }
        return first
    }

    /// Whether this client leads.
    func leads() -> Bool { me.map { leader() == $0.id } ?? false }

    /// After a resume (events meanwhile are not replayed): proven members gone from the room left.
    func rotationResumed() {
        guard let members = rotation?.members.keys else { return }
        for id in members where participants[id] == nil { memberLeft(id) }
    }

    static func wrapAAD(from: ParticipantID, to: ParticipantID, index: UInt64) -> [UInt8] {
        Array("Atrium E2EE wrap \(from.rawValue)>\(to.rawValue)/\(index)".utf8)
    }

    /// The secret of `index` wrapped for each of `members` (those proven), as `keys` messages.
    func keysMessages(_ index: UInt64, for members: [ParticipantID], send: Bool) -> [String] {
        guard let me, let rotation, let secret = keys?.secret(index) else { return [] }
        var wraps: [(String, JSONValue)] = []
        for member in members {
            let iv = SecureRandom.bytes(12)
            guard let wrap = rotation.members[member],
                let sealed = AESGCM.seal(
                    key: wrap, nonce: iv, aad: Self.wrapAAD(from: me.id, to: member, index: index), plaintext: secret)
            else { continue }
            wraps.append(
                (member.rawValue, .object(["iv": .string(Base64.encode(iv)), "data": .string(Base64.encode(sealed))])))
        }
        return stride(from: 0, to: wraps.count, by: KeyRotation.wrapsPerMessage).map { start in
            var some = JSONObject()
            for (id, wrap) in wraps[start..<min(start + KeyRotation.wrapsPerMessage, wraps.count)] { some[id] = wrap }
            var o: JSONObject = ["t": .string("keys"), "index": .int(Int64(index)), "wraps": .object(some)]
            if send { o["send"] = .bool(true) }
            return Self.message(o)
        }
    }

    /// A rotation message from another member.
    func rotationMessage(_ d: DataInfo) {
        // Only from a participant in the room now (the server relays, and could replay a leaver's).
        guard let rotation, let keys, let me, let from = d.from, from != me.id, participants[from] != nil,
            !rotation.departed.contains(from),
            let body = (try? JSONParser.parse(d.payload))?.objectValue, let type = body["t"]?.stringValue
        else { return }
        let index: UInt64? =
            if case .int(let i) = body["index"], i >= 1, UInt64(i) <= SFrame.maxKeyIndex { UInt64(i) } else { nil }
        switch type {
        case "hello":
            guard let pub = body["pub"]?.stringValue.flatMap(Base64.decode),
                let mac = body["mac"]?.stringValue.flatMap(Base64.decode),
                constantTimeEquals(
                    HMACSHA256.authenticate(Array("\(from.rawValue)/".utf8) + pub, key: rotation.auth), mac),
                let shared = rotation.pair.sharedSecret(with: pub),
                let wrap = SFrame.derive(shared, info: "wrap", length: 16)
            else { return }
            let known = rotation.members[from] != nil
            self.rotation?.members[from] = wrap
            // A newcomer's announcement (to the room): ours in answer, and the key in use if rolled,
            // and the one being rolled to, if a roll waits (the newcomer's ack joins it).
            guard d.to == nil, !known else { return }
            var out = [rotation.hello]
            if leads() {
                let inUse = max(keys.sendIndex, rotation.rolled)
                if inUse > 0 { out += keysMessages(inUse, for: [from], send: true) }
                if let waiting = rotation.waiting {
                    self.rotation?.waiting?.pending.insert(from)
                    out += keysMessages(waiting.index, for: [from], send: false)
                }
            }
            rotationSend(out, to: [from])
        case "keys":
            // Only the leader's (two secrets under one index would split the room).
            guard let index, from == leader() else { return }
            self.rotation?.seen = max(rotation.seen, index)
            guard let wrap = rotation.members[from], let mine = body["wraps"]?[me.id.rawValue],
                let iv = mine["iv"]?.stringValue.flatMap(Base64.decode),
                let data = mine["data"]?.stringValue.flatMap(Base64.decode),
                let secret = AESGCM.open(
                    key: wrap, nonce: iv, aad: Self.wrapAAD(from: from, to: me.id, index: index), sealed: data)
            else { return }
            if keys.secret(index) == nil { keys.add(secret: secret, index: index, send: false) }
            // The key in use, handed to a newcomer: sent with at once (only ever to a newer index).
            if body["send"]?.boolValue == true {
                if keys.send(index) { publish(.e2eeKey(index: index)) }
            } else {
                rotationSend([Self.message(["t": .string("ack"), "index": .int(Int64(index))])], to: [from])
            }
        case "ack":
            guard let index, var waiting = rotation.waiting, waiting.index == index else { return }
            waiting.pending.remove(from)
            self.rotation?.waiting = waiting
            if waiting.pending.isEmpty { finishRoll(index) }
        case "send":
            if let index, rotation.members[from] != nil, from == leader(), keys.send(index) {
                publish(.e2eeKey(index: index))
            }
        default: break
        }
    }

    /// A member left: the leader rolls the key. Every member gets the new one first, for receiving;
    /// once each holds it (or after `ackWait`) everyone sends with it.
    func memberLeft(_ id: ParticipantID) {
        rotation?.departed.insert(id)
        guard rotation?.members.removeValue(forKey: id) != nil, let keys else { return }
        if let waiting = rotation?.waiting {
            rotation?.waiting?.pending.remove(id)
            if waiting.pending.subtracting([id]).isEmpty { finishRoll(waiting.index) }
        }
        guard leads(), let current = rotation, max(keys.maxIndex, current.seen) < SFrame.maxKeyIndex else { return }
        let members = current.members.keys
        let index = max(keys.maxIndex, current.seen) + 1
        keys.add(secret: SecureRandom.bytes(32), index: index, send: false)
        rotation?.seen = index
        rotation?.waiting = (index, Set(members))
        rotationSend(keysMessages(index, for: Array(members), send: false), to: nil)
        if members.isEmpty {
            finishRoll(index)
            return
        }
        Task {
            try? await Task.sleep(for: KeyRotation.ackWait)
            self.finishRoll(index)
        }
    }

    /// Everyone sends with `index` (once, while this client still waits on that roll).
    func finishRoll(_ index: UInt64) {
        guard rotation?.waiting?.index == index else { return }
        rotation?.waiting = nil
        rotation?.rolled = index
        rotationSend([Self.message(["t": .string("send"), "index": .int(Int64(index))])], to: nil)
        // Its own frames switch once the others are told (not before: they would fail meanwhile).
        let told = rotation?.outbox
        Task {
            await told?.value
            self.sendWith(index)
        }
    }

    func sendWith(_ index: UInt64) {
        if keys?.send(index) == true { publish(.e2eeKey(index: index)) }
    }
}
