// Atrium JavaScript client: an ES module with no dependencies and no build step.
// It speaks the signaling protocol of docs/protocol.md over WebSocket and drives two
// RTCPeerConnections (publisher and subscriber, section 14 of that document).
//
//   import { Room } from "/sdk/atrium.js";
//   const room = await Room.connect("ws://127.0.0.1:8800/v1/signal", token, { name: "Ada" });
//   room.addEventListener("track", (e) => attach(e.detail.track, e.detail.participantId));
//   await room.publishCamera();
//   const share = await room.startScreenShare();   // getDisplayMedia, contentHint "detail"
//   await room.stopScreenShare();

/** @typedef {"camera"|"microphone"|"screen_share"|"screen_share_audio"} Source */
/** @typedef {"high"|"medium"|"low"} Quality */

/**
 * @typedef {object} RemoteTrack
 * @property {MediaStreamTrack} track      the received track
 * @property {string} trackId              the server's track id (`tr_...`)
 * @property {string} participantId        its publisher
 * @property {Source} source
 * @property {string} mid                  the subscriber connection's transceiver
 */

/**
 * @typedef {object} LocalTrack
 * @property {string} trackId
 * @property {Source} source
 * @property {MediaStreamTrack} track
 * @property {string} [shareId]            for a screen share
 */

export const PROTOCOL = 1;

/** An error carrying the protocol's code (docs/protocol.md section 10), e.g. `share_locked`. */
export class AtriumError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = "AtriumError";
    /** @type {string} */
    this.code = code;
  }
}

const RTC_CONFIG = { bundlePolicy: "max-bundle", rtcpMuxPolicy: "require", iceServers: [] };
const PING_INTERVAL_MS = 10000;
const REQUEST_TIMEOUT_MS = 15000;
/** Close codes after which the client does not try to resume (docs/protocol.md section 11). */
const FINAL_CLOSES = new Set([4001, 4003, 4100, 4101, 4102, 4103, 1000]);

/**
 * One participant's session in a room. Every message the server pushes is dispatched as a
 * `CustomEvent` of the same name with the message as `detail` (`participant_joined`,
 * `share_stopped`, `active_speakers`, ...). The client adds:
 *   `track` (detail: RemoteTrack), `track_ended` (detail: RemoteTrack),
 *   `local_track_ended` (detail: LocalTrack; e.g. the person stopped the capture in the browser),
 *   `reconnecting`, `reconnected`, `disconnected` (detail: {code, reason}), `state` (room state changed).
 */
export class Room extends EventTarget {
  /**
   * Opens the WebSocket, authenticates and joins.
   * @param {string} url      `ws(s)://HOST:PORT/v1/signal`
   * @param {string} token    a participant token
   * @param {{name?: string, metadata?: string, autoSubscribe?: boolean}} [options]
   */
  static async connect(url, token, options = {}) {
    const room = new Room(url, token, options);
    await room._open();
    const snapshot = await room.request("join", {
      protocol: PROTOCOL,
      ...(options.name ? { name: options.name } : {}),
      ...(options.metadata ? { metadata: options.metadata } : {}),
      ...(options.autoSubscribe === false ? { autoSubscribe: false } : {}),
    });
    room._applySnapshot(snapshot);
    return room;
  }

  /** @private */
  constructor(url, token, options) {
    super();
    this.url = url;
    this.token = token;
    this.options = options;
    /** @type {WebSocket|null} */
    this.ws = null;
    this.nextId = 1;
    /** @type {Map<number, {resolve: Function, reject: Function, timer: any}>} */
    this.pending = new Map();
    /** The local participant as the server describes it. */
    this.me = null;
    /** @type {Map<string, any>} participants by id (others) */
    this.participants = new Map();
    /** @type {Map<string, any>} shares by id */
    this.shares = new Map();
    this.roomInfo = null;
    this.resumeToken = null;
    this.closed = false;
    /** @type {Map<string, LocalTrack>} by track id */
    this.localTracks = new Map();
    /** @type {RTCPeerConnection|null} */
    this.publisher = null;
    /** @type {Map<string, {transceiver: RTCRtpTransceiver, source: Source, trackId?: string}>} by mid */
    this.publishMids = new Map();
    this.negotiation = Promise.resolve();
    /** @type {RTCPeerConnection|null} */
    this.subscriber = null;
    /** @type {Map<string, RemoteTrack>} live remote tracks by mid */
    this.remote = new Map();
    /** offer entries by mid, from the latest subscriber offer */
    this.offered = new Map();
    this.subscriberChain = Promise.resolve();
    this.pingTimer = null;
  }

  // ---------------------------------------------------------------- signaling

  /** @private Opens the socket and waits for `welcome`. */
  _open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${this.url}?access_token=${encodeURIComponent(this.token)}`);
      this.ws = ws;
      let welcomed = false;
      ws.onmessage = (ev) => {
        let msg;
        try {
          msg = JSON.parse(ev.data);
        } catch {
          return;
        }
        if (!welcomed) {
          if (msg.type === "welcome") {
            welcomed = true;
            this.welcome = msg;
            resolve(msg);
          } else if (msg.type === "error") {
            reject(new AtriumError(msg.error.code, msg.error.message));
          }
          return;
        }
        this._receive(msg);
      };
      ws.onclose = (ev) => {
        if (!welcomed) reject(new AtriumError("connection_failed", `closed ${ev.code} ${ev.reason}`));
        else this._closed(ev.code, ev.reason);
      };
      ws.onerror = () => {};
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this._send({ type: "ping" }), PING_INTERVAL_MS);
    });
  }

  /** @private */
  _send(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  /**
   * Sends a request and resolves with its result's `data`; rejects with an AtriumError.
   * @param {string} type
   * @param {object} [fields]
   * @returns {Promise<any>}
   */
  request(type, fields = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AtriumError("timeout", `no answer to ${type}`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this._send({ type, id, ...fields });
    });
  }

  /** @private */
  _receive(msg) {
    if ((msg.type === "result" || msg.type === "error") && this.pending.has(msg.id)) {
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.type === "result") p.resolve(msg.data);
      else p.reject(new AtriumError(msg.error.code, msg.error.message));
      return;
    }
    this._track(msg);
    if (msg.type === "subscriber_offer") {
      this.subscriberChain = this.subscriberChain.then(() => this._answerSubscriber(msg)).catch((e) =>
        this._emit("error", e),
      );
    }
    this._emit(msg.type, msg);
  }

  /** @private Keeps participants and shares current from the events. */
  _track(msg) {
    switch (msg.type) {
      case "participant_joined":
      case "participant_updated":
      case "permissions_changed":
        if (msg.participant.id === this.me?.id) this.me = msg.participant;
        else this.participants.set(msg.participant.id, msg.participant);
        break;
      case "participant_left":
        this.participants.delete(msg.participant.id);
        break;
      case "share_started":
      case "share_paused":
      case "share_resumed":
        this.shares.set(msg.share.id, msg.share);
        break;
      case "share_stopped":
        this.shares.delete(msg.share.id);
        for (const t of this.localTracks.values()) {
          if (t.shareId === msg.share.id) this._endLocal(t.trackId, false);
        }
        break;
      case "share_lock_changed":
        if (this.roomInfo) this.roomInfo.sharePolicy.shareLocked = msg.locked;
        break;
      case "share_policy_changed":
        if (this.roomInfo) this.roomInfo.sharePolicy = msg.sharePolicy;
        break;
      case "track_unpublished":
        if (this.localTracks.has(msg.track.id)) this._endLocal(msg.track.id, false);
        break;
      case "left":
        this.closed = true;
        break;
      default:
        return;
    }
    this._emit("state", msg);
  }

  /** @private */
  _applySnapshot(s) {
    this.me = s.participant;
    this.roomInfo = s.room;
    this.resumeToken = s.resumeToken;
    this.participants = new Map(s.participants.map((p) => [p.id, p]));
    this.shares = new Map(s.shares.map((sh) => [sh.id, sh]));
    this.requests = s.requests || [];
    this._emit("state", { type: "snapshot" });
  }

  /** @private */
  _emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  /** @private The socket closed: resume within the window, unless it was final. */
  async _closed(code, reason) {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new AtriumError("disconnected", `the connection closed (${code})`));
    }
    this.pending.clear();
    if (this.closed || FINAL_CLOSES.has(code) || code >= 4000) {
      this._shutdown();
      this._emit("disconnected", { code, reason });
      return;
    }
    this._emit("reconnecting", { code, reason });
    for (let attempt = 0; attempt < 8 && !this.closed; attempt++) {
      await new Promise((r) => setTimeout(r, Math.min(500 * 2 ** attempt, 4000)));
      try {
        await this._open();
        const s = await this.request("resume", { protocol: PROTOCOL, resumeToken: this.resumeToken });
        this._applySnapshot(s);
        this._emit("reconnected", {});
        return;
      } catch (e) {
        if (e instanceof AtriumError && e.code === "resume_failed") break;
      }
    }
    this._shutdown();
    this._emit("disconnected", { code, reason: "resume failed" });
  }

  /** @private */
  _shutdown() {
    this.closed = true;
    clearInterval(this.pingTimer);
    for (const t of this.localTracks.values()) t.track.stop();
    this.localTracks.clear();
    this.publisher?.close();
    this.subscriber?.close();
    for (const r of this.remote.values()) this._emit("track_ended", r);
    this.remote.clear();
  }

  /** Leaves the room and closes everything. */
  async leave() {
    if (this.closed) return;
    try {
      await this.request("leave");
    } catch {
      /* closing anyway */
    }
    this._shutdown();
    this.ws?.close(1000);
  }

  // ---------------------------------------------------------------- publishing

  /**
   * Publishes the camera (getUserMedia).
   * @param {MediaTrackConstraints|boolean} [constraints]
   * @returns {Promise<LocalTrack>}
   */
  async publishCamera(constraints = { width: 1280, height: 720 }) {
    const stream = await navigator.mediaDevices.getUserMedia({ video: constraints });
    return this.publishTrack(stream.getVideoTracks()[0], "camera");
  }

  /**
   * Publishes the microphone (getUserMedia).
   * @param {MediaTrackConstraints|boolean} [constraints]
   * @returns {Promise<LocalTrack>}
   */
  async publishMicrophone(constraints = true) {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: constraints });
    return this.publishTrack(stream.getAudioTracks()[0], "microphone");
  }

  /**
   * Starts a screen share (getDisplayMedia), with the shared tab's or system audio when the browser
   * offers it. `contentHint` defaults to "detail" (text stays sharp rather than smooth).
   * @param {{audio?: boolean, contentHint?: string, video?: MediaTrackConstraints|boolean}} [options]
   * @returns {Promise<{shareId: string, video: LocalTrack, audio?: LocalTrack}>}
   */
  async startScreenShare(options = {}) {
    const stream = await navigator.mediaDevices.getDisplayMedia({
      video: options.video ?? true,
      audio: options.audio ?? true,
    });
    const [videoTrack] = stream.getVideoTracks();
    const [audioTrack] = stream.getAudioTracks();
    videoTrack.contentHint = options.contentHint ?? "detail";
    let video;
    try {
      video = await this.publishTrack(videoTrack, "screen_share");
    } catch (e) {
      stream.getTracks().forEach((t) => t.stop());
      throw e;
    }
    let audio;
    if (audioTrack) {
      try {
        audio = await this.publishTrack(audioTrack, "screen_share_audio");
      } catch (e) {
        audioTrack.stop();
        this._emit("error", e);
      }
    }
    // The person stops the capture from the browser's own UI.
    videoTrack.addEventListener("ended", () => {
      if (this.localTracks.has(video.trackId)) this.stopScreenShare("capture_ended").catch(() => {});
    });
    return { shareId: video.shareId, video, audio };
  }

  /** The running screen share of this participant, if any. */
  get myShare() {
    for (const t of this.localTracks.values()) if (t.source === "screen_share") return t;
    return null;
  }

  /**
   * Stops this participant's screen share.
   * @param {"user_stopped"|"capture_ended"} [reason]
   */
  async stopScreenShare(reason = "user_stopped") {
    const share = this.myShare;
    if (!share) return;
    await this.request("stop_share", { shareId: share.shareId, reason });
  }

  async pauseScreenShare() {
    const share = this.myShare;
    if (share) await this.request("pause_share", { shareId: share.shareId });
  }

  async resumeScreenShare() {
    const share = this.myShare;
    if (share) await this.request("resume_share", { shareId: share.shareId });
  }

  /**
   * Publishes any local track as `source` over the publisher connection.
   * @param {MediaStreamTrack} track
   * @param {Source} source
   * @returns {Promise<LocalTrack>}
   */
  publishTrack(track, source) {
    const run = this.negotiation.then(async () => {
      if (!this.publisher) this._createPublisher();
      const transceiver = this.publisher.addTransceiver(track, {
        direction: "sendonly",
        streams: [new MediaStream([track])],
      });
      let result;
      try {
        result = await this._negotiatePublisher([{ transceiver, source, track }]);
      } catch (e) {
        this._dropTransceiver(transceiver);
        throw e;
      }
      const mid = transceiver.mid;
      const accepted = result.tracks.find((t) => t.mid === mid);
      if (!accepted) {
        const rejected = result.rejected.find((r) => r.mid === mid);
        this._dropTransceiver(transceiver);
        await this._negotiatePublisher([]).catch(() => {});
        throw new AtriumError(rejected?.code ?? "rejected", rejected?.message ?? "the server rejected the track");
      }
      /** @type {LocalTrack} */
      const local = { trackId: accepted.trackId, source, track, ...(accepted.shareId ? { shareId: accepted.shareId } : {}) };
      this.publishMids.set(mid, { transceiver, source, trackId: accepted.trackId });
      this.localTracks.set(accepted.trackId, local);
      return local;
    });
    this.negotiation = run.catch(() => {});
    return run;
  }

  /**
   * Stops publishing a track (camera, microphone; a share's video track stops the share).
   * @param {string} trackId
   */
  async unpublish(trackId) {
    const local = this.localTracks.get(trackId);
    if (!local) return;
    await this.request("unpublish", { trackId });
    this._endLocal(trackId, false);
  }

  /** Mutes or unmutes one of this participant's tracks (the track sends silence/black while muted). */
  async setMuted(trackId, muted) {
    const local = this.localTracks.get(trackId);
    if (local) local.track.enabled = !muted;
    await this.request("mute", { trackId, muted });
  }

  /** @private A local track ended (unpublished, its share stopped): stop it and its transceiver. */
  _endLocal(trackId, notify = true) {
    const local = this.localTracks.get(trackId);
    if (!local) return;
    this.localTracks.delete(trackId);
    local.track.stop();
    for (const [mid, entry] of this.publishMids) {
      if (entry.trackId === trackId) {
        this.publishMids.delete(mid);
        this._dropTransceiver(entry.transceiver);
      }
    }
    this.negotiation = this.negotiation.then(() => this._negotiatePublisher([])).catch(() => {});
    this._emit("local_track_ended", local);
    if (notify) this._emit("state", { type: "local_track_ended" });
  }

  /** @private */
  _dropTransceiver(transceiver) {
    try {
      transceiver.sender.replaceTrack(null);
      transceiver.stop();
    } catch {
      /* already stopped */
    }
  }

  /** @private */
  _createPublisher() {
    const pc = new RTCPeerConnection(RTC_CONFIG);
    pc.onicecandidate = (e) => {
      if (e.candidate) this._send({ type: "ice_candidate", target: "publisher", candidate: e.candidate.candidate });
    };
    pc.onconnectionstatechange = () => this._emit("publisher_state", { state: pc.connectionState });
    this.publisher = pc;
  }

  /**
   * @private One offer/answer round on the publisher connection; `added` are the new transceivers.
   * @param {{transceiver: RTCRtpTransceiver, source: Source, track: MediaStreamTrack}[]} added
   */
  async _negotiatePublisher(added) {
    const pc = this.publisher;
    if (!pc) return { tracks: [], rejected: [] };
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    const tracks = added.map(({ transceiver, source, track }) => {
      const s = track.getSettings ? track.getSettings() : {};
      return {
        mid: transceiver.mid,
        source,
        ...(s.width ? { width: s.width } : {}),
        ...(s.height ? { height: s.height } : {}),
      };
    });
    const result = await this.request("publish_offer", { sdp: pc.localDescription.sdp, tracks });
    await pc.setRemoteDescription({ type: "answer", sdp: result.sdp });
    return result;
  }

  // ---------------------------------------------------------------- receiving

  /** @private Answers a subscriber offer and reports tracks that started or ended. */
  async _answerSubscriber(msg) {
    if (!this.subscriber) {
      const pc = new RTCPeerConnection(RTC_CONFIG);
      pc.onicecandidate = (e) => {
        if (e.candidate) this._send({ type: "ice_candidate", target: "subscriber", candidate: e.candidate.candidate });
      };
      pc.ontrack = (e) => this._remoteTrack(e.transceiver, e.track);
      pc.onconnectionstatechange = () => this._emit("subscriber_state", { state: pc.connectionState });
      this.subscriber = pc;
    }
    const pc = this.subscriber;
    this.offered = new Map(msg.tracks.map((t) => [t.mid, t]));
    // Tracks no longer offered have ended (the server also sent RTCP BYE).
    for (const [mid, r] of this.remote) {
      const still = this.offered.get(mid);
      if (!still || still.trackId !== r.trackId) {
        this.remote.delete(mid);
        this._emit("track_ended", r);
      }
    }
    await pc.setRemoteDescription({ type: "offer", sdp: msg.sdp });
    await pc.setLocalDescription(await pc.createAnswer());
    await this.request("subscriber_answer", { revision: msg.revision, sdp: pc.localDescription.sdp });
    // Transceivers whose track arrived before this offer named it.
    for (const t of pc.getTransceivers()) {
      if (t.mid && t.receiver.track && !this.remote.has(t.mid) && this.offered.has(t.mid)) {
        this._remoteTrack(t, t.receiver.track);
      }
    }
  }

  /** @private */
  _remoteTrack(transceiver, track) {
    const entry = this.offered.get(transceiver.mid);
    if (!entry || this.remote.get(transceiver.mid)?.trackId === entry.trackId) return;
    /** @type {RemoteTrack} */
    const remote = { track, trackId: entry.trackId, participantId: entry.participantId, source: entry.source, mid: transceiver.mid };
    this.remote.set(transceiver.mid, remote);
    this._emit("track", remote);
  }

  /** The remote tracks being received now. @returns {RemoteTrack[]} */
  get remoteTracks() {
    return [...this.remote.values()];
  }

  /**
   * Subscribes to a track with a quality (when joined with autoSubscribe false, or after unsubscribe).
   * @param {string} trackId
   * @param {Quality} [quality]
   */
  subscribe(trackId, quality = "high") {
    return this.request("subscribe", { trackId, quality });
  }

  /** @param {string} trackId */
  unsubscribe(trackId) {
    return this.request("unsubscribe", { trackId });
  }

  // ---------------------------------------------------------------- host controls and requests

  /** Asks the hosts for permission to share the screen; resolves with the request id. */
  async requestShare() {
    return (await this.request("request_share")).requestId;
  }

  /** Hosts and cohosts: grants or denies a pending share request. */
  answerShareRequest(requestId, grant) {
    return this.request("answer_share_request", { requestId, grant });
  }

  /** Hosts: locks or unlocks screen sharing for the room. */
  setShareLock(locked) {
    return this.request("set_share_lock", { locked });
  }

  /** Hosts: changes the room's share policy (shareMode, maxConcurrentShares, whoCanShare, ...). */
  setSharePolicy(policy) {
    return this.request("set_share_policy", policy);
  }

  /** Hosts and cohosts stop anyone's share; others their own. */
  stopShare(shareId, reason) {
    return this.request("stop_share", { shareId, ...(reason ? { reason } : {}) });
  }

  /** Hosts and cohosts: grants or revokes a participant's permission for a source. */
  setPermission(participantId, granted, source = "screen_share") {
    return this.request("set_permission", { participantId, source, granted });
  }

  muteParticipant(trackId) {
    return this.request("mute_participant", { trackId });
  }

  removeParticipant(participantId) {
    return this.request("remove_participant", { participantId });
  }

  endRoom() {
    return this.request("end_room");
  }

  /** True when this participant is a host or cohost. */
  get isModerator() {
    return this.me?.role === "host" || this.me?.role === "cohost";
  }
}
