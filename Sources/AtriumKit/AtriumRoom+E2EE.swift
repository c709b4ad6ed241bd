import AtriumCrypto
import AtriumJSON
import AtriumModel
import AtriumProtocol
import AtriumSFrame

/// Key rotation when a member leaves (docs/e2ee.md, "Rotation when someone leaves"): the JavaScript
/// SDK's messages on the data topic `atrium.e2ee`, so pages and native clients roll together.
/// - `hello`: an ECDH P-256 public key and its HMAC under a key from index 0's secret, bound to the
///   sender's id: only a holder of the passphrase proves a key.
/// - `key`: a random secret under the next index, AES-GCM-wrapped under HKDF of the two members' ECDH;
///   `ack`: held; `send`: everyone sends with it. The lowest participant id leads.
struct KeyRotation {
    static let topic = "atrium.e2ee"
    /// How long the leader waits for every member to hold a new key before all switch (a hang guard).
    static let ackWait: Duration = .seconds(5)

    let pair: ECDHP256
    let auth: [UInt8]
    let hello: String
    /// Proven members: the AES key that wraps secrets between each and this client.
    var members: [ParticipantID: [UInt8]] = [:]
    /// Members that left: a replay of their `hello` is not taken.
    var departed: Set<ParticipantID> = []
    /// A roll this client leads: its key index and the members yet to hold it.
    var waiting: (index: UInt64, pending: Set<ParticipantID>)?
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
        let pub = pair.publicKey
        let mac = HMACSHA256.authenticate(Array("\(me.id.rawValue)/".utf8) + pub, key: auth)
        let hello = Self.message([
            "t": .string("hello"), "pub": .string(Base64.encode(pub)), "mac": .string(Base64.encode(mac)),
        ])
        rotation = KeyRotation(pair: pair, auth: auth, hello: hello)
        try await sendData(topic: KeyRotation.topic, payload: hello)
    }

    static func message(_ o: JSONObject) -> String { JSONValue.object(o).serialized() }

    /// Rotation's messages to one member (or the room), in order.
    func rotationSend(_ payloads: [String], to member: ParticipantID?) {
        Task {
            for p in payloads {
                _ = try? await self.sendData(topic: KeyRotation.topic, payload: p, to: member.map { [$0] })
            }
        }
    }

    /// Whether this client leads: the lowest id among the proven members (but a newcomer's, which
    /// holds no key to hand out yet).
    func leads(except newcomer: ParticipantID? = nil) -> Bool {
        guard let me, let rotation else { return false }
        return rotation.members.keys.allSatisfy { $0 == newcomer || me.id.rawValue < $0.rawValue }
    }

    static func wrapAAD(from: ParticipantID, to: ParticipantID, index: UInt64) -> [UInt8] {
        Array("Atrium E2EE wrap \(from.rawValue)>\(to.rawValue)/\(index)".utf8)
    }

    /// The secret of `index` wrapped for `member`, as a `key` message.
    func keyMessage(_ index: UInt64, for member: ParticipantID, send: Bool) -> String? {
        guard let me, let wrap = rotation?.members[member], let secret = keys?.secret(index) else { return nil }
        let iv = SecureRandom.bytes(12)
        guard
            let sealed = AESGCM.seal(
                key: wrap, nonce: iv, aad: Self.wrapAAD(from: me.id, to: member, index: index), plaintext: secret)
        else { return nil }
        var o: JSONObject = [
            "t": .string("key"), "index": .int(Int64(index)), "iv": .string(Base64.encode(iv)),
            "data": .string(Base64.encode(sealed)),
        ]
        if send { o["send"] = .bool(true) }
        return Self.message(o)
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
            if leads(except: from) {
                if keys.sendIndex > 0, let key = keyMessage(keys.sendIndex, for: from, send: true) { out.append(key) }
                if let waiting = rotation.waiting, let key = keyMessage(waiting.index, for: from, send: false) {
                    self.rotation?.waiting?.pending.insert(from)
                    out.append(key)
                }
            }
            rotationSend(out, to: from)
        case "key":
            guard let index, let wrap = rotation.members[from],
                let iv = body["iv"]?.stringValue.flatMap(Base64.decode),
                let data = body["data"]?.stringValue.flatMap(Base64.decode),
                let secret = AESGCM.open(
                    key: wrap, nonce: iv, aad: Self.wrapAAD(from: from, to: me.id, index: index), sealed: data)
            else { return }
            if keys.secret(index) == nil { keys.add(secret: secret, index: index, send: false) }
            // The key in use, handed to a newcomer: sent with at once (only ever to a newer index).
            if body["send"]?.boolValue == true {
                if keys.send(index) { publish(.e2eeKey(index: index)) }
            } else {
                rotationSend([Self.message(["t": .string("ack"), "index": .int(Int64(index))])], to: from)
            }
        case "ack":
            guard let index, var waiting = rotation.waiting, waiting.index == index else { return }
            waiting.pending.remove(from)
            self.rotation?.waiting = waiting
            if waiting.pending.isEmpty { finishRoll(index) }
        case "send":
            if let index, rotation.members[from] != nil, keys.send(index) { publish(.e2eeKey(index: index)) }
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
        guard leads(), let members = rotation?.members.keys, keys.maxIndex < SFrame.maxKeyIndex else { return }
        let index = keys.maxIndex + 1
        keys.add(secret: SecureRandom.bytes(32), index: index, send: false)
        rotation?.waiting = (index, Set(members))
        for member in members {
            if let key = keyMessage(index, for: member, send: false) { rotationSend([key], to: member) }
        }
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
        rotationSend([Self.message(["t": .string("send"), "index": .int(Int64(index))])], to: nil)
        if keys?.send(index) == true { publish(.e2eeKey(index: index)) }
    }
}
