// Atrium JavaScript client: an ES module with no dependencies and no build step.
// It speaks the signaling protocol of docs/protocol.md over WebSocket and drives two
// RTCPeerConnections (publisher and subscriber, section 14 of that document).
//
//   import { Room } from "/sdk/atrium.js";
//   const room = await Room.connect("ws://127.0.0.1:8800/v1/signal", token, { name: "Ada" });
//   room.addEventListener("track", (e) => attach(e.detail.track, e.detail.participantId));
//   await room.setCameraEnabled(true);             // publishes the camera; false turns it off (muted)
//   await room.setMicrophoneEnabled(true);
//   const share = await room.startScreenShare();   // getDisplayMedia, contentHint "detail"
//   await room.stopScreenShare();
//   await room.setQuality(remote.trackId, "low");  // the simulcast layer a received track comes in
//   await room.setViewport(remote.trackId, 640, 360); // the size it is shown at, in device pixels
//
// Simulcast (docs/protocol.md, `publish`, `layers_wanted`): the camera goes out as three encodings,
// rids "q", "h" and "f" at a quarter, half and full resolution (CAMERA_ENCODINGS), a screen share as
// two at full resolution, "l" at 5 frames per second and "f" at the capture's rate (SCREEN_ENCODINGS,
// with degradationPreference "maintain-resolution": text stays sharp and the frame rate gives way).
// The `publish` request lists them bottom first as `layers`, with their sizes. The server pushes
// `layers_wanted` with the rids some viewer needs; the client turns the other encodings off
// (`RTCRtpSender.setParameters`, `active`) and on again when they are wanted again. A server that
// declines simulcast in its answer gets one encoding, set to the top layer's resolution and bitrate.
// `{simulcast: false}` (in `Room.connect`'s options, or per track) publishes one encoding as before.
//
// Browser interop notes (Chromium, max-bundle): every track is announced with `publish` before its
// transceiver is offered, so the server's refusals never produce an answer without a BUNDLE group; a
// transceiver whose track ended stays idle for the next track of its kind instead of being stopped
// (see _endLocal); and the server keeps every section of the subscriber connection in its BUNDLE group
// (inactive once its track ended). Each keeps the connection on one ICE/DTLS transport.
//
// Errors (rejected promises and `error` events) are AtriumError instances whose `code` is the
// protocol's error code (docs/protocol.md section 10), e.g. `share_locked`; the client adds
// `timeout`, `disconnected`, `connection_failed`, `capture_denied`, `capture_failed` and
// `layers_failed` (the browser refused to turn a simulcast encoding on or off).

/** @typedef {"camera"|"microphone"|"screen_share"|"screen_share_audio"} Source */
/** @typedef {"high"|"medium"|"low"} Quality */

/**
 * One simulcast encoding as `addTransceiver`'s `sendEncodings` takes it (bottom layer first).
 * @typedef {object} Encoding
 * @property {string} rid
 * @property {number} scaleResolutionDownBy
 * @property {number} maxBitrate           bits per second
 * @property {number} [maxFramerate]
 */

/**
 * Publishing options of one track.
 * @typedef {object} PublishOptions
 * @property {boolean} [simulcast]         video only; default: the room's `simulcast` option, else true
 * @property {Encoding[]} [encodings]      replaces the source's default encodings (bottom first)
 * @property {"vp8"|"vp9"|"h264"|"av1"} [codec]  video only: the one codec offered (default: the
 *                                         browser's order; VP8 in an end-to-end encrypted room)
 * @property {string} [scalabilityMode]    video only: one SVC encoding (VP9, AV1), e.g. "L3T3_KEY",
 *                                         instead of simulcast; the server picks each viewer's layers
 */

/**
 * @typedef {object} RemoteTrack
 * @property {MediaStreamTrack} track      the received track
 * @property {string} trackId              the server's track id (`tr_...`)
 * @property {string} participantId        its publisher
 * @property {Source} source
 * @property {string} mid                  the subscriber connection's transceiver
 * @property {string} [pausedReason]       set while the server does not forward it to us (`bandwidth`:
 *                                         our link has no room for it; `track_paused`/`track_resumed`)
 */

/**
 * @typedef {object} LocalTrack
 * @property {string} trackId
 * @property {Source} source
 * @property {MediaStreamTrack} track
 * @property {string} [shareId]            for a screen share
 * @property {boolean} [muted]             muted (a camera turned off sends nothing; a microphone silence)
 */

export const PROTOCOL = 1;

/** An error carrying the protocol's code (docs/protocol.md section 10), e.g. `share_locked`. */
export class AtriumError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = "AtriumError";
    /** @type {string} the protocol's error code */
    this.code = code;
    /** @type {string} the server's message, for people (branch on `code`, never on this) */
    this.description = message;
  }
}

/**
 * Runs a capture (getUserMedia, getDisplayMedia) and turns its failure into an AtriumError:
 * `capture_denied` (the person or the browser refused, or the picker was cancelled) or `capture_failed`.
 * @param {() => Promise<MediaStream>} fn
 */
async function capture(fn) {
  try {
    return await fn();
  } catch (e) {
    const denied = e && (e.name === "NotAllowedError" || e.name === "SecurityError" || e.name === "AbortError");
    const err = new AtriumError(denied ? "capture_denied" : "capture_failed", `${e?.name ?? "Error"}: ${e?.message ?? e}`);
    err.cause = e;
    throw err;
  }
}

/**
 * The mid of each media section of an SDP, by the MediaStreamTrack id of its a=msid line.
 * @param {string} sdp
 * @returns {Map<string, string>}
 */
function midsByTrack(sdp) {
  const out = new Map();
  for (const { mid, text } of mediaSections(sdp)) {
    const msid = /\na=msid:\S+ (\S+)/.exec(text)?.[1];
    if (mid && msid) out.set(msid, mid);
  }
  return out;
}

/**
 * The media sections of an SDP: each one's kind (`audio`, `video`, ...), mid, and text (from a newline).
 * @param {string} sdp
 * @returns {{kind: string|undefined, mid: string|undefined, text: string}[]}
 */
function mediaSections(sdp) {
  return sdp
    .split(/\r?\nm=/)
    .slice(1)
    .map((section) => {
      const text = "\n" + section;
      return { kind: /^(\w+)/.exec(section)?.[1], mid: /\na=mid:(\S+)/.exec(text)?.[1], text };
    });
}

/**
 * The codecs of one media section of an SDP by payload type (`{96: "video/VP8"}`): what a received
 * frame's payload type is, for a browser whose frames do not say their MIME type.
 * @param {string} sdp @param {string} mid
 * @returns {Record<number, string>}
 */
function codecsOf(sdp, mid) {
  const out = {};
  const section = mediaSections(sdp).find((s) => s.mid === mid);
  for (const m of section?.text.matchAll(/\na=rtpmap:(\d+) ([^/\s]+)\//g) ?? []) {
    out[Number(m[1])] = `${section.kind}/${m[2]}`;
  }
  return out;
}

/**
 * The camera's simulcast encodings, bottom first: 320x180, 640x360 and 1280x720 from a 720p capture.
 * The bitrates are the ceilings of the usual 180p/360p/720p ladders.
 * @type {readonly Encoding[]}
 */
export const CAMERA_ENCODINGS = Object.freeze([
  { rid: "q", scaleResolutionDownBy: 4, maxBitrate: 150_000 },
  { rid: "h", scaleResolutionDownBy: 2, maxBitrate: 500_000 },
  { rid: "f", scaleResolutionDownBy: 1, maxBitrate: 1_500_000 },
]);

/**
 * A screen share's simulcast encodings, bottom first, both at full resolution (a scaled-down share is
 * unreadable): a slow one for viewers on a poor link and the full frame rate (Chrome's screen-share
 * "conference mode" does the same). The top one states its rate: with it unset, Chromium sends
 * both at the 5 frames per second of the bottom one.
 * @type {readonly Encoding[]}
 */
export const SCREEN_ENCODINGS = Object.freeze([
  { rid: "l", scaleResolutionDownBy: 1, maxFramerate: 5, maxBitrate: 500_000 },
  { rid: "f", scaleResolutionDownBy: 1, maxFramerate: 30, maxBitrate: 2_500_000 },
]);

/** The data topic of end-to-end key rotation between pages (docs/e2ee.md). */
const E2EE_TOPIC = "atrium.e2ee";
/** Wrapped secrets per `keys` message: about 125 bytes each, well under a data message's 16 KiB. */
const WRAPS_PER_MESSAGE = 60;
/** A rotation message refused by the data rate limit is sent again after a second, this many times. */
const RATE_LIMITED_RETRIES = 10;
/** Key indexes run from 1 to 2^32 (docs/e2ee.md). */
const MAX_KEY_INDEX = 2 ** 32;

/** The qualities `setQuality` accepts. */
const QUALITIES = new Set(["low", "medium", "high"]);
/** The largest viewport dimension `setViewport` sends (docs/protocol.md `set_viewport`). */
const MAX_VIEWPORT = 16384;

/**
 * The simulcast encodings of a track, or null for one plain encoding (audio, simulcast off).
 * @param {MediaStreamTrack} track @param {Source} source @param {PublishOptions} options @param {boolean} roomDefault
 * @returns {Encoding[]|null}
 */
function simulcastEncodings(track, source, options, roomDefault) {
  if (track.kind === "video" && options.scalabilityMode) return null;
  if (track.kind !== "video" || !(options.simulcast ?? roomDefault)) return null;
  const table = options.encodings ?? (source === "screen_share" ? SCREEN_ENCODINGS : CAMERA_ENCODINGS);
  return table.length > 1 ? table.map((e) => ({ ...e })) : null;
}

/**
 * The `layers` of a `publish` request: each encoding's rid and the size it sends, the capture's size
 * divided by its scale (rounded down, as the encoder does). Sizes are 0 when the track does not say.
 * @param {Encoding[]} encodings @param {MediaTrackSettings} settings
 */
function layersOf(encodings, settings) {
  const w = settings.width || 0;
  const h = settings.height || 0;
  return encodings.map((e) => {
    const scale = Math.max(1, e.scaleResolutionDownBy || 1);
    return { rid: e.rid, width: Math.floor(w / scale), height: Math.floor(h / scale) };
  });
}

/** The AtriumError of a refused RTCRtpSender.setParameters. */
/** The video codecs `publishTrack`'s `codec` option names, by their MIME type. */
const CODECS = new Map([
  ["vp8", "video/VP8"],
  ["vp9", "video/VP9"],
  ["h264", "video/H264"],
  ["av1", "video/AV1"],
]);

/** The MIME type of a `codec` option, or an AtriumError for a codec this browser cannot send. */
function codecOf(name) {
  const mimeType = CODECS.get(String(name).toLowerCase());
  if (!mimeType) throw new AtriumError("invalid_codec", `codec: expected one of ${[...CODECS.keys()].join(", ")}`);
  const caps = typeof RTCRtpSender.getCapabilities === "function" ? RTCRtpSender.getCapabilities("video") : null;
  if (caps && !caps.codecs.some((c) => c.mimeType.toLowerCase() === mimeType.toLowerCase())) {
    throw new AtriumError("unsupported_codec", `this browser cannot send ${mimeType}`);
  }
  return mimeType;
}

/** Offers only `mimeType` on a video transceiver (with its retransmission and redundancy codecs). */
function preferCodec(transceiver, mimeType) {
  const caps = typeof RTCRtpSender.getCapabilities === "function" ? RTCRtpSender.getCapabilities("video") : null;
  if (!caps) return;
  const wanted = mimeType.toLowerCase();
  const codecs = caps.codecs.filter((c) => {
    const m = c.mimeType.toLowerCase();
    return m === wanted || m.endsWith("/rtx") || m.endsWith("/red") || m.endsWith("/ulpfec");
  });
  try {
    transceiver.setCodecPreferences(codecs);
  } catch {
    /* the browser keeps its own order */
  }
}

function layersError(e) {
  const err = new AtriumError("layers_failed", `setParameters: ${e?.name ?? "Error"}: ${e?.message ?? e}`);
  err.cause = e;
  return err;
}

/** A stable key of an encoding layout, so that an idle transceiver is reused only for the same one. */
function layoutKey(encodings) {
  return encodings ? encodings.map((e) => e.rid).join(",") : "";
}

const RTC_CONFIG = { bundlePolicy: "max-bundle", rtcpMuxPolicy: "require", iceServers: [] };
const PING_INTERVAL_MS = 10000;
const REQUEST_TIMEOUT_MS = 15000;
/**
 * Close codes after which the client does not try to resume (docs/protocol.md section 11): failed
 * authentication, left, replaced or resumed elsewhere, removed, room ended. After any other code
 * (1000, 1001, 1006, 1007, 1009, 4008, 4009, 4010, 4029, ...) it resumes within the window.
 */
const FINAL_CLOSES = new Set([4001, 4003, 4100, 4101, 4102, 4103]);
/** Authentication errors: a resume with the same token cannot succeed. */
const AUTH_ERRORS = new Set([
  "missing_token", "malformed_token", "unsupported_algorithm", "unknown_key", "bad_signature",
  "token_expired", "token_not_yet_valid", "missing_grant", "wrong_room",
]);

/**
 * One participant's session in a room. Every message the server pushes is dispatched as a
 * `CustomEvent` of the same name with the message as `detail` (`participant_joined`,
 * `share_stopped`, `active_speakers`, ...). The client adds:
 *   `track` (detail: RemoteTrack), `track_ended` (detail: RemoteTrack),
 *   `local_track_ended` (detail: LocalTrack; e.g. the person stopped the capture in the browser),
 *   `reconnecting` (detail: {code, reason, attempt}), `reconnected`, `disconnected` (detail: {code, reason}),
 *   `rejoined` (detail: {participant}; the resume failed, e.g. the room's node left a cluster and the
 *   socket closed with 4104 `moved`: the client joined again as a new participant and publishes its
 *   live captures again),
 *   `republished` (detail: {tracks: LocalTrack[]}; the publisher connection failed, e.g. the node that
 *   received it left a cluster: the client withdrew its tracks and published its live captures again
 *   on a new connection, under new track ids),
 *   `state` (the room state changed: participants, tracks, shares, requests, policy, local tracks),
 *   `error` (detail: AtriumError; an error the server pushed without a request, e.g. `rate_limited`,
 *   a failed subscriber negotiation, or `layers_failed` when the browser refused to turn a simulcast
 *   encoding on or off).
 * `layers_wanted` is acted on (the encodings not listed are turned off) before it is dispatched.
 * `track_paused` / `track_resumed` (the server stopped or restarted forwarding one of our received tracks,
 * `reason` `bandwidth`) set and clear the RemoteTrack's `pausedReason` before they are dispatched: a
 * page may show the tile as paused rather than frozen.
 * A pushed `error` message is dispatched only as `error` (with an AtriumError as detail).
 */
export class Room extends EventTarget {
  /**
   * Opens the WebSocket, authenticates and joins.
   * @param {string} url      `ws(s)://HOST:PORT/v1/signal`
   * @param {string} token    a participant token
   * @param {{name?: string, metadata?: string, autoSubscribe?: boolean, simulcast?: boolean,
   *   iceTransportPolicy?: RTCIceTransportPolicy, dataChannels?: boolean}} [options]
   *   `simulcast` (default true): publish cameras and screen shares as simulcast (see the file's header);
   *   `iceTransportPolicy` ("all" by default): "relay" sends media only through the TURN servers the
   *   server hands out at join and resume (`iceServers`, docs/protocol.md);
   *   `dataChannels` (default true): data channels on the subscriber connection, for lossy data (the
   *   pointer over a share, `sendPointer`) and `sendData(..., {lossy: true})`;
   *   `e2ee` ({passphrase} or {key: ArrayBuffer}): end-to-end encryption (docs/e2ee.md): every frame
   *   sent is encrypted (SFrame) and every frame received decrypted in a worker, with keys the server
   *   never sees; a frame that does not decrypt is dropped and reported as `e2ee_error` (detail:
   *   {participantId, trackId, kind}). A room with `e2ee` refuses to connect without it (`e2ee_required`).
   *   With `rotateOnLeave: true` the pages roll to a new random key whenever a member leaves, handed to
   *   the others over data messages (topic `atrium.e2ee`), wrapped per member; each roll is dispatched
   *   as `e2ee_key` (detail: {index}) once this page sends with it. Every page of the room needs it.
   */
  static async connect(url, token, options = {}) {
    const room = new Room(url, token, options);
    try {
      await room._open();
      const snapshot = await room.request("join", {
        protocol: PROTOCOL,
        ...(options.name ? { name: options.name } : {}),
        ...(options.metadata ? { metadata: options.metadata } : {}),
        ...(options.autoSubscribe === false ? { autoSubscribe: false } : {}),
        ...(options.dataChannels === false ? {} : { dataChannels: true }),
      });
      room._applySnapshot(snapshot);
      if (snapshot.room.e2ee && !options.e2ee) {
        throw new AtriumError("e2ee_required", "the room is end-to-end encrypted: connect with the e2ee option");
      }
      // A client asked to encrypt never sends in clear on the server's word: a room the server says
      // is not encrypted is refused (the app may connect again without the option).
      if (options.e2ee && !snapshot.room.e2ee) {
        throw new AtriumError("e2ee_mismatch", "the server says the room is not end-to-end encrypted");
      }
      if (options.e2ee && snapshot.room.e2ee) {
        await room._startE2EE();
        if (options.e2ee.rotateOnLeave) await room._startRotation();
      }
    } catch (e) {
      room.closed = true;
      room._shutdown();
      room.ws?.close(1000);
      throw e;
    }
    return room;
  }

  /** @private */
  constructor(url, token, options) {
    super();
    this.url = url;
    this.token = token;
    this.options = options;
    /** TURN servers with time-limited credentials, from the last join or resume result. */
    this.iceServers = [];
    /** @type {WebSocket|null} */
    this.ws = null;
    this.nextId = 1;
    /** @type {Map<number, {resolve: Function, reject: Function, timer: any}>} */
    this.pending = new Map();
    /** The local participant as the server describes it. */
    this.me = null;
    /** @type {Map<string, any>} participants by id (others) */
    this.participants = new Map();
    /** @type {Map<string, number>} everyone (this page too) by the order they joined: the first leads
     * key rotation */
    this.joinRank = new Map();
    /** @type {Map<string, any>} running and paused shares by id, oldest first */
    this.shares = new Map();
    /** @type {Map<string, any>} pending share requests by id (all of them for moderators, else your own) */
    this.requests = new Map();
    /** true while the socket is down and the client tries to resume */
    this.reconnecting = false;
    this.roomInfo = null;
    this.resumeToken = null;
    this.closed = false;
    /** @type {Map<string, LocalTrack>} by track id */
    this.localTracks = new Map();
    /** @type {Map<string, LocalTrack>} captures whose media the server lost (`connection_lost`), to publish again */
    this.lostTracks = new Map();
    /** @type {RTCPeerConnection|null} */
    this.publisher = null;
    /** @type {Map<string, {transceiver: RTCRtpTransceiver, source: Source, trackId?: string}>} by mid */
    this.publishMids = new Map();
    /** @type {RTCRtpTransceiver[]} publisher transceivers whose track ended, to reuse */
    this.idle = [];
    /** @type {WeakMap<RTCRtpTransceiver, string>} each publisher transceiver's encoding layout (layoutKey) */
    this.layouts = new WeakMap();
    /** @type {Map<string, string[]>} the latest `layers_wanted` rids by our track id */
    this.wantedLayers = new Map();
    /** @type {Map<string, Promise<void>>} setParameters calls of one sender, in order, by our track id */
    this.senderChains = new Map();
    /** false once the server answered that it does not know `set_viewport` */
    this.viewportSupported = true;
    this.negotiation = Promise.resolve();
    /** @type {RTCPeerConnection|null} */
    this.subscriber = null;
    /** @type {Map<string, RemoteTrack>} live remote tracks by mid */
    this.remote = new Map();
    /** offer entries by mid, from the latest subscriber offer */
    this.offered = new Map();
    this.subscriberChain = Promise.resolve();
    this.pingTimer = null;
    /** The room's last chat messages to everyone, oldest first (the snapshot's, then each `data` on `chat`). */
    this.chat = [];
    /** @type {{reliable: RTCDataChannel|null, lossy: RTCDataChannel|null}} on the subscriber connection */
    this.channels = { reliable: null, lossy: null };
    /** The pointer position waiting for its slot (`sendPointer`: at most 30 a second). */
    this.pointerPending = null;
    this.pointerTimer = null;
    this.pointerSent = 0;
  }

  // ---------------------------------------------------------------- signaling

  /** @private Opens the socket and waits for `welcome`. */
  _open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${this.url}?access_token=${encodeURIComponent(this.token)}`);
      this.ws = ws;
      /** "opening" until `welcome`, then "open"; "failed" when the opening failed */
      let phase = "opening";
      const fail = (e) => {
        if (phase !== "opening") return;
        phase = "failed";
        clearTimeout(timer);
        reject(e);
        try {
          ws.close();
        } catch {
          /* closing anyway */
        }
      };
      const timer = setTimeout(
        () => fail(new AtriumError("connection_failed", "no welcome from the server")),
        REQUEST_TIMEOUT_MS,
      );
      ws.onmessage = (ev) => {
        if (this.ws !== ws || phase === "failed") return;
        let msg;
        try {
          msg = JSON.parse(ev.data);
        } catch {
          return;
        }
        if (phase === "opening") {
          if (msg.type === "welcome") {
            phase = "open";
            clearTimeout(timer);
            this.welcome = msg;
            resolve(msg);
          } else if (msg.type === "error") {
            fail(new AtriumError(msg.error.code, msg.error.message));
          }
          return;
        }
        this._receive(msg);
      };
      ws.onclose = (ev) => {
        if (phase === "opening") {
          const e = new AtriumError(ev.reason || "connection_failed", `the connection closed (${ev.code} ${ev.reason})`);
          e.closeCode = ev.code;
          fail(e);
        } else if (phase === "open" && this.ws === ws) {
          this._closed(ev.code, ev.reason);
        }
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
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(
        new AtriumError("disconnected", this.reconnecting ? "reconnecting; try again shortly" : "not connected"),
      );
    }
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
    if (msg.type === "result") return; // the answer to a ping sent without id
    if (msg.type === "data" && msg.topic === E2EE_TOPIC && this.rotation) {
      this._rotationMessage(msg);
      return;
    }
    if (msg.type === "participant_left" && this.rotation) this._memberLeft(msg.participantId);
    if (msg.type === "data" && msg.topic === "chat" && msg.to === null) {
      this.chat.push(msg);
      if (this.chat.length > 1000) this.chat.shift();
    }
    if (msg.type === "error") {
      this._emit("error", new AtriumError(msg.error?.code ?? "error", msg.error?.message ?? ""));
      return;
    }
    this._track(msg);
    if (msg.type === "layers_wanted") this._layersWanted(msg);
    if (msg.type === "media_state" && msg.target === "publisher" && msg.state === "failed") this._republish();
    if (msg.type === "subscriber_offer") {
      this.subscriberChain = this.subscriberChain.then(() => this._answerSubscriber(msg)).catch((e) =>
        this._emit("error", e),
      );
    }
    this._emit(msg.type, msg);
  }

  /** @private The participant (another one, or this one) with that id. */
  _participant(id) {
    return id === this.me?.id ? this.me : this.participants.get(id);
  }

  /** @private Keeps participants, tracks, shares and requests current from the events. */
  _track(msg) {
    switch (msg.type) {
      case "participant_joined":
        this.participants.set(msg.participant.id, { ...msg.participant, tracks: [] });
        if (!this.joinRank.has(msg.participant.id)) this.joinRank.set(msg.participant.id, this.joinRank.size);
        break;
      case "participant_updated": {
        // The event's `tracks` is always []: keep the tracks known from track events.
        const known = this._participant(msg.participant.id);
        const merged = { ...msg.participant, tracks: known?.tracks ?? [] };
        if (msg.participant.id === this.me?.id) this.me = merged;
        else this.participants.set(msg.participant.id, merged);
        break;
      }
      case "participant_left":
        this.participants.delete(msg.participantId);
        for (const [id, r] of this.requests) if (r.participantId === msg.participantId) this.requests.delete(id);
        break;
      case "permissions_changed": {
        const p = this._participant(msg.participantId);
        if (p) p.permissions = msg.permissions;
        break;
      }
      case "attributes_changed": {
        const p = this._participant(msg.participantId);
        if (p) p.attributes = msg.attributes;
        break;
      }
      case "track_published": {
        const p = this._participant(msg.track.participantId);
        if (p) p.tracks = [...p.tracks.filter((t) => t.id !== msg.track.id), msg.track];
        break;
      }
      case "track_unpublished": {
        const p = this._participant(msg.participantId);
        if (p) p.tracks = p.tracks.filter((t) => t.id !== msg.trackId);
        if (!this.localTracks.has(msg.trackId)) break;
        if (msg.reason === "connection_lost") this._loseLocal(msg.trackId);
        else this._endLocal(msg.trackId, false);
        break;
      }
      case "track_paused":
      case "track_resumed":
        for (const r of this.remote.values()) {
          if (r.trackId !== msg.trackId) continue;
          if (msg.type === "track_paused") r.pausedReason = msg.reason;
          else delete r.pausedReason;
        }
        break;
      case "track_muted": {
        const t = this._participant(msg.participantId)?.tracks.find((x) => x.id === msg.trackId);
        if (t) t.muted = msg.muted;
        // A moderator muted one of ours (`mute_participant`): it stops sending, as our own mute does;
        // only we can turn it on again (setMicrophoneEnabled, setCameraEnabled).
        const local = this.localTracks.get(msg.trackId);
        if (local && msg.muted && !local.muted) {
          local.muted = true;
          local.track.enabled = false;
        }
        break;
      }
      case "share_started":
      case "share_paused":
      case "share_resumed":
        this.shares.set(msg.share.id, msg.share);
        break;
      case "share_stopped":
        this.shares.delete(msg.share.id);
        for (const t of [...this.localTracks.values()]) {
          if (t.shareId !== msg.share.id) continue;
          if (msg.reason === "connection_lost") this._loseLocal(t.trackId);
          else this._endLocal(t.trackId, false);
        }
        break;
      case "share_lock_changed":
        if (this.roomInfo) this.roomInfo.sharePolicy = { ...this.roomInfo.sharePolicy, shareLocked: msg.locked };
        break;
      case "share_policy_changed":
        if (this.roomInfo) this.roomInfo.sharePolicy = msg.sharePolicy;
        break;
      case "share_requested":
        this.requests.set(msg.request.id, msg.request);
        break;
      case "share_request_resolved":
        this.requests.delete(msg.request.id);
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
    // Fresh TURN credentials at every join and resume; connections already open take them for their
    // next ICE gathering (a restart).
    this.iceServers = Array.isArray(s.iceServers) ? s.iceServers : [];
    for (const pc of [this.publisher, this.subscriber]) {
      if (!pc) continue;
      try {
        pc.setConfiguration({ ...pc.getConfiguration(), iceServers: this.iceServers });
      } catch {
        /* a closed connection */
      }
    }
    this.participants = new Map(s.participants.map((p) => [p.id, p]));
    // The snapshot lists the others in the order they joined. At a join this page comes last; at a
    // resume it keeps its place, and those who joined meanwhile come after everyone known.
    if (!this.joinRank.has(this.me.id)) this.joinRank.clear();
    for (const p of [...s.participants, this.me]) if (!this.joinRank.has(p.id)) this.joinRank.set(p.id, this.joinRank.size);
    this.shares = new Map(s.shares.map((sh) => [sh.id, sh]));
    this.subscriptions = s.subscriptions || [];
    this.chat = Array.isArray(s.chat) ? [...s.chat] : [];
    // Moderators get every pending request; others keep their own (the snapshot does not list it).
    if (s.requests) this.requests = new Map(s.requests.map((r) => [r.id, r]));
    else for (const [id, r] of this.requests) if (r.participantId !== this.me.id) this.requests.delete(id);
    // After a resume: local tracks that ended meanwhile (a lock, a host, a revoked permission).
    const mine = new Set(this.me.tracks.map((t) => t.id));
    for (const t of [...this.localTracks.values()]) if (!mine.has(t.trackId)) this._endLocal(t.trackId, false);
    this._emit("state", { type: "snapshot" });
  }

  /** @private The configuration of both connections: the server's TURN servers, the chosen policy. */
  _rtcConfig() {
    const policy = this.options.iceTransportPolicy;
    return { ...RTC_CONFIG, iceServers: this.iceServers, ...(policy ? { iceTransportPolicy: policy } : {}) };
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
    if (this.reconnecting) return; // a socket opened by the resume loop closed: the loop goes on
    clearInterval(this.pingTimer);
    if (this.closed || FINAL_CLOSES.has(code) || !this.resumeToken) {
      this._shutdown();
      this._emit("disconnected", { code, reason });
      return;
    }
    this.reconnecting = true;
    let final = { code, reason: "resume failed" };
    for (let attempt = 0; attempt < 8 && !this.closed; attempt++) {
      this._emit("reconnecting", { code, reason, attempt });
      await new Promise((r) => setTimeout(r, Math.min(500 * 2 ** attempt, 4000)));
      if (this.closed) break;
      try {
        await this._open();
        const s = await this.request("resume", { protocol: PROTOCOL, resumeToken: this.resumeToken });
        this.reconnecting = false;
        this._applySnapshot(s);
        this._rotationResumed();
        this._emit("reconnected", {});
        return;
      } catch (e) {
        if (e instanceof AtriumError && e.code === "resume_failed") {
          // The session is gone (its node left the cluster, close 4104 `moved`, or the window passed):
          // join again on this socket as a new participant and publish the same captures again.
          if (await this._rejoin()) return;
          final = { code, reason: "resume_failed" };
          break;
        }
        if (e instanceof AtriumError && (AUTH_ERRORS.has(e.code) || FINAL_CLOSES.has(Number(e.closeCode)))) {
          final = { code: Number(e.closeCode) || code, reason: e.code };
          break;
        }
      }
    }
    this.reconnecting = false;
    this._shutdown();
    try {
      this.ws?.close(1000);
    } catch {
      /* already closed */
    }
    this._emit("disconnected", final);
  }

  /**
   * @private After a failed resume: a fresh `join` on the open socket, then every live capture
   * published again (in the order it was first published). Dispatches `rejoined` (detail: the new
   * participant). Returns false when the join is refused (the caller gives up and disconnects).
   */
  async _rejoin() {
    const captures = [...this.localTracks.values(), ...this.lostTracks.values()].filter(
      (t) => t.track.readyState === "live",
    );
    this.lostTracks.clear();
    // The old peer connections belonged to the lost session; the captures keep running.
    this.publisher?.close();
    this.publisher = null;
    this.publishMids.clear();
    this.idle = [];
    this.layouts = new WeakMap();
    this.wantedLayers.clear();
    this.senderChains.clear();
    this.localTracks.clear();
    // The subscriber connection is kept: on a node that outlived the room's (an edge of a room spread
    // over nodes), the room's new owner takes it over from the last offer it applied; otherwise its
    // first offer says `reset` and a new connection replaces it.
    const keptOffer =
      this.subscriber?.connectionState === "connected" ? this.subscriber.remoteDescription?.sdp : undefined;
    if (!keptOffer) {
      this.subscriber?.close();
      this.subscriber = null;
    }
    for (const r of this.remote.values()) this._emit("track_ended", r);
    this.remote.clear();
    this.offered.clear();
    this.negotiation = Promise.resolve();
    this.subscriberChain = Promise.resolve();
    let snapshot;
    try {
      snapshot = await this.request("join", {
        protocol: PROTOCOL,
        ...(this.options.name ? { name: this.options.name } : {}),
        ...(this.options.metadata ? { metadata: this.options.metadata } : {}),
        ...(this.options.autoSubscribe === false ? { autoSubscribe: false } : {}),
        ...(this.options.dataChannels === false ? {} : { dataChannels: true }),
        ...(keptOffer ? { subscriberOffer: keptOffer } : {}),
      });
    } catch {
      for (const t of captures) t.track.stop();
      return false;
    }
    this.reconnecting = false;
    this._applySnapshot(snapshot);
    this._emit("rejoined", { participant: this.me });
    // A new participant id: this page's key proven again under it, and the key in use handed to it.
    if (this.rotation) this._startRotation().catch((e) => this._emit("error", e));
    for (const t of captures) {
      try {
        await this.publishTrack(t.track, t.source);
      } catch (e) {
        this._emit("error", e);
      }
    }
    return true;
  }

  /**
   * @private The publisher connection failed (`media_state failed`: the node that received it left a
   * cluster, or the network went for a minute): its tracks are withdrawn and every live capture is
   * published again on a new connection, which the server places on a live node. Dispatches
   * `republished` (detail: {tracks}).
   */
  _republish() {
    if (this.closed || !this.publisher) return;
    const captures = [...this.localTracks.values(), ...this.lostTracks.values()].filter(
      (t) => t.track.readyState === "live",
    );
    this.lostTracks.clear();
    // Out of the table now: the server's track_unpublished for them must not stop the captures.
    for (const t of captures) this.localTracks.delete(t.trackId);
    for (const t of [...this.localTracks.keys()]) this._endLocal(t, false);
    this.publisher.close();
    this.publisher = null;
    this.publishMids.clear();
    this.idle = [];
    this.layouts = new WeakMap();
    this.senderChains.clear();
    for (const t of captures) this.wantedLayers.delete(t.trackId);
    this.negotiation = this.negotiation.then(() =>
      Promise.all(captures.map((t) => this.request("unpublish", { trackId: t.trackId }).catch(() => {}))),
    );
    Promise.all(
      captures.map((t) =>
        this.publishTrack(t.track, t.source).catch((e) => {
          this._emit("error", e);
          return null;
        }),
      ),
    ).then((tracks) => {
      this._emit("republished", { tracks: tracks.filter(Boolean) });
      this._emit("state", { type: "republished" });
    });
  }

  /**
   * @private The server unpublished a track of ours with `connection_lost` (the node that received it
   * left a cluster): the capture is kept, out of the table, until the publisher connection's
   * `media_state failed` publishes it again (`_republish`).
   */
  _loseLocal(trackId) {
    const local = this.localTracks.get(trackId);
    if (!local) return;
    this.localTracks.delete(trackId);
    this.wantedLayers.delete(trackId);
    this.lostTracks.set(trackId, local);
  }

  /**
   * @private The worker behind every frame transform (clients/js/e2ee-worker.js), keyed from the
   * passphrase (salted with the room id) or the app's key; resolves once it holds the key.
   */
  _startE2EE() {
    if (this.e2ee) return this.e2ee.ready;
    if (typeof RTCRtpScriptTransform === "undefined") {
      throw new AtriumError("e2ee_unsupported", "this browser has no RTCRtpScriptTransform");
    }
    const worker = new Worker(new URL("./e2ee-worker.js", import.meta.url), { name: "atrium-e2ee" });
    const ready = new Promise((resolve) => {
      worker.addEventListener("message", (e) => {
        if (e.data.type === "ready") resolve();
        if (e.data.type === "decrypt_failed") {
          const { participantId, trackId, kind } = e.data;
          this._emit("e2ee_error", { participantId, trackId, kind });
        }
      });
    });
    const o = this.options.e2ee;
    worker.postMessage(
      o.passphrase !== undefined
        ? { type: "passphrase", passphrase: String(o.passphrase), roomId: this.roomInfo.id }
        : { type: "key", key: o.key },
    );
    this.e2ee = { worker, ready, index: 0 };
    return ready;
  }

  /**
   * Rolls the room's end-to-end key (e.g. when someone leaves, with a key the app distributes by its
   * own end-to-end channel): frames sent from now on use `key` (raw bytes) under key index `index`
   * (1 to 255, a new one each time); frames of earlier indexes still decrypt, so every participant
   * can switch when the key reaches it, without a gap. With `{send: false}` the key is only added
   * for receiving (hand it to everyone first, then switch each sender). Resolves once the worker
   * holds it.
   * @param {ArrayBuffer|Uint8Array} key @param {number} index @param {{send?: boolean}} [options]
   */
  async setE2EEKey(key, index, options = {}) {
    if (!this.e2ee) throw new AtriumError("e2ee_off", "the room was not connected with end-to-end encryption");
    if (!Number.isInteger(index) || index < 1 || index > 255) throw new AtriumError("invalid_field", "index: 1 to 255");
    const raw = key instanceof Uint8Array ? key.slice().buffer : key;
    await this._workerCall(
      { type: "key", key: raw, index, send: options.send !== false },
      (m) => m.type === "ready" && m.index === index,
    );
  }

  /** @private Posts `message` to the e2ee worker; resolves with its first answer that `matches`. */
  _workerCall(message, matches) {
    const worker = this.e2ee.worker;
    return new Promise((resolve) => {
      const on = (e) => {
        if (!matches(e.data)) return;
        worker.removeEventListener("message", on);
        resolve(e.data);
      };
      worker.addEventListener("message", on);
      worker.postMessage(message);
    });
  }

  /** @private One call of the e2ee worker's rotation (`op`), resolving with its result. */
  async _rotationCall(op, fields = {}) {
    const id = ++this.rotation.calls;
    const answer = await this._workerCall(
      { type: "rotation", id, op, ...fields },
      (m) => m.type === "rotation" && m.id === id,
    );
    if (answer.error) throw new AtriumError("e2ee_failed", answer.error);
    return answer.result;
  }

  /**
   * @private Rotation when someone leaves (docs/e2ee.md): announces this page's proven public key to
   * the room; members answer with theirs. The member that joined first leads: it rolls the key when a
   * member leaves and hands the current one to newcomers. Called again after a rejoin (a new id).
   */
  async _startRotation() {
    // members: the ids whose public keys proved themselves; departed: ids that left (a replay of
    // their hello is not taken); `chain` orders the work, behind this page's own key; `outbox` the
    // messages sent.
    const old = this.rotation;
    const r = {
      calls: old?.calls ?? 0,
      members: new Set(),
      departed: old?.departed ?? new Set(),
      chain: null,
      waiting: null,
      outbox: old?.outbox ?? Promise.resolve(),
      seen: old?.seen ?? 0, // the highest key index a roll named
    };
    this.rotation = r;
    r.chain = this._rotationCall("hello", { me: this.me.id }).then((h) => {
      r.hello = h;
    });
    await r.chain;
    await this._rotationSend({ t: "hello", ...r.hello });
  }

  /**
   * @private A rotation message to some members (ids), or to the room, sent after every one before it;
   * one refused by the data rate limit, or while the socket is down, is sent again a second later.
   */
  _rotationSend(body, to = null) {
    const r = this.rotation;
    const payload = JSON.stringify(body);
    const send = async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.sendData(E2EE_TOPIC, payload, to ? { to } : {});
        } catch (e) {
          // Refused for the rate, or the socket is down for a resume: again a second later.
          const again = e instanceof AtriumError && ["data_rate_limited", "disconnected"].includes(e.code);
          if (!again || attempt >= RATE_LIMITED_RETRIES || this.closed) {
            if (!this.closed) this._emit("error", e);
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    };
    r.outbox = r.outbox.then(send);
    return r.outbox;
  }

  /** @private `keys` messages: the wrapped secret of `index` for each member (`wraps`, by id). */
  _keysMessages(index, wraps, send = false) {
    const ids = Object.keys(wraps);
    const out = [];
    for (let i = 0; i < ids.length; i += WRAPS_PER_MESSAGE) {
      const some = Object.fromEntries(ids.slice(i, i + WRAPS_PER_MESSAGE).map((id) => [id, wraps[id]]));
      out.push({ t: "keys", index, wraps: some, ...(send ? { send: true } : {}) });
    }
    return out;
  }

  /**
   * @private The member that leads the rotation: the one in the room that joined first, which every
   * member works out alike from the server's order, so two never roll at once.
   */
  _leader() {
    let first = this.me.id;
    for (const id of this.participants.keys()) {
      if (!this.rotation.departed.has(id) && (this.joinRank.get(id) ?? Infinity) < this.joinRank.get(first)) first = id;
    }
    return first;
  }

  /** @private Whether this page leads the rotation. */
  _leads() {
    return this._leader() === this.me.id;
  }

  /** @private After a resume (events meanwhile are not replayed): proven members gone from the room left. */
  _rotationResumed() {
    if (!this.rotation) return;
    for (const id of [...this.rotation.members]) if (!this.participants.has(id)) this._memberLeft(id);
  }

  /** @private A rotation message from another page. */
  _rotationMessage(msg) {
    const r = this.rotation;
    let body;
    try {
      body = JSON.parse(msg.payload);
    } catch {
      return;
    }
    const from = msg.from;
    // Only from a participant in the room now (the server relays, and could replay a leaver's).
    if (!body || typeof body !== "object" || !from || from === this.me.id) return;
    if (!this.participants.has(from) || r.departed.has(from)) return;
    // Acknowledgements are not queued: the roll they end is what the queue waits on.
    if (body.t === "ack") {
      if (r.waiting && r.waiting.index === body.index) r.waiting.acked(from);
      return;
    }
    r.chain = r.chain
      .then(async () => {
        switch (body.t) {
          case "hello": {
            if (!(await this._rotationCall("peer", { from, pub: body.pub, mac: body.mac }))) return;
            const known = r.members.has(from);
            r.members.add(from);
            // A newcomer's announcement (to the room): ours in answer, and the key in use, if rolled.
            if (msg.to === null && !known) {
              this._rotationSend({ t: "hello", ...r.hello }, [from]);
              if (this._leads()) {
                const current = await this._rotationCall("current", { to: from });
                if (current) {
                  const { index, ...wrap } = current;
                  for (const m of this._keysMessages(index, { [from]: wrap }, true)) this._rotationSend(m, [from]);
                }
              }
            }
            return;
          }
          case "keys": {
            // Only the leader's (two secrets under one index would split the room).
            if (from !== this._leader() || !Number.isSafeInteger(body.index) || body.index < 1) return;
            if (body.index > MAX_KEY_INDEX) return;
            r.seen = Math.max(r.seen, body.index);
            const wraps = body.wraps && typeof body.wraps === "object" ? body.wraps : {};
            const mine = Object.hasOwn(wraps, this.me.id) ? wraps[this.me.id] : null;
            if (!mine) return;
            const fields = { from, index: body.index, iv: mine.iv, data: mine.data, send: false };
            await this._rotationCall("unwrap", fields);
            // The key in use, handed to a newcomer: sent with at once (only ever to a newer index).
            if (body.send !== true) this._rotationSend({ t: "ack", index: body.index }, [from]);
            else if (await this._rotationCall("send", { index: body.index })) this._keyRolled(body.index);
            return;
          }
          case "send":
            if (!r.members.has(from) || from !== this._leader()) return;
            if (await this._rotationCall("send", { index: body.index })) this._keyRolled(body.index);
            return;
        }
      })
      .catch((e) => this._emit("error", e));
  }

  /**
   * @private A member left: the leader rolls the key. The new one goes to every member first, for
   * receiving; once each has said it holds it (or after 5 s), everyone sends with it.
   */
  _memberLeft(id) {
    const r = this.rotation;
    r.departed.add(id);
    if (!r.members.delete(id)) return;
    this._rotationCall("forget", { peer: id }).catch(() => {});
    if (r.waiting) r.waiting.acked(id);
    if (!this._leads()) return;
    r.chain = r.chain
      .then(async () => {
        const { index, wraps } = await this._rotationCall("rotate", { to: [...r.members], above: r.seen });
        r.seen = Math.max(r.seen, index);
        const pending = new Set(Object.keys(wraps));
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, 5000);
          r.waiting = {
            index,
            acked: (member) => {
              pending.delete(member);
              if (pending.size === 0) {
                clearTimeout(timer);
                resolve();
              }
            },
          };
          if (pending.size === 0) r.waiting.acked(null);
          for (const m of this._keysMessages(index, wraps)) this._rotationSend(m);
        });
        r.waiting = null;
        await this._rotationSend({ t: "send", index });
        if (await this._rotationCall("send", { index })) this._keyRolled(index);
      })
      .catch((e) => this._emit("error", e));
  }

  /** @private This page sends with key `index` now (`e2ee.index`, the `e2ee_key` event). */
  _keyRolled(index) {
    this.e2ee.index = index;
    this._emit("e2ee_key", { index });
  }

  /** @private A frame transform of the e2ee worker: `encrypt` for a sender of ours, else `decrypt`. */
  _e2eeTransform(operation, kind, participant, trackId, codec = null, codecs = null) {
    const options = { operation, kind, participant, trackId, codec, codecs };
    return new RTCRtpScriptTransform(this.e2ee.worker, options);
  }

  /** @private */
  _shutdown() {
    this.closed = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.pointerTimer);
    for (const t of [...this.localTracks.values(), ...this.lostTracks.values()]) t.track.stop();
    this.localTracks.clear();
    this.lostTracks.clear();
    this.publisher?.close();
    this.subscriber?.close();
    for (const r of this.remote.values()) this._emit("track_ended", r);
    this.remote.clear();
  }

  /** Leaves the room and closes everything. */
  async leave() {
    if (this.closed) return;
    this.closed = true; // no resume from here on
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
   * Publishes the camera (getUserMedia), as three simulcast layers unless `options.simulcast` is false.
   * @param {MediaTrackConstraints|boolean} [constraints]
   * @param {PublishOptions} [options]
   * @returns {Promise<LocalTrack>}
   */
  async publishCamera(constraints = { width: 1280, height: 720 }, options = {}) {
    const stream = await capture(() => navigator.mediaDevices.getUserMedia({ video: constraints }));
    return this.publishTrack(stream.getVideoTracks()[0], "camera", options);
  }

  /**
   * Publishes the microphone (getUserMedia).
   * @param {MediaTrackConstraints|boolean} [constraints]
   * @returns {Promise<LocalTrack>}
   */
  async publishMicrophone(constraints = true) {
    const stream = await capture(() => navigator.mediaDevices.getUserMedia({ audio: constraints }));
    return this.publishTrack(stream.getAudioTracks()[0], "microphone");
  }

  /**
   * Starts a screen share (getDisplayMedia), with the shared tab's or system audio when the browser
   * offers it. `contentHint` defaults to "detail" (text stays sharp rather than smooth). The video goes
   * out as two full-resolution simulcast layers (5 fps and full rate) unless `options.simulcast` is false.
   * @param {{audio?: boolean, contentHint?: string, video?: MediaTrackConstraints|boolean} & PublishOptions} [options]
   * @returns {Promise<{shareId: string, video: LocalTrack, audio?: LocalTrack}>}
   */
  async startScreenShare(options = {}) {
    const stream = await capture(() =>
      navigator.mediaDevices.getDisplayMedia({ video: options.video ?? true, audio: options.audio ?? true }),
    );
    const [videoTrack] = stream.getVideoTracks();
    const [audioTrack] = stream.getAudioTracks();
    videoTrack.contentHint = options.contentHint ?? "detail";
    let video;
    try {
      video = await this.publishTrack(videoTrack, "screen_share", {
        ...(options.simulcast !== undefined ? { simulcast: options.simulcast } : {}),
        ...(options.encodings ? { encodings: options.encodings } : {}),
      });
    } catch (e) {
      stream.getTracks().forEach((t) => t.stop());
      throw e;
    }
    // The person stops the capture from the browser's own UI: the share stops with capture_ended.
    const ended = () => {
      if (this.localTracks.has(video.trackId)) this.stopScreenShare("capture_ended").catch((e) => this._emit("error", e));
    };
    videoTrack.addEventListener("ended", ended);
    if (videoTrack.readyState === "ended") ended();
    let audio;
    if (audioTrack) {
      try {
        audio = await this.publishTrack(audioTrack, "screen_share_audio");
      } catch (e) {
        audioTrack.stop();
        this._emit("error", e);
      }
    }
    return { shareId: video.shareId, video, audio };
  }

  /** The running screen share of this participant (its video LocalTrack), if any. */
  get myShare() {
    return this.localTrack("screen_share");
  }

  /**
   * This participant's published track of a source, if any.
   * @param {Source} source
   * @returns {LocalTrack|null}
   */
  localTrack(source) {
    for (const t of this.localTracks.values()) if (t.source === source) return t;
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
   * Publishes any local track as `source` over the publisher connection. A video track goes out as
   * simulcast (CAMERA_ENCODINGS, or SCREEN_ENCODINGS for a screen share) unless `options.simulcast` is
   * false or the room was connected with `simulcast: false`; `options.encodings` replaces the table.
   * @param {MediaStreamTrack} track
   * @param {Source} source
   * @param {PublishOptions} [options]
   * @returns {Promise<LocalTrack>}
   */
  publishTrack(track, source, options = {}) {
    const run = this.negotiation.then(async () => {
      if (this.closed) throw new AtriumError("disconnected", "the room is closed");
      // Announce the track first (`publish`): the server's refusals (share_locked, not_allowed,
      // share_in_progress, ...) come back as errors before any SDP. An offer whose every section the
      // server rejects gets an answer without a BUNDLE group, after which Chromium can make no further
      // offer on the connection ("max-bundle is used but no bundle group found").
      const s = track.getSettings ? track.getSettings() : {};
      // The codec: the one asked for; in an end-to-end encrypted room VP8 unless asked (docs/e2ee.md).
      const codec =
        track.kind !== "video" ? null : options.codec ? codecOf(options.codec) : this.e2ee ? "video/VP8" : null;
      const encodings = simulcastEncodings(track, source, options, this.options.simulcast !== false);
      const announced = await this.request("publish", {
        source,
        ...(s.width ? { width: s.width } : {}),
        ...(s.height ? { height: s.height } : {}),
        ...(encodings ? { layers: layersOf(encodings, s) } : {}),
      });
      const trackId = announced.track.id;
      if (!this.publisher) this._createPublisher();
      // An idle transceiver of the same kind and the same encodings (their number is fixed when it is
      // added) carries the new track (see _endLocal); else a new one.
      this.idle = this.idle.filter((t) => t.direction !== "stopped" && t.currentDirection !== "stopped");
      const svc = track.kind === "video" ? (options.scalabilityMode ?? null) : null;
      const layout = `${layoutKey(encodings)}|${svc ?? ""}|${codec ?? ""}`;
      const reuse = this.idle.findIndex(
        (t) => t.receiver.track.kind === track.kind && (this.layouts.get(t) ?? "") === layout,
      );
      let transceiver;
      if (reuse >= 0) {
        [transceiver] = this.idle.splice(reuse, 1);
        await transceiver.sender.replaceTrack(track);
      } else {
        transceiver = this.publisher.addTransceiver(track, {
          direction: "sendonly",
          streams: [new MediaStream([track])],
          ...(encodings ? { sendEncodings: encodings } : {}),
          ...(svc ? { sendEncodings: [{ scalabilityMode: svc }] } : {}),
        });
        this.layouts.set(transceiver, layout);
        if (codec) preferCodec(transceiver, codec);
        if (this.e2ee) {
          transceiver.sender.transform = this._e2eeTransform("encrypt", track.kind, this.me.id, trackId, codec);
        }
      }
      const added = { transceiver, track, trackId, mid: null };
      const withdraw = () => this.request("unpublish", { trackId }).catch(() => {});
      let result;
      try {
        result = await this._negotiatePublisher([added]);
      } catch (e) {
        this._dropTransceiver(transceiver);
        await withdraw();
        throw e;
      }
      const accepted = result.tracks.find((t) => t.mid === added.mid);
      if (!accepted) {
        const rejected = result.rejected.find((r) => r.mid === added.mid);
        this._dropTransceiver(transceiver); // the answer rejected it: the browser stopped it already
        await withdraw();
        throw new AtriumError(rejected?.code ?? "rejected", rejected?.message ?? "the server rejected the track");
      }
      /** @type {LocalTrack} */
      const local = { trackId, source, track, ...(accepted.shareId ? { shareId: accepted.shareId } : {}) };
      this.publishMids.set(added.mid, { transceiver, source, trackId });
      this.localTracks.set(trackId, local);
      this._configureSender(trackId, transceiver.sender, source, encodings);
      this._applyLayers(trackId);
      // The track may have ended while it was being bound (a lock, a host): nothing to keep then.
      if (!this.me?.tracks.some((t) => t.id === trackId)) this._endLocal(trackId, true);
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
    if (local) {
      local.track.enabled = !muted;
      local.muted = muted;
      this._emit("state", { type: "local_track_changed" });
    }
    await this.request("mute", { trackId, muted });
  }

  /**
   * Turns the camera off (the capture stops, the track stays published and muted, so turning it on
   * again needs no renegotiation) or on (a new capture, or a new track when none is published).
   * @param {boolean} enabled
   * @param {MediaTrackConstraints} [constraints]
   */
  async setCameraEnabled(enabled, constraints = { width: 1280, height: 720 }) {
    const local = this.localTrack("camera");
    if (!local) {
      if (enabled) await this.publishCamera(constraints);
      return;
    }
    const transceiver = this._transceiverOf(local.trackId);
    if (enabled) {
      if (local.track.readyState === "live" && !local.muted) return;
      const stream = await capture(() => navigator.mediaDevices.getUserMedia({ video: constraints }));
      const track = stream.getVideoTracks()[0];
      await transceiver?.sender.replaceTrack(track);
      local.track.stop();
      local.track = track;
      local.muted = false;
      this._emit("state", { type: "local_track_changed" });
      await this.request("mute", { trackId: local.trackId, muted: false });
    } else {
      local.muted = true;
      await transceiver?.sender.replaceTrack(null);
      local.track.stop();
      this._emit("state", { type: "local_track_changed" });
      await this.request("mute", { trackId: local.trackId, muted: true });
    }
  }

  /**
   * Turns the microphone on (publishing it the first time) or off (muted: it sends silence).
   * @param {boolean} enabled
   * @param {MediaTrackConstraints|boolean} [constraints]  for the first capture (e.g. a deviceId)
   */
  async setMicrophoneEnabled(enabled, constraints = true) {
    const local = this.localTrack("microphone");
    if (!local) {
      if (enabled) await this.publishMicrophone(constraints);
      return;
    }
    await this.setMuted(local.trackId, !enabled);
  }

  /** @private The publisher transceiver of one of our tracks. */
  _transceiverOf(trackId) {
    for (const entry of this.publishMids.values()) if (entry.trackId === trackId) return entry.transceiver;
    return null;
  }

  /**
   * @private A local track ended (unpublished, its share stopped): stop the capture and leave its
   * transceiver idle, sending nothing, for the next track of its kind. Stopping the transceiver would
   * change the publisher connection's BUNDLE group, and once no section of the earlier group is left
   * Chromium moves to a new transport (new ICE and DTLS session) that the server does not complete.
   */
  _endLocal(trackId, notify = true) {
    const local = this.localTracks.get(trackId);
    if (!local) return;
    this.localTracks.delete(trackId);
    this.wantedLayers.delete(trackId);
    this.senderChains.delete(trackId);
    local.track.stop();
    for (const [mid, entry] of this.publishMids) {
      if (entry.trackId === trackId) {
        this.publishMids.delete(mid);
        entry.transceiver.sender.replaceTrack(null).catch(() => {});
        this.idle.push(entry.transceiver);
      }
    }
    this._emit("local_track_ended", local);
    if (notify) this._emit("state", { type: "local_track_ended" });
  }

  /**
   * @private Runs one read-modify-write of a sender's parameters after the earlier ones of the same
   * track: each must start from the getParameters() of the one before (its transaction id).
   * @param {string} trackId @param {() => Promise<void>} fn
   */
  _senderUpdate(trackId, fn) {
    const next = (this.senderChains.get(trackId) ?? Promise.resolve()).then(fn);
    this.senderChains.set(trackId, next.catch(() => {}));
    return next;
  }

  /**
   * @private After the answer: a screen share keeps its resolution under load (degradationPreference
   * "maintain-resolution"); every encoding of a reused transceiver starts active; and when the server
   * declined simulcast, the browser kept only the first (bottom) encoding, which then gets the top
   * layer's resolution and bitrate so that the one stream is the full picture.
   * @param {string} trackId @param {RTCRtpSender} sender @param {Source} source @param {Encoding[]|null} encodings
   */
  _configureSender(trackId, sender, source, encodings) {
    if (!encodings && source !== "screen_share") return;
    this._senderUpdate(trackId, async () => {
      const p = sender.getParameters();
      if (!p.encodings?.length) return;
      let changed = false;
      if (encodings && p.encodings.length === 1) {
        const top = encodings[encodings.length - 1];
        const only = p.encodings[0];
        if (only.scaleResolutionDownBy !== top.scaleResolutionDownBy || only.maxBitrate !== top.maxBitrate) {
          only.scaleResolutionDownBy = top.scaleResolutionDownBy;
          only.maxBitrate = top.maxBitrate;
          if (top.maxFramerate) only.maxFramerate = top.maxFramerate;
          else delete only.maxFramerate;
          changed = true;
        }
      }
      for (const e of p.encodings) {
        if (e.active === false) {
          e.active = true;
          changed = true;
        }
      }
      if (changed) await sender.setParameters(p).catch((e) => this._emit("error", layersError(e)));
    });
    if (source !== "screen_share") return;
    // Separately: a browser that refuses this one still applies the encodings above.
    this._senderUpdate(trackId, async () => {
      const p = sender.getParameters();
      if (p.degradationPreference === "maintain-resolution") return;
      p.degradationPreference = "maintain-resolution";
      await sender.setParameters(p).catch(() => {});
    });
  }

  /** @private A `layers_wanted` push: remember it, and apply it when the track is ours. */
  _layersWanted(msg) {
    if (typeof msg.trackId !== "string" || !Array.isArray(msg.rids)) return;
    this.wantedLayers.set(msg.trackId, msg.rids.filter((r) => typeof r === "string"));
    if (this.localTracks.has(msg.trackId)) this._applyLayers(msg.trackId);
  }

  /**
   * @private Turns the encodings of one of our tracks on or off as the latest `layers_wanted` lists
   * them (read-modify-write of getParameters()). One encoding stays on whatever the list says: the
   * bottom one, which the server always lists.
   * @param {string} trackId
   */
  _applyLayers(trackId) {
    const transceiver = this._transceiverOf(trackId);
    if (!transceiver || !this.wantedLayers.has(trackId)) return;
    this._senderUpdate(trackId, async () => {
      const rids = this.wantedLayers.get(trackId);
      if (!rids || this._transceiverOf(trackId) !== transceiver) return;
      const p = transceiver.sender.getParameters();
      if (!p.encodings || p.encodings.length < 2) return; // one encoding: always on
      const want = p.encodings.map((e) => !e.rid || rids.includes(e.rid));
      if (!want.some(Boolean)) want[0] = true;
      let changed = false;
      p.encodings.forEach((e, i) => {
        if (e.active !== want[i]) {
          e.active = want[i];
          changed = true;
        }
      });
      if (changed) await transceiver.sender.setParameters(p).catch((e) => this._emit("error", layersError(e)));
    });
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
    const pc = new RTCPeerConnection(this._rtcConfig());
    pc.onicecandidate = (e) => {
      if (e.candidate) this._send({ type: "ice_candidate", target: "publisher", candidate: e.candidate.candidate });
    };
    pc.onconnectionstatechange = () => this._emit("publisher_state", { state: pc.connectionState });
    this.publisher = pc;
  }

  /**
   * @private One offer/answer round on the publisher connection; `added` are the new transceivers,
   * each bound to a track announced with `publish` (their `mid` is set from the offer).
   * @param {{transceiver: RTCRtpTransceiver, trackId: string, track: MediaStreamTrack, mid?: string|null}[]} added
   */
  async _negotiatePublisher(added) {
    const pc = this.publisher;
    if (!pc || pc.signalingState === "closed") return { tracks: [], rejected: [] };
    // Every transceiver stopped: nothing to tell the server (it has unpublished those tracks already),
    // and Chromium cannot set an offer without a live section under max-bundle ("max-bundle is used
    // but no bundle group found"), a failure that also breaks every later offer of the connection.
    if (!pc.getTransceivers().some((t) => t.direction !== "stopped")) return { tracks: [], rejected: [] };
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    // The mid of each new transceiver; the offer's a=msid lines name it too.
    const mids = midsByTrack(pc.localDescription.sdp);
    const tracks = added.map((entry) => {
      entry.mid = entry.transceiver.mid ?? mids.get(entry.track.id) ?? null;
      return { mid: entry.mid, trackId: entry.trackId };
    });
    // A failed request leaves the offer pending: the next round replaces it (have-local-offer allows it).
    const result = await this.request("publish_offer", { sdp: pc.localDescription.sdp, tracks });
    await pc.setRemoteDescription({ type: "answer", sdp: result.sdp });
    // Idle transceivers were offered without a track: the answer rejected them and the browser stopped them.
    this.idle = this.idle.filter((t) => t.direction !== "stopped" && t.currentDirection !== "stopped");
    return result;
  }

  // ---------------------------------------------------------------- receiving

  /** @private Answers a subscriber offer and reports tracks that started or ended. */
  async _answerSubscriber(msg) {
    if (this.closed) return;
    if (msg.reset && this.subscriber) {
      // The server starts a new subscriber connection (the old one gathered too many ended sections,
      // failed, or was not kept when the room moved): every received track ends here and comes back
      // on the new connection.
      this.subscriber.close();
      this.subscriber = null;
      for (const r of this.remote.values()) this._emit("track_ended", r);
      this.remote.clear();
    }
    if (!this.subscriber) {
      const pc = new RTCPeerConnection(this._rtcConfig());
      this.channels = { reliable: null, lossy: null };
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
    // Sections of ended tracks stay in the offer, inactive on the same transport (docs/protocol.md 14).
    await pc.setRemoteDescription({ type: "offer", sdp: msg.sdp });
    if (this.e2ee) {
      // Each received track decrypted with its sender's key, before its first frame.
      for (const t of pc.getTransceivers()) {
        const offered = t.mid && this.offered.get(t.mid);
        if (!offered || t.receiver.transform) continue;
        t.receiver.transform = this._e2eeTransform(
          "decrypt",
          t.receiver.track.kind,
          offered.participantId,
          offered.trackId,
          null,
          codecsOf(msg.sdp, t.mid),
        );
      }
    }
    await pc.setLocalDescription(await pc.createAnswer());
    await this.request("subscriber_answer", { revision: msg.revision, sdp: pc.localDescription.sdp });
    if (pc.sctp && !this.channels.reliable) this._openChannels(pc);
    // Transceivers whose track arrived before this offer named it.
    for (const t of pc.getTransceivers()) {
      if (t.mid && t.receiver.track && !this.remote.has(t.mid) && this.offered.has(t.mid)) {
        this._remoteTrack(t, t.receiver.track);
      }
    }
  }

  /**
   * @private The data channels on the subscriber connection (its offer has a data channel section):
   * a reliable one and a lossy one (unordered, never retransmitted). What the server sends on them is
   * the `data` event, handled as if it came over signaling.
   */
  _openChannels(pc) {
    const open = (label, init) => {
      const ch = pc.createDataChannel(label, init);
      ch.onmessage = (e) => {
        if (typeof e.data !== "string") return;
        let msg;
        try {
          msg = JSON.parse(e.data);
        } catch {
          return;
        }
        if (msg && msg.type === "data") this._receive(msg);
      };
      return ch;
    };
    this.channels = {
      reliable: open("atrium-reliable", { ordered: true }),
      lossy: open("atrium-lossy", { ordered: false, maxRetransmits: 0 }),
    };
  }

  // ---------------------------------------------------------------- data beside media

  /**
   * Sends a data message (docs/protocol.md `send_data`): `topic` (1 to 64 bytes; `chat` is kept for
   * joiners), `payload` text (at most 16 KiB), to everyone or to `to` (participant ids). Reliable and
   * in order over signaling, resolving with `{messageId, at, recipients}`; with `lossy`, on the lossy
   * data channel (resolves true when it was handed to the channel, false when there is none open).
   * @param {string} topic
   * @param {string} payload
   * @param {{to?: string[], lossy?: boolean}} [options]
   */
  sendData(topic, payload, options = {}) {
    const envelope = { topic, payload, ...(options.to ? { to: options.to } : {}) };
    if (options.lossy) {
      const ch = this.channels.lossy;
      if (!ch || ch.readyState !== "open") return Promise.resolve(false);
      ch.send(JSON.stringify(envelope));
      return Promise.resolve(true);
    }
    return this.request("send_data", envelope).then((r) => {
      // The sender gets no copy: its own chat message joins its history here, as the server kept it.
      if (topic === "chat" && !options.to && this.me) {
        const msg = { type: "data", messageId: r.messageId, from: this.me.id, topic, payload, to: null, at: r.at };
        this.chat.push(msg);
        this._emit("data", msg);
      }
      return r;
    });
  }

  /**
   * The local pointer over a share, in the share's own coordinates (0 to 1 from its left and top edges),
   * sent on the lossy channel at most 30 times a second (the latest position waits for its slot);
   * `null` says the pointer left the share. Topic `pointer`, payload `{"trackId","x","y"}`.
   * @param {string} trackId the share's video track
   * @param {number|null} x
   * @param {number} [y]
   */
  sendPointer(trackId, x, y) {
    const clamp = (v) => Math.round(Math.min(1, Math.max(0, v)) * 10000) / 10000;
    this.pointerPending = x === null ? { trackId, gone: true } : { trackId, x: clamp(x), y: clamp(y) };
    if (this.pointerTimer) return;
    const flush = () => {
      this.pointerTimer = null;
      const p = this.pointerPending;
      if (!p) return;
      this.pointerPending = null;
      this.pointerSent = performance.now();
      this.sendData("pointer", JSON.stringify(p), { lossy: true });
    };
    const wait = this.pointerSent + 1000 / 30 - performance.now();
    if (wait <= 0) flush();
    else this.pointerTimer = setTimeout(flush, wait);
  }

  /**
   * Sets (a string) or removes (null) attributes: your own, or, for hosts and cohosts, clears another
   * participant's (`participantId`). Resolves with `{participantId, attributes}`.
   * @param {Record<string, string|null>} attributes
   * @param {string} [participantId]
   */
  setAttributes(attributes, participantId) {
    return this.request("set_attributes", { attributes, ...(participantId ? { participantId } : {}) });
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

  /**
   * Changes the quality of a received track: which simulcast layer it arrives in (docs/protocol.md
   * `subscribe`). With three layers low, medium and high are the bottom, middle and top one; with two,
   * low and medium are the bottom one and high the top. A track without simulcast arrives as it is sent.
   * @param {string} trackId
   * @param {Quality} quality
   * @returns {Promise<{trackId: string, quality: Quality}>}
   */
  setQuality(trackId, quality) {
    if (!QUALITIES.has(quality)) {
      return Promise.reject(new AtriumError("invalid_field", `quality: expected low, medium or high, not ${quality}`));
    }
    return this.request("subscribe", { trackId, quality });
  }

  /**
   * Tells the server the size a received track is shown at, in device pixels (the element's CSS size
   * times devicePixelRatio): for a camera it sends the smallest layer that covers it, never above the
   * track's quality (`setQuality`). 0x0 clears it. Screen shares ignore it. Resolves with the server's
   * result `{trackId, width, height}`, or null when the server does not know `set_viewport` (one
   * without simulcast): the client stops sending it then.
   * @param {string} trackId
   * @param {number} width
   * @param {number} height
   * @returns {Promise<{trackId: string, width: number, height: number}|null>}
   */
  async setViewport(trackId, width, height) {
    if (!this.viewportSupported) return null;
    const size = (v) => Math.max(0, Math.min(MAX_VIEWPORT, Math.round(Number(v) || 0)));
    try {
      return await this.request("set_viewport", { trackId, width: size(width), height: size(height) });
    } catch (e) {
      // An unknown request type is `bad_request` (docs/protocol.md section 10).
      if (e instanceof AtriumError && (e.code === "bad_request" || e.code === "unknown_type")) {
        this.viewportSupported = false;
        return null;
      }
      throw e;
    }
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
  /** Grants or revokes sending data messages (hosts and cohosts). */
  setDataPermission(participantId, granted) {
    return this.setPermission(participantId, granted, "data");
  }

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
