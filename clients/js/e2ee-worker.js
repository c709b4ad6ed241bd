// Atrium end-to-end encryption: the worker behind every RTCRtpScriptTransform of a Room with `e2ee`
// (docs/e2ee.md). Frames are encrypted with SFrame (RFC 9605, cipher suite AES_128_GCM_SHA256_128),
// one key per sender and key index: base key = HKDF(room secret, info = "<participant>/<index>"),
// then SFrame's own key and salt from it. The room secret is PBKDF2 of the passphrase (salt: the
// room id), or the raw key the app gives.
//
// Keys roll without a gap: a new secret is given a new key index (`key`, `index`); frames carry their
// index (the SFrame KID), so frames of the old one still decrypt while senders move to the new one.
//
// What stays clear is what the forwarding core and the browsers' RTP packetizers read; it is
// authenticated (AAD). By codec:
// - VP8, VP9: [clear prefix][SFrame header][ciphertext and tag]; the prefix is a key frame's first 10
//   bytes (frame tag or marker, start code, size), a delta frame's 3. Opus: its first byte (TOC).
// - H264 (Annex B): the NAL units up to the first slice's header and 2 bytes of it stay as they are
//   (parameter sets, the NAL types the packetizer splits by); the rest, [SFrame header][ciphertext and
//   tag], is escaped (emulation prevention, then one 0x80 byte) so that no start code appears in it.
// - AV1: each OBU keeps its header; its payload is encrypted in place, all payloads as one plaintext,
//   the SFrame header at the front of the first and the tag at the end of the last, sizes rewritten.
// A frame that does not decrypt is dropped and reported (once a second per track) to the page.
//
// Rotation when someone leaves (the page's `rotateOnLeave`): each page has an ECDH P-256 key pair and
// proves its public key with an HMAC under a key derived from index 0's secret (the passphrase), bound
// to its participant id. A rotated secret is random; it reaches each member wrapped (AES-GCM) under a
// key from the ECDH of the two pages, so a page that has left cannot derive it.

const SUITE = 0x0004; // AES_128_GCM_SHA256_128
const text = new TextEncoder();
let secret = null; // CryptoKey (HKDF) of the key index senders use now
const secrets = new Map(); // key index -> CryptoKey (HKDF): every index given, for receiving
let keyed;
const secretSet = new Promise((resolve) => (keyed = resolve)); // frames before the key wait for it
let sendIndex = 0;
// One counter for every sender of this page, from a random 48-bit start: a nonce is never used twice
// under a key, even by two sessions a server gave the same participant id.
const start = crypto.getRandomValues(new Uint32Array(2));
let counter = (start[0] & 0xffff) * 2 ** 32 + start[1];
const keys = new Map(); // "<participant>/<index>" -> Promise<{key, salt}>
const reported = new Map(); // trackId -> last report (ms)
let authKey = null; // HMAC key from index 0's secret: proves a page's public key (rotation)
let me = null; // this page's participant id
let ecdh = null; // this page's ECDH key pair and raw public key
const peers = new Map(); // participant id -> AES-GCM key wrapping secrets between it and this page
const raws = new Map(); // key index -> raw secret of a rotated key (to wrap for members and newcomers)

onmessage = async (e) => {
  const m = e.data;
  if (m.type === "passphrase") {
    const material = await crypto.subtle.importKey("raw", text.encode(m.passphrase), "PBKDF2", false, ["deriveBits"]);
    const bits = await crypto.subtle.deriveBits(
      { name: "PBKDF2", hash: "SHA-256", salt: text.encode(`Atrium E2EE ${m.roomId}`), iterations: 100000 },
      material,
      256,
    );
    setSecret(bits, m.index ?? 0);
  } else if (m.type === "key") {
    setSecret(m.key, m.index ?? 0, m.send !== false);
  } else if (m.type === "rotation") {
    try {
      postMessage({ type: "rotation", id: m.id, result: await rotation[m.op](m) });
    } catch (err) {
      postMessage({ type: "rotation", id: m.id, error: String(err) });
    }
  }
};

const b64 = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)));
const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/** The AES-GCM key wrapping secrets between this page and a member (ECDH, then HKDF). */
async function wrapKey(peer) {
  const key = peers.get(peer);
  if (!key) throw new Error(`no proven public key of ${peer}`);
  return key;
}

function wrapAAD(from, to, index) {
  return text.encode(`Atrium E2EE wrap ${from}>${to}/${index}`);
}

async function wrap(peer, index) {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: wrapAAD(me, peer, index) },
    await wrapKey(peer),
    raws.get(index),
  );
  return { iv: b64(iv), data: b64(sealed) };
}

/** The page's calls for rotation (docs/e2ee.md, "Rotation when someone leaves"). */
const rotation = {
  /** This page's public key and its proof. */
  async hello(m) {
    me = m.me;
    if (!ecdh) {
      const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, false, ["deriveBits"]);
      ecdh = { pair, raw: new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey)) };
    }
    const mac = await crypto.subtle.sign("HMAC", authKey, concat(text.encode(`${me}/`), ecdh.raw));
    return { pub: b64(ecdh.raw), mac: b64(mac) };
  },
  /** A member's public key, kept when its proof holds: true. */
  async peer(m) {
    if (!ecdh || !authKey) return false;
    const raw = unb64(m.pub);
    const ok = await crypto.subtle.verify("HMAC", authKey, unb64(m.mac), concat(text.encode(`${m.from}/`), raw));
    if (!ok) return false;
    const pub = await crypto.subtle.importKey("raw", raw, { name: "ECDH", namedCurve: "P-256" }, false, []);
    const shared = await crypto.subtle.deriveBits({ name: "ECDH", public: pub }, ecdh.pair.privateKey, 256);
    const base = await crypto.subtle.importKey("raw", shared, "HKDF", false, ["deriveBits"]);
    const bits = await hkdf(base, text.encode("Atrium E2EE 1"), text.encode("wrap"), 128);
    peers.set(m.from, await crypto.subtle.importKey("raw", bits, "AES-GCM", false, ["encrypt", "decrypt"]));
    return true;
  },
  /** A new random secret under the next key index (above `above`, the highest a roll named), for
   * receiving; wrapped for each of `to`. */
  async rotate(m) {
    const index = Math.max(...secrets.keys(), m.above ?? 0) + 1;
    const raw = crypto.getRandomValues(new Uint8Array(32));
    raws.set(index, raw);
    await setSecret(raw.buffer, index, false);
    const wraps = {};
    for (const peer of m.to) if (peers.has(peer)) wraps[peer] = await wrap(peer, index);
    return { index, wraps };
  },
  /** The secret senders use now, wrapped for a newcomer; null while it is index 0's (the passphrase's). */
  async current(m) {
    return raws.has(sendIndex) ? { index: sendIndex, ...(await wrap(m.to, sendIndex)) } : null;
  },
  /** A secret a member wrapped for this page: kept (and sent with, when `send`) unless the index is old. */
  async unwrap(m) {
    if (secrets.has(m.index)) return m.send ? rotation.send(m) : true;
    const raw = new Uint8Array(
      await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: unb64(m.iv), additionalData: wrapAAD(m.from, me, m.index) },
        await wrapKey(m.from),
        unb64(m.data),
      ),
    );
    raws.set(m.index, raw);
    await setSecret(raw.buffer, m.index, m.send && m.index > sendIndex);
    return true;
  },
  /** A member that left: nothing more is wrapped for it. */
  async forget(m) {
    peers.delete(m.peer);
    return true;
  },
  /** Senders move up to a key index this page holds: true when they did (never back to an older one,
   * which a member that left may hold). */
  async send(m) {
    if (!secrets.has(m.index) || m.index <= sendIndex) return false;
    secret = secrets.get(m.index);
    sendIndex = m.index;
    return true;
  },
};

async function setSecret(bits, index, send = true) {
  const key = await crypto.subtle.importKey("raw", bits, "HKDF", false, ["deriveBits"]);
  if (index === 0 && !authKey) {
    const auth = await hkdf(key, text.encode("Atrium E2EE 1"), text.encode("auth"), 256);
    authKey = await crypto.subtle.importKey("raw", auth, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  }
  secrets.set(index, key);
  for (const id of [...keys.keys()]) if (id.endsWith(`/${index}`)) keys.delete(id);
  if (send || !secret) {
    secret = key;
    sendIndex = index;
  }
  keyed();
  postMessage({ type: "ready", index });
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function bigEndian(value, length) {
  const out = new Uint8Array(length);
  let v = BigInt(value);
  for (let i = length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

async function hkdf(key, salt, info, bits) {
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, bits));
}

/** A sender's SFrame key and salt for a key index (RFC 9605 section 4.4.2). */
function senderKey(participant, index) {
  if (!secrets.has(index)) return Promise.reject(new Error(`no key of index ${index}`)); // not cached
  const id = `${participant}/${index}`;
  let entry = keys.get(id);
  if (!entry) {
    entry = (async () => {
      const room = secrets.get(index);
      if (!room) throw new Error(`no key of index ${index}`);
      const base = await hkdf(room, text.encode("Atrium E2EE 1"), text.encode(id), 128);
      const sframeSecret = await crypto.subtle.importKey("raw", base, "HKDF", false, ["deriveBits"]);
      const kid = bigEndian(index, 8);
      const suite = bigEndian(SUITE, 2);
      const empty = new Uint8Array(0);
      const keyBits = await hkdf(sframeSecret, empty, concat(text.encode("SFrame 1.0 Secret key "), kid, suite), 128);
      const salt = await hkdf(sframeSecret, empty, concat(text.encode("SFrame 1.0 Secret salt "), kid, suite), 96);
      const key = await crypto.subtle.importKey("raw", keyBits, "AES-GCM", false, ["encrypt", "decrypt"]);
      return { key, salt };
    })();
    keys.set(id, entry);
  }
  return entry;
}

/** The SFrame header (RFC 9605 section 4.3): KID and CTR, each inline when under 8. */
function header(kid, ctr) {
  const field = (v) => (v < 8 ? { bits: v, bytes: new Uint8Array(0), extended: 0 } : long(v));
  const long = (v) => {
    let n = 1;
    while (n < 8 && v >= 2 ** (8 * n)) n++;
    return { bits: n - 1, bytes: bigEndian(v, n), extended: 1 };
  };
  const k = field(kid);
  const c = field(ctr);
  const config = (k.extended << 7) | (k.bits << 4) | (c.extended << 3) | c.bits;
  return concat(Uint8Array.of(config), k.bytes, c.bytes);
}

/** Reads an SFrame header at `at`: {kid, ctr, length}, or null. */
function readHeader(data, at) {
  if (at >= data.length) return null;
  const config = data[at];
  let p = at + 1;
  const read = (extended, bits) => {
    if (!extended) return bits;
    const n = bits + 1;
    if (p + n > data.length) return null;
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + data[p + i];
    p += n;
    return v;
  };
  const kid = read(config >> 7, (config >> 4) & 7);
  if (kid === null) return null;
  const ctr = read((config >> 3) & 1, config & 7);
  if (ctr === null) return null;
  return { kid, ctr, length: p - at };
}

function nonce(salt, ctr) {
  const c = bigEndian(ctr, salt.length);
  return salt.map((b, i) => b ^ c[i]);
}

/** The codec of a frame: its metadata's MIME type, else the payload type's in `codecs`, else `fallback`. */
function frameCodec(frame, codecs, fallback) {
  const meta = frame.getMetadata ? frame.getMetadata() : {};
  const m = meta.mimeType ?? codecs?.[meta.payloadType] ?? fallback ?? "";
  return m.toLowerCase();
}

/** VP8, VP9 and Opus: the bytes left clear at the front. */
function prefixBytes(codec, frame, data) {
  if (!codec.startsWith("video/")) return Math.min(1, data.length);
  return Math.min(frame.type === "key" ? 10 : 3, data.length);
}

/** H264 (Annex B): the end of the first slice's NAL header and 2 bytes of its slice header (or the
 * whole frame when it has no slice). */
function h264ClearBytes(data) {
  for (let i = 0; i + 3 < data.length; i++) {
    if (data[i] !== 0 || data[i + 1] !== 0) continue;
    const start = data[i + 2] === 1 ? i + 3 : data[i + 2] === 0 && data[i + 3] === 1 ? i + 4 : -1;
    if (start < 0 || start >= data.length) continue;
    const type = data[start] & 0x1f;
    if (type === 1 || type === 5) return Math.min(start + 3, data.length);
    i = start - 1;
  }
  return data.length;
}

/** Emulation prevention (H264 7.4.1): a 3 after two zeros before any byte up to 3, from a context of
 * `zeros` zeros before; then 0x80, so that the escaped bytes never end with a zero. */
function escape(bytes, zeros) {
  const out = new Uint8Array(bytes.length + Math.ceil(bytes.length / 2) + 1);
  let n = 0;
  for (const b of bytes) {
    if (zeros >= 2 && b <= 3) {
      out[n++] = 3;
      zeros = 0;
    }
    out[n++] = b;
    zeros = b === 0 ? zeros + 1 : 0;
  }
  out[n++] = 0x80;
  return out.subarray(0, n);
}

/** The inverse of `escape`, or null when the bytes do not end with its 0x80. */
function unescape(bytes, zeros) {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x80) return null;
  const out = new Uint8Array(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length - 1; i++) {
    const b = bytes[i];
    if (zeros >= 2 && b === 3) {
      zeros = 0;
      continue;
    }
    out[n++] = b;
    zeros = b === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, n);
}

/** Zero bytes at the end of `bytes` (at most 2): the escape's context. */
function trailingZeros(bytes) {
  let z = 0;
  for (let i = bytes.length - 1; i >= 0 && bytes[i] === 0 && z < 2; i--) z++;
  return z;
}

/** AV1's OBUs (a low-overhead bitstream: header, optional extension, optional LEB128 size), without
 * temporal delimiters and tile lists, which the packetizer drops; null when the frame does not parse. */
function obus(data) {
  const out = [];
  let at = 0;
  while (at < data.length) {
    const first = data[at];
    const type = (first >> 3) & 0x0f;
    const headerLength = first & 0x04 ? 2 : 1;
    if (at + headerLength > data.length) return null;
    let p = at + headerLength;
    let size = data.length - p;
    if (first & 0x02) {
      size = 0;
      for (let shift = 0; ; shift += 7) {
        if (p >= data.length || shift > 28) return null;
        const b = data[p++];
        size += (b & 0x7f) * 2 ** shift;
        if (!(b & 0x80)) break;
      }
      if (p + size > data.length) return null;
    }
    const header = data.slice(at, at + headerLength);
    header[0] |= 0x02; // every OBU leaves with its size (as the receiving depacketizer writes it)
    // Temporal delimiters, tile lists and padding: the packetizer drops them.
    if (type !== 2 && type !== 8 && type !== 15) out.push({ header, payload: data.subarray(p, p + size) });
    at = p + size;
  }
  return out;
}

function leb128(value) {
  const out = [];
  do {
    let b = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) b |= 0x80;
    out.push(b);
  } while (value > 0);
  return Uint8Array.from(out);
}

/** OBUs with the given payloads, each with its size. */
function writeObus(list, payloads) {
  const parts = [];
  list.forEach((o, i) => parts.push(o.header, leb128(payloads[i].length), payloads[i]));
  return concat(...parts);
}

/** Cuts `bytes` into pieces of the given lengths. */
function split(bytes, lengths) {
  let at = 0;
  return lengths.map((n) => bytes.subarray(at, (at += n)));
}

async function seal(participant, aadFront, plain) {
  const index = sendIndex; // once: a roll may switch it while the key derives
  const { key, salt } = await senderKey(participant, index);
  const ctr = counter++;
  const h = header(index, ctr);
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: nonce(salt, ctr), additionalData: concat(aadFront, h), tagLength: 128 },
      key,
      plain,
    ),
  );
  return { h, sealed };
}

async function open(participant, h, aad, sealed) {
  const { key, salt } = await senderKey(participant, h.kid);
  return new Uint8Array(
    await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: nonce(salt, h.ctr), additionalData: aad, tagLength: 128 },
      key,
      sealed,
    ),
  );
}

/** The encrypted frame's bytes. */
async function encrypt(codec, frame, data, participant) {
  if (codec === "video/h264") {
    const clear = h264ClearBytes(data);
    const front = data.subarray(0, clear);
    const { h, sealed } = await seal(participant, front, data.subarray(clear));
    return concat(front, escape(concat(h, sealed), trailingZeros(front)));
  }
  if (codec === "video/av1") {
    const list = obus(data);
    if (!list || list.length === 0) throw new Error("AV1 frame without OBUs");
    const headers = concat(...list.map((o) => o.header));
    const { h, sealed } = await seal(participant, headers, concat(...list.map((o) => o.payload)));
    const lengths = list.map((o) => o.payload.length);
    lengths[0] += h.length;
    lengths[lengths.length - 1] += 16;
    return writeObus(list, split(concat(h, sealed), lengths));
  }
  const clear = prefixBytes(codec, frame, data);
  const { h, sealed } = await seal(participant, data.subarray(0, clear), data.subarray(clear));
  return concat(data.subarray(0, clear), h, sealed);
}

/** The decrypted frame's bytes; throws when they do not decrypt. */
async function decrypt(codec, frame, data, participant) {
  if (codec === "video/h264") {
    const clear = h264ClearBytes(data);
    const front = data.subarray(0, clear);
    const tail = unescape(data.subarray(clear), trailingZeros(front));
    const h = tail && readHeader(tail, 0);
    if (!h) throw new Error("no SFrame header");
    const plain = await open(participant, h, concat(front, tail.subarray(0, h.length)), tail.subarray(h.length));
    return concat(front, plain);
  }
  if (codec === "video/av1") {
    const list = obus(data);
    if (!list || list.length === 0) throw new Error("AV1 frame without OBUs");
    const payload = concat(...list.map((o) => o.payload));
    const h = readHeader(payload, 0);
    const lengths = list.map((o) => o.payload.length);
    lengths[0] -= h ? h.length : 0;
    lengths[lengths.length - 1] -= 16;
    if (!h || lengths.some((n) => n < 0)) throw new Error("no SFrame header");
    const headers = concat(...list.map((o) => o.header));
    const plain = await open(participant, h, concat(headers, payload.subarray(0, h.length)), payload.subarray(h.length));
    return writeObus(list, split(plain, lengths));
  }
  const clear = prefixBytes(codec, frame, data);
  const h = readHeader(data, clear);
  if (!h) throw new Error("no SFrame header");
  const plain = await open(participant, h, data.subarray(0, clear + h.length), data.subarray(clear + h.length));
  return concat(data.subarray(0, clear), plain);
}

function encryptor(participant, codecFallback) {
  return async (frame, controller) => {
    if (!secret) await secretSet; // nothing leaves in clear
    const codec = frameCodec(frame, null, codecFallback);
    try {
      frame.data = (await encrypt(codec, frame, new Uint8Array(frame.data), participant)).buffer;
    } catch {
      return; // a frame that does not encrypt is dropped (a throw would stop the sender for good)
    }
    controller.enqueue(frame);
  };
}

function decryptor(kind, participant, trackId, codecs) {
  return async (frame, controller) => {
    if (!secret) await secretSet;
    const codec = frameCodec(frame, codecs, kind === "audio" ? "audio/opus" : "video/vp8");
    try {
      frame.data = (await decrypt(codec, frame, new Uint8Array(frame.data), participant)).buffer;
      controller.enqueue(frame);
    } catch {
      const now = Date.now();
      if (now - (reported.get(trackId) ?? 0) >= 1000) {
        reported.set(trackId, now);
        postMessage({ type: "decrypt_failed", participantId: participant, trackId, kind });
      }
    }
  };
}

onrtctransform = (event) => {
  const t = event.transformer;
  const { operation, kind, participant, trackId, codec, codecs } = t.options;
  const fallback = codec ?? (kind === "audio" ? "audio/opus" : "video/vp8");
  const transform =
    operation === "encrypt" ? encryptor(participant, fallback) : decryptor(kind, participant, trackId, codecs);
  t.readable.pipeThrough(new TransformStream({ transform })).pipeTo(t.writable);
};
