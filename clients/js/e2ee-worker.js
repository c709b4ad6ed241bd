// Atrium end-to-end encryption: the worker behind every RTCRtpScriptTransform of a Room with `e2ee`
// (docs/e2ee.md). Frames are encrypted with SFrame (RFC 9605, cipher suite AES_128_GCM_SHA256_128),
// one key per sender and key index: base key = HKDF(room secret, info = "<participant>/<index>"),
// then SFrame's own key and salt from it. The room secret is PBKDF2 of the passphrase (salt: the
// room id), or the raw key the app gives.
//
// Keys roll without a gap: a new secret is given a new key index (`key`, `index`); frames carry their
// index (the SFrame KID), so frames of the old one still decrypt while senders move to the new one.
//
// A frame leaves as: [clear prefix][SFrame header][ciphertext and tag]. The clear prefix is what the
// forwarding core and the RTP packetizer read: a VP8 key frame's first 10 bytes (frame tag, start
// code, size), a delta frame's 3 (frame tag), an Opus frame's first (TOC). It is authenticated (AAD).
// A frame that does not decrypt is dropped and reported (once a second per track) to the page.

const SUITE = 0x0004; // AES_128_GCM_SHA256_128
const text = new TextEncoder();
let secret = null; // CryptoKey (HKDF) of the key index senders use now
const secrets = new Map(); // key index -> CryptoKey (HKDF): every index given, for receiving
let keyed;
const secretSet = new Promise((resolve) => (keyed = resolve)); // frames before the key wait for it
let sendIndex = 0;
let counter = 0; // one counter for every sender of this page: a nonce is never used twice per key
const keys = new Map(); // "<participant>/<index>" -> Promise<{key, salt}>
const reported = new Map(); // trackId -> last report (ms)

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
  }
};

async function setSecret(bits, index, send = true) {
  const key = await crypto.subtle.importKey("raw", bits, "HKDF", false, ["deriveBits"]);
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

/** The bytes left clear for the forwarding core and the packetizer. */
function clearBytes(kind, frame, data) {
  if (kind === "audio") return Math.min(1, data.length);
  return Math.min(frame.type === "key" ? 10 : 3, data.length);
}

function encryptor(kind, participant) {
  return async (frame, controller) => {
    if (!secret) await secretSet; // nothing leaves in clear
    const data = new Uint8Array(frame.data);
    const clear = clearBytes(kind, frame, data);
    const { key, salt } = await senderKey(participant, sendIndex);
    const ctr = counter++;
    const h = header(sendIndex, ctr);
    const aad = concat(data.subarray(0, clear), h);
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv: nonce(salt, ctr), additionalData: aad, tagLength: 128 },
        key,
        data.subarray(clear),
      ),
    );
    frame.data = concat(data.subarray(0, clear), h, sealed).buffer;
    controller.enqueue(frame);
  };
}

function decryptor(kind, participant, trackId) {
  return async (frame, controller) => {
    if (!secret) await secretSet;
    const data = new Uint8Array(frame.data);
    const clear = clearBytes(kind, frame, data);
    const h = readHeader(data, clear);
    try {
      if (!h) throw new Error("no SFrame header");
      const { key, salt } = await senderKey(participant, h.kid);
      const aad = data.subarray(0, clear + h.length);
      const plain = new Uint8Array(
        await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: nonce(salt, h.ctr), additionalData: aad, tagLength: 128 },
          key,
          data.subarray(clear + h.length),
        ),
      );
      frame.data = concat(data.subarray(0, clear), plain).buffer;
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
  const { operation, kind, participant, trackId } = t.options;
  const transform = operation === "encrypt" ? encryptor(kind, participant) : decryptor(kind, participant, trackId);
  t.readable.pipeThrough(new TransformStream({ transform })).pipeTo(t.writable);
};
