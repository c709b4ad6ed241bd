"""Real WebRTC peers (aiortc) for the media tests, talking to Atrium through `/v1/signal`
(docs/protocol.md, "Media negotiation": `publish_offer`, `subscriber_offer`, `subscriber_answer`).

    pub = await Publisher.start(alice, ["camera", "screen_share", "microphone"])
    sub = Subscriber(bob)                  # answers every subscriber_offer bob receives, from now on
    camera = pub.track_id("camera")
    await sub.wait_frames([camera], 30, timeout=10)
    assert sub.by_track(camera).classes["camera"] >= 30
    ...
    await sub.close()
    await pub.close()

Publishers encode in a worker process of their own (this file run as a script, driven over its
stdin/stdout with one JSON object per line), so that the encoders of the publisher and the decoders
of the subscribers do not share one interpreter lock on a 2-core machine. The signaling stays in the
test's process: the worker only owns the RTCPeerConnection.

Every video frame a subscriber decodes is classified by its content (`classify_video`), every audio
frame by its tone (`classify_audio`), so a test proves which source a track really carries, not
only that media flows.

Importing this module confines ICE to 127.0.0.1 (`_loopback_only`); aiortc is otherwise unchanged,
except in a publisher worker asked for `fast_h264` (`use_fast_x264`: x264's ultrafast preset) or
for `ignore_key_frame_requests` (a static screen whose sender ignores PLI, FIR and REMB, its VP8
encoder VBR: `use_vbr_vp8`). Every
publisher worker counts, per video source, the key-frame requests (PLI, FIR) its senders got and
the key frames they sent (`KeyFrameCounter`).
(aiortc routes RTX by payload type, not by the FID group's SSRC: Atrium gives every section of a
subscriber offer payload types of its own, so retransmissions reach the right track.)
"""
import asyncio
import collections
import fractions
import json
import json_lines
import os
import sys
import time

import aioice.ice
import av
import numpy as np
from aiortc import (MediaStreamTrack, RTCBundlePolicy, RTCConfiguration, RTCIceServer, RTCPeerConnection,
                    RTCRtpSender, RTCSessionDescription)
from aiortc.codecs.vpx import VpxPayloadDescriptor
from aiortc.rtp import RTCP_PSFB_APP, RTCP_PSFB_FIR, RTCP_PSFB_PLI, RtcpPsfbPacket, unpack_remb_fci
from aiortc.mediastreams import MediaStreamError


def _loopback_only(use_ipv4, use_ipv6):
    """Replaces aioice's interface scan, which skips 127.0.0.1 and offers every other address:
    the tests send nothing anywhere but loopback."""
    return ["127.0.0.1"] if use_ipv4 else []


aioice.ice.get_host_addresses = _loopback_only



def peer_connection(ice_servers=None):
    """An RTCPeerConnection for Atrium: one BUNDLE transport (aiortc's default policy sends nothing
    on a second video track), and no ICE servers (aiortc would add a public STUN server) unless
    `ice_servers` (the join result's `iceServers`) are given."""
    servers = [RTCIceServer(urls=s["urls"], username=s.get("username"), credential=s.get("credential"))
               for s in ice_servers or []]
    return RTCPeerConnection(RTCConfiguration(iceServers=servers, bundlePolicy=RTCBundlePolicy.MAX_BUNDLE))


# -- synthetic sources -----------------------------------------------------------------------------

VIDEO_CLOCK = 90000
AUDIO_RATE = 48000
AUDIO_PTIME = 0.020
# How long a share's end (RTCP BYE) may take to reach a subscriber: generous, for the
# ThreadSanitizer build on a loaded machine.
BYE_TIMEOUT = 20

RED = (255, 0, 0)
WHIP_PATTERN = "whip_magenta"  # what classify_video calls gst_whip.py's picture
BLUE = (0, 0, 255)
WHITE = (255, 255, 255)

# The screen: white vertical stripes, STRIPE_WIDTH wide every STRIPE_PERIOD pixels, on blue.
# Multiples of 16 keep the edges on VP8 macroblock boundaries.
STRIPE_PERIOD = 128
STRIPE_WIDTH = 32

VIDEO = {
    "camera": {"width": 640, "height": 360, "fps": 30},
    "screen_share": {"width": 1280, "height": 720, "fps": 15},
}
AUDIO = {"microphone": 440.0, "screen_share_audio": 880.0}   # tone frequency, Hz
SOURCES = list(VIDEO) + list(AUDIO)


def kind_of(source):
    return "video" if source in VIDEO else "audio"


def _stripe_mask(width):
    """True for the columns of a white stripe of the screen pattern."""
    return (np.arange(width) % STRIPE_PERIOD) < STRIPE_WIDTH


def source_image(source):
    """The RGB picture (height x width x 3, uint8) that a video source sends in every frame."""
    spec = VIDEO[source]
    img = np.empty((spec["height"], spec["width"], 3), np.uint8)
    if source == "camera":
        img[:] = RED
    else:
        img[:] = BLUE
        img[:, _stripe_mask(spec["width"])] = WHITE
    return img


class _Paced(MediaStreamTrack):
    """Paces `recv` on a wall clock: frame n is due at start + n * period, as a capture device
    delivers them, and carries pts = n * period in `clock` units (the encoder's RTP timestamps)."""

    def __init__(self, clock, period_ticks):
        super().__init__()
        self._clock = clock
        self._period = period_ticks
        self._start = None
        self._pts = 0

    async def _next_pts(self):
        # An ended track gives no more frames, as aiortc's own tracks do: its sender's RTP loop ends
        # while its RTCP loop (sender reports) goes on.
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        else:
            self._pts += self._period
            wait = self._start + self._pts / self._clock - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        return self._pts


class SyntheticVideoTrack(_Paced):
    """A video source sending `source_image(source)` at its frame rate."""

    kind = "video"

    def __init__(self, source):
        spec = VIDEO[source]
        super().__init__(VIDEO_CLOCK, VIDEO_CLOCK // spec["fps"])
        # Converted to the encoder's format once; each frame is a cheap copy of these planes.
        rgb = av.VideoFrame.from_ndarray(source_image(source), format="rgb24")
        self._yuv = rgb.reformat(format="yuv420p").to_ndarray()

    async def recv(self):
        pts = await self._next_pts()
        frame = av.VideoFrame.from_ndarray(self._yuv, format="yuv420p")
        frame.pts = pts
        frame.time_base = fractions.Fraction(1, VIDEO_CLOCK)
        return frame


# A busy screen: the screen's stripes with fresh noise on the luma in every frame, so that an encoder
# finds nothing to predict and spends its whole budget, while the picture keeps the stripes and the
# mean colour `classify_video` recognises (the noise is zero-mean and small next to the blue/white
# contrast, and the codec smooths most of it away). The noise comes from a bank of BUSY_BANK frames
# made once, cycled: more than an encoder's reference frames, so no frame repeats one it can see.
BUSY_NOISE = 12           # luma amplitude, +-; blue (41) and white (235) do not clip
BUSY_BANK = 16
BUSY_FPS = 30             # see BusyScreenTrack on aiortc's H264 encoder and frame rates


class BusyScreenTrack(_Paced):
    """The screen source with noise that changes every frame (`BUSY_NOISE`), at `fps`.

    aiortc's H264 encoder configures libx264 for 30 frames per second whatever the frame rate, so
    it spends target / 30 bits per frame: at the screen's 15 fps its 3 Mbit/s maximum yields
    1.5 Mbit/s; at BUSY_FPS (30, the default) the bitrate is the target."""

    kind = "video"

    def __init__(self, source="screen_share", fps=BUSY_FPS, seed=1, stamped=False):
        spec = VIDEO[source]
        super().__init__(VIDEO_CLOCK, VIDEO_CLOCK // fps)
        self.stamped = stamped
        self._height = spec["height"]
        rgb = av.VideoFrame.from_ndarray(source_image(source), format="rgb24")
        planes = rgb.reformat(format="yuv420p").to_ndarray()     # (h * 3/2) x w: Y, then U and V
        rng = np.random.default_rng(seed)
        h = spec["height"]
        self._bank = []
        for _ in range(BUSY_BANK):
            frame = planes.astype(np.int16)
            frame[:h] += rng.integers(-BUSY_NOISE, BUSY_NOISE + 1, size=(h, spec["width"]), dtype=np.int16)
            self._bank.append(np.clip(frame, 0, 255).astype(np.uint8))
        self._n = 0

    async def recv(self):
        pts = await self._next_pts()
        planes = self._bank[self._n % BUSY_BANK]
        if self.stamped:
            planes = stamp_planes(planes, self._height, int(time.time() * 1000))
        frame = av.VideoFrame.from_ndarray(planes, format="yuv420p")
        self._n += 1
        frame.pts = pts
        frame.time_base = fractions.Fraction(1, VIDEO_CLOCK)
        return frame


class ToneTrack(_Paced):
    """An audio source: a sine tone at the source's frequency, 20 ms mono frames at 48 kHz."""

    kind = "audio"

    def __init__(self, source):
        samples = int(AUDIO_RATE * AUDIO_PTIME)
        super().__init__(AUDIO_RATE, samples)
        # One second of tone holds a whole number of periods for the frequencies above, so the
        # frames can be cut from it cyclically without a phase jump.
        t = np.arange(AUDIO_RATE) / AUDIO_RATE
        self._second = (np.sin(2 * np.pi * AUDIO[source] * t) * 8000).astype(np.int16)
        self._samples = samples

    async def recv(self):
        pts = await self._next_pts()
        start = pts % AUDIO_RATE
        frame = av.AudioFrame.from_ndarray(self._second[None, start:start + self._samples],
                                           format="s16", layout="mono")
        frame.sample_rate = AUDIO_RATE
        frame.pts = pts
        frame.time_base = fractions.Fraction(1, AUDIO_RATE)
        return frame


# The capture clock in the picture: the wall clock in milliseconds (modulo 2**32) as STAMP_BITS
# blocks of STAMP_BLOCK pixels along the top rows, most significant first, luma 235 for a one and 16
# for a zero on neutral chroma: a viewer reads how old the picture it shows is (the same machine's
# clock). One macroblock per bit survives any bitrate the tests use.
STAMP_BITS = 32
STAMP_BLOCK = 16


def stamp_planes(planes, height, ms):
    """A copy of yuv420p `planes` (Y rows, then U and V, as PyAV's ndarray) with `ms` stamped."""
    out = planes.copy()
    out[:STAMP_BLOCK] = 16
    value = ms % (1 << STAMP_BITS)
    for i in range(STAMP_BITS):
        if value >> (STAMP_BITS - 1 - i) & 1:
            out[:STAMP_BLOCK, i * STAMP_BLOCK:(i + 1) * STAMP_BLOCK] = 235
    # The chroma of those rows: half as many rows of U and of V, two to an array row.
    quarter = height // 4
    out[height:height + STAMP_BLOCK // 4] = 128
    out[height + quarter:height + quarter + STAMP_BLOCK // 4] = 128
    return out


def read_stamp(frame):
    """The capture clock (ms modulo 2**32) a decoded frame of a stamped source carries."""
    y = frame.to_ndarray(format="yuv420p")
    value = 0
    for i in range(STAMP_BITS):
        value = value * 2 + int(y[STAMP_BLOCK // 2, i * STAMP_BLOCK + STAMP_BLOCK // 2] >= 128)
    return value


def stamp_not_before(stamp, ms):
    """Whether capture clock `stamp` is at or after wall-clock `ms` (modulo 2**32)."""
    return (stamp - ms) % (1 << STAMP_BITS) < (1 << (STAMP_BITS - 1))


def make_track(source, busy=False, fps=None, stamped=False):
    """`busy`: the noisy variant of a video source (`BusyScreenTrack`, the screen's or the camera's
    picture); `stamped`: it carries the capture clock (`stamp_planes`)."""
    if busy:
        assert source in VIDEO, "only video has a busy variant"
        return BusyScreenTrack(source, fps=fps or BUSY_FPS, stamped=stamped)
    return SyntheticVideoTrack(source) if source in VIDEO else ToneTrack(source)


def codec_preferences(kind, names):
    """aiortc's codecs of `kind` named in `names` (e.g. ["H264"]), in that order, with RTX: for
    `setCodecPreferences`. The others are left out, not only put after: Atrium picks the codec in
    its own order of preference (VP8 first), not in the offer's."""
    caps = RTCRtpSender.getCapabilities(kind).codecs
    chosen = [c for name in names for c in caps if c.mimeType.lower() == f"{kind}/{name}".lower()]
    assert chosen, f"aiortc has none of {names} for {kind}"
    return chosen + [c for c in caps if c.mimeType.lower() == f"{kind}/rtx"]


class _EncoderOptions:
    """An aiortc encoder context whose `options` go through `rewrite` when aiortc sets them."""

    def __init__(self, ctx, rewrite):
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_rewrite", rewrite)

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        if name == "options":
            value = self._rewrite(value)
        setattr(self._ctx, name, value)


class _AvWithEncoderOptions:
    """Stands for the `av` module inside one aiortc codec module: encoder contexts of `codec` get
    their options rewritten (`_EncoderOptions`), everything else is `av`'s own."""

    def __init__(self, codec, rewrite):
        class CodecContext:
            @staticmethod
            def create(name, mode):
                ctx = av.CodecContext.create(name, mode)
                return _EncoderOptions(ctx, rewrite) if (name, mode) == (codec, "w") else ctx

        self.CodecContext = CodecContext

    def __getattr__(self, name):
        return getattr(av, name)


def _fast_x264(options):
    """aiortc's libx264 options (level 3.1, tune zerolatency, its bitrate) with `preset=ultrafast`:
    the same rate control and bitstream profile at a quarter of the CPU (10 ms instead of 45 ms a
    720p frame here), so that a 2-core machine encodes every frame."""
    return {**options, "preset": "ultrafast"}


def _vbr_vpx(options):
    """aiortc's libvpx options without the `minrate` it sets equal to its bitrate and maxrate (which
    makes it CBR): a static screen then costs what a screen encoder spends on one, about 1.5 KB a
    second once the picture has settled, instead of refining the unchanging picture at the full
    500 kbit/s forever (4 MB of deltas a minute, past the key-frame cache's 4 MiB default after
    about 64 s)."""
    return {k: v for k, v in options.items() if k != "minrate"}


def use_vbr_vp8():
    """Makes this process's aiortc VP8 encoders VBR (`_vbr_vpx`; for the static screen of a worker
    asked for `ignore_key_frame_requests`)."""
    import aiortc.codecs.vpx as vpx
    if not isinstance(vpx.av, _AvWithEncoderOptions):
        vpx.av = _AvWithEncoderOptions("libvpx", _vbr_vpx)


def use_fast_x264():
    """Makes this process's aiortc H264 encoders use x264's ultrafast preset (the one change to
    aiortc besides the loopback-only ICE; for the publisher worker of the bandwidth test)."""
    import aiortc.codecs.h264 as h264
    if not isinstance(h264.av, _AvWithEncoderOptions):
        h264.av = _AvWithEncoderOptions("libx264", _fast_x264)


# -- classifying what was decoded ------------------------------------------------------------------

UNKNOWN = "unknown"
SILENCE = "silence"
COLOUR_TOLERANCE = 40   # per RGB channel, for codec blur and rounding in the colour conversions


def _plane(frame, index):
    """A plane of a decoded frame as a 2-D uint8 view (no copy; the row padding cut off)."""
    p = frame.planes[index]
    return np.frombuffer(p, np.uint8).reshape(p.height, p.line_size)[:, :p.width]


def _mean_rgb(y, u, v):
    """The mean colour of a picture from the means of its planes (BT.601, limited range: the
    conversion is affine, so the mean of the converted pixels is the conversion of the means)."""
    c, d, e = y.mean() - 16, u.mean() - 128, v.mean() - 128
    return np.array([1.164 * c + 1.596 * e, 1.164 * c - 0.392 * d - 0.813 * e, 1.164 * c + 2.017 * d])


def _close(rgb, expected):
    return bool(np.all(np.abs(rgb - np.array(expected, float)) <= COLOUR_TOLERANCE))


def _stripes_match(y):
    """Whether the luma shows the screen's vertical stripes: each column's mean brightness is on the
    right side of the midpoint between blue and white for at least 95% of the columns (codec blur
    only smears the edges), and the rows look alike (the stripes are vertical)."""
    columns = y[::16].mean(axis=0)
    bright = columns > (41 + 235) / 2          # luma of blue and of white, limited range
    agree = np.mean(bright == _stripe_mask(y.shape[1]))
    rows = y[::4, ::16].mean(axis=1)
    return agree >= 0.95 and rows.std() < 8


SCREEN_MEAN = tuple((np.array(BLUE) * (STRIPE_PERIOD - STRIPE_WIDTH)
                     + np.array(WHITE) * STRIPE_WIDTH) / STRIPE_PERIOD)


def classify_video(frame):
    """Which synthetic source a decoded video frame shows: "camera" (640x360, uniform red),
    "screen_share" (1280x720, the stripes on blue, of the right mean colour) or UNKNOWN."""
    if frame.format.name != "yuv420p":
        frame = frame.reformat(format="yuv420p")
    size = (frame.width, frame.height)
    y, u, v = _plane(frame, 0), _plane(frame, 1), _plane(frame, 2)
    # Every 4th pixel is plenty for means and keeps this cheap next to decoding.
    rgb = _mean_rgb(y[::4, ::4], u[::4, ::4], v[::4, ::4])
    cam, screen = VIDEO["camera"], VIDEO["screen_share"]
    if size == (cam["width"], cam["height"]):
        # Below the stamp's rows (a stamped camera's capture clock); the busy camera's noise is
        # about 7 of luma.
        below = STAMP_BLOCK
        body = _mean_rgb(y[below::4, ::4], u[below // 2::4, ::4], v[below // 2::4, ::4])
        if _close(body, RED) and y[below::4, ::4].std() < 10:
            return "camera"
    if size == (screen["width"], screen["height"]):
        # Below the stamp's rows too (atrium share stamps its frame number there).
        below = STAMP_BLOCK
        body = _mean_rgb(y[below::4, ::4], u[below // 2::4, ::4], v[below // 2::4, ::4])
        if _close(body, SCREEN_MEAN) and _stripes_match(y[below:]):
            return "screen_share"
    # GStreamer's WHIP publisher (gst_whip.py): a uniform magenta picture (red and blue high, green low,
    # whatever conversion matrix the encoder and decoder use).
    r, g, b = rgb
    if r > 170 and b > 170 and g < 90 and y[::4, ::4].std() < 12:
        return WHIP_PATTERN
    return UNKNOWN


def classify_audio(frame):
    """Which tone a decoded audio frame carries: the audio source of that frequency (within 15 Hz),
    SILENCE, or UNKNOWN."""
    samples = frame.to_ndarray()
    channels = len(frame.layout.channels)
    # Packed formats interleave the channels in one row; planar ones have a row per channel.
    first = samples[0, ::channels] if samples.shape[0] == 1 else samples[0]
    first = first.astype(np.float64)
    if np.sqrt(np.mean(first ** 2)) < 500:
        return SILENCE
    # Zero-padded to 10 Hz bins: a 20 ms frame alone would give 50 Hz bins.
    spectrum = np.abs(np.fft.rfft(first * np.hanning(len(first)), n=frame.sample_rate // 10))
    peak = np.argmax(spectrum) * 10.0
    for source, hz in AUDIO.items():
        if abs(peak - hz) <= 15:
            return source
    return UNKNOWN


# -- key frames at the sender ----------------------------------------------------------------------

def _rtp_parts(data):
    """(timestamp, ssrc, payload) of an RTP packet (RFC 3550 section 5.1: CSRCs, the header
    extension and padding skipped), or None when it is too short to be one."""
    if len(data) < 12:
        return None
    offset = 12 + 4 * (data[0] & 0x0F)
    if data[0] & 0x10:
        if len(data) < offset + 4:
            return None
        offset += 4 + 4 * int.from_bytes(data[offset + 2:offset + 4], "big")
    end = len(data) - (data[-1] if data[0] & 0x20 else 0)
    return int.from_bytes(data[4:8], "big"), int.from_bytes(data[8:12], "big"), data[offset:end]


def _starts_key_frame(codec, payload):
    """Whether an RTP payload starts a key frame: VP8 (RFC 7741: the first packet of partition 0 of
    a frame whose header's P bit is 0) or H264 (RFC 6184: an IDR or SPS NAL unit alone, in a STAP-A,
    or starting an FU-A)."""
    if not payload:
        return False
    if codec == "Vp8Encoder":
        try:
            descr, rest = VpxPayloadDescriptor.parse(payload)
        except ValueError:
            return False
        return bool(descr.partition_start and descr.partition_id == 0 and rest and rest[0] & 0x01 == 0)
    if codec == "H264Encoder":
        nal = payload[0] & 0x1F
        if nal in (5, 7):
            return True
        if nal == 24:                                   # STAP-A: 16-bit size, then the NAL unit
            i = 1
            while i + 2 < len(payload):
                if payload[i + 2] & 0x1F in (5, 7):
                    return True
                i += 2 + int.from_bytes(payload[i:i + 2], "big")
            return False
        return nal == 28 and len(payload) > 1 and payload[1] & 0x80 and payload[1] & 0x1F == 5
    return False


class KeyFrameCounter:
    """Stands for an RTCRtpSender's DTLS transport (`_RTCRtpSender__transport`, which the sender's
    RTP loop and its retransmissions send through) and counts the key frames the sender sends: each
    RTP timestamp of its own SSRC whose packet starts a key frame, once (a retransmission of the
    same packet is not a new key frame; RTX packets have another SSRC). Everything else is the
    transport's own."""

    def __init__(self, inner, sender):
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_sender", sender)
        object.__setattr__(self, "timestamps", [])

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __setattr__(self, name, value):
        setattr(self._inner, name, value)

    @property
    def count(self):
        return len(self.timestamps)

    async def _send_rtp(self, data):
        parts = _rtp_parts(data)
        if parts is not None:
            timestamp, ssrc, payload = parts
            codec = type(getattr(self._sender, "_RTCRtpSender__encoder", None)).__name__
            if ssrc == self._sender._ssrc and timestamp not in self.timestamps and _starts_key_frame(codec, payload):
                self.timestamps.append(timestamp)
        return await self._inner._send_rtp(data)


# -- publisher -------------------------------------------------------------------------------------

WORKER_MAX_SECONDS = 300    # a worker whose test died without closing it stops by itself


class _Worker(json_lines.Process):
    """The parent's handle on a publisher worker process (`python3 media_peer.py publisher-worker`):
    one request line out, one reply line back."""

    who = "publisher worker"
    stop_op = "close"
    call_timeout = 10

    @classmethod
    async def spawn(cls, script=None, max_seconds=WORKER_MAX_SECONDS):
        """Starts `script` (default: this file) as `publisher-worker`: it answers JSON lines on stdin
        with JSON lines on stdout and stops by itself after `max_seconds`."""
        proc = await asyncio.create_subprocess_exec(
            sys.executable, os.path.abspath(script or __file__), "publisher-worker", str(max_seconds),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 20)
        return cls(proc)


class Publisher:
    """A participant's publisher connection: sendonly transceivers for synthetic sources, bound to
    tracks with one `publish_offer`. The RTCPeerConnection lives in a worker process.

    `result` is the `publish_offer` result's data; `mids` maps each source to its transceiver's mid.
    """

    def __init__(self, client, worker, mids, result):
        self.client = client
        self.worker = worker
        self.mids = mids
        self.result = result

    @classmethod
    async def start(cls, client, sources, munge_answer=None, timeout=15, busy=(), codecs=None, fps=None,
                    fast_h264=False, ignore_key_frame_requests=(), vbr_vp8=False, ignore_remb=(), ice_servers=None,
                    relay_only=False, stamped=(), looks=None):
        """Offers one sendonly transceiver per source (in that order), publishes them all as new
        tracks, and applies the answer: `munge_answer(sdp, result)`, when given, rewrites it first
        (a misbehaving client). A refused `publish_offer` raises SignalError.

        `busy` lists sources sent as their busy variant (`BusyScreenTrack`, at `fps`), `stamped`
        those of them whose pictures carry the capture clock (`stamp_planes`); `codecs`
        maps a source to the codec names its transceiver offers (`codec_preferences`), e.g.
        {"screen_share": ["H264"]}; `fast_h264` gives the worker's H264 encoders x264's ultrafast
        preset (`use_fast_x264`); the senders of the sources in `ignore_key_frame_requests` act on
        no PLI, FIR or REMB (a static screen: one key frame, at the start; the worker still counts
        the requests), and the worker's VP8 encoders are VBR (`use_vbr_vp8`; `vbr_vp8` alone asks
        only for that: a static screen that answers key-frame requests); those in `ignore_remb` act
        on no REMB (so that they send key frames only when asked). `ice_servers` (a join result's
        `iceServers`) are the worker's TURN servers; with `relay_only` it gathers no host candidate.
        `looks` maps a source to the source whose picture or tone it sends, e.g. {"screen_share":
        "camera"}: a second sharer whose screen a viewer tells apart from the first one's."""
        worker = await _Worker.spawn()
        try:
            offer = await worker.call("offer", sources=list(sources), busy=list(busy),
                                      codecs=dict(codecs or {}), fps=fps, fast_h264=fast_h264,
                                      ignore_key_frame_requests=list(ignore_key_frame_requests), vbr_vp8=vbr_vp8,
                                      ignore_remb=list(ignore_remb), ice_servers=ice_servers,
                                      relay_only=relay_only, stamped=list(stamped), looks=dict(looks or {}))
            tracks = []
            for source in sources:
                entry = {"mid": offer["mids"][source], "source": source}
                look = (looks or {}).get(source, source)
                if source in VIDEO:
                    entry.update(width=VIDEO[look]["width"], height=VIDEO[look]["height"])
                tracks.append(entry)
            result = await client.request("publish_offer", timeout=timeout, sdp=offer["sdp"], tracks=tracks)
            answer = result["sdp"] if munge_answer is None else munge_answer(result["sdp"], result)
            await worker.call("answer", sdp=answer)
        except BaseException:
            await worker.close()
            raise
        pub = cls(client, worker, offer["mids"], result)
        pub.offer_sdp = offer["sdp"]
        return pub

    @property
    def tracks(self):
        return self.result["tracks"]

    @property
    def rejected(self):
        return self.result["rejected"]

    def track_id(self, source):
        """The trackId the server bound to `source`'s transceiver (None if it was rejected)."""
        mid = self.mids[source]
        return next((t["trackId"] for t in self.tracks if t["mid"] == mid), None)

    async def stats(self):
        """From the worker: {"connectionState": ..., "sent": {source: RTP packets sent},
        "bytesSent": {source: RTP bytes sent}, "encoders": {source: {"encoder": class name,
        "targetBitrate": bits per second} or None before the first frame}, "remb": {source:
        [[seconds since the worker started, bitrate], ...] of the REMBs naming its SSRC},
        "keyFrameRequests": {video source: PLIs and FIRs its sender got, acted on or not},
        "keyFramesSent": {video source: key frames sent}, "ignoringKeyFrameRequests": [sources]}."""
        return await self.worker.call("stats")

    async def stop_sender(self, source):
        """Ends one source's sender without a word to the server (RTCP BYE, then silence)."""
        await self.worker.call("stop_sender", source=source)

    async def end_track(self, source):
        """Ends one source's track (`track.stop()`, as an app does when its capture ends) and keeps its
        sender: no more RTP, while aiortc goes on sending sender reports for it; no BYE, no signal."""
        await self.worker.call("end_track", source=source)

    async def silence_sender(self, source):
        """Stops one source's RTP and RTCP without a BYE or a signal; the connection lives on."""
        await self.worker.call("silence_sender", source=source)

    async def crash(self):
        """Kills the worker process: its media stops mid-capture with neither BYE nor a signal."""
        if self.worker.proc.returncode is None:
            self.worker.proc.kill()
            await self.worker.proc.wait()

    async def close(self):
        await self.worker.close()


def unreject_all(sdp, result):
    """A `munge_answer` for a misbehaving client: every media section the server rejected (listed in
    `result["rejected"]`, port 0) is rebuilt from an accepted section of the same kind, its mid
    kept and its direction recvonly, so that aiortc starts sending on that transceiver anyway."""
    rejected = {r["mid"] for r in result["rejected"]}
    head, sections = _split_sdp(sdp)
    mid_of = [next(l[6:] for l in s if l.startswith("a=mid:")) for s in sections]
    accepted = {}
    for s, mid in zip(sections, mid_of):
        if mid not in rejected:
            accepted.setdefault(s[0].split()[0], s)     # "m=video" / "m=audio"
    out = []
    for s, mid in zip(sections, mid_of):
        if mid in rejected:
            template = accepted[s[0].split()[0]]
            s = [f"a=mid:{mid}" if l.startswith("a=mid:")
                 else "a=recvonly" if l in ("a=sendrecv", "a=sendonly", "a=recvonly", "a=inactive")
                 else l for l in template]
        out.append(s)
    head = [l + "".join(f" {m}" for m in sorted(rejected) if m not in l.split()[1:])
            if l.startswith("a=group:BUNDLE") else l for l in head]
    return "\r\n".join(head + [l for s in out for l in s]) + "\r\n"


def _split_sdp(sdp):
    """(session lines, [media section lines]) of an SDP text."""
    head, sections = [], []
    for line in sdp.strip().replace("\r\n", "\n").split("\n"):
        if line.startswith("m="):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
        else:
            head.append(line)
    return head, sections


async def _serve_publisher(reader):
    """The worker's loop: `offer` (sources) -> {sdp, mids}; `answer` (sdp) -> {}; `stats`; `close`."""
    pc = peer_connection()
    transceivers = {}
    rembs = {}
    requests = {}           # source -> PLIs and FIRs its sender got (acted on or not)
    ignoring = set()        # sources whose senders ignore key-frame requests and REMB
    deaf_to_remb = set()    # sources whose senders ignore REMB only
    key_frames = {}         # source -> its KeyFrameCounter, once the answer is applied
    started = time.monotonic()

    def watch_key_frame_requests(source, sender, ignore):
        """Counts the PLIs and FIRs the sender gets. With `ignore` (a static screen that sends a key
        frame only at the start) they go no further, and neither does REMB: aiortc's VP8 encoder
        starts again, with a key frame, whenever its target bitrate moves by more than 10%, and the
        server's REMB moves it from 500 kbit/s to aiortc's 1.5 Mbit/s maximum. A source in
        `deaf_to_remb` ignores REMB only, and answers key-frame requests."""
        requests[source] = 0
        handle_rtcp = sender._handle_rtcp_packet

        async def handler(packet):
            if isinstance(packet, RtcpPsfbPacket) and packet.fmt in (RTCP_PSFB_PLI, RTCP_PSFB_FIR):
                requests[source] += 1
                if ignore:
                    return
            if (ignore or source in deaf_to_remb) and isinstance(packet, RtcpPsfbPacket) \
                    and packet.fmt == RTCP_PSFB_APP:
                return
            await handle_rtcp(packet)
        sender._handle_rtcp_packet = handler     # the RTP router looks it up on every packet

    def record_remb(source, sender):
        """Wraps the sender's RTCP handler to note every REMB for its SSRC (aiortc acts on them by
        setting its encoder's target_bitrate, clamped to the encoder's range)."""
        rembs[source] = []
        handle_rtcp = sender._handle_rtcp_packet

        async def handler(packet):
            if isinstance(packet, RtcpPsfbPacket) and packet.fmt == RTCP_PSFB_APP:
                try:
                    bitrate, ssrcs = unpack_remb_fci(packet.fci)
                except ValueError:
                    bitrate, ssrcs = None, []
                if sender._ssrc in ssrcs:
                    rembs[source].append([round(time.monotonic() - started, 3), bitrate])
                    del rembs[source][:-200]
            await handle_rtcp(packet)
        sender._handle_rtcp_packet = handler     # the RTP router looks it up on every packet

    def encoder_of(sender):
        enc = getattr(sender, "_RTCRtpSender__encoder", None)     # aiortc's private encoder
        if enc is None:
            return None
        return {"encoder": type(enc).__name__, "targetBitrate": getattr(enc, "target_bitrate", None)}

    async def handle(req):
        nonlocal pc
        op = req["op"]
        if op == "offer":
            if req.get("relay_only"):
                # No host candidates: the only way out is the TURN server's relay.
                aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: []
            if req.get("ice_servers"):
                await pc.close()
                pc = peer_connection(req["ice_servers"])
            if req.get("fast_h264"):
                use_fast_x264()
            busy = set(req.get("busy") or ())
            codecs = req.get("codecs") or {}
            ignoring.update(req.get("ignore_key_frame_requests") or ())
            deaf_to_remb.update(req.get("ignore_remb") or ())
            if ignoring or req.get("vbr_vp8"):
                use_vbr_vp8()
            for source in req["sources"]:
                look = (req.get("looks") or {}).get(source, source)
                track = make_track(look, busy=source in busy, fps=req.get("fps"),
                                   stamped=source in (req.get("stamped") or ()))
                t = pc.addTransceiver(track, direction="sendonly")
                if source in codecs:
                    t.setCodecPreferences(codec_preferences(kind_of(source), codecs[source]))
                if source in VIDEO:
                    watch_key_frame_requests(source, t.sender, source in ignoring)
                record_remb(source, t.sender)
                transceivers[source] = t
            await pc.setLocalDescription(await pc.createOffer())
            return {"sdp": pc.localDescription.sdp, "mids": {s: t.mid for s, t in transceivers.items()}}
        if op == "answer":
            await pc.setRemoteDescription(RTCSessionDescription(sdp=req["sdp"], type="answer"))
            # setRemoteDescription gave each sender its transport and scheduled the connection, whose
            # senders start only after ICE and DTLS: nothing has been sent yet.
            for source, t in transceivers.items():
                if source in VIDEO:
                    key_frames[source] = KeyFrameCounter(t.sender._RTCRtpSender__transport, t.sender)
                    t.sender._RTCRtpSender__transport = key_frames[source]
            return {}
        if op == "ice_pair":
            # The nominated pair of the (one, bundled) ICE transport, as aioice has it.
            connection = next(iter(transceivers.values())).sender.transport.transport._connection
            pair = next(iter(connection._nominated.values()), None)
            if pair is None:
                return None
            return {"local": pair.local_candidate.type, "remote": pair.remote_candidate.type,
                    "remote_port": pair.remote_candidate.port}
        if op == "stats":
            sent, sent_bytes = {}, {}
            for source, t in transceivers.items():
                report = await t.sender.getStats()
                outbound = [s for s in report.values() if s.type == "outbound-rtp"]
                sent[source] = sum(s.packetsSent for s in outbound)
                sent_bytes[source] = sum(s.bytesSent for s in outbound)
            return {"connectionState": pc.connectionState, "sent": sent, "bytesSent": sent_bytes,
                    "encoders": {s: encoder_of(t.sender) for s, t in transceivers.items()},
                    "remb": rembs, "keyFrameRequests": dict(requests),
                    "keyFramesSent": {s: k.count for s, k in key_frames.items()},
                    "ignoringKeyFrameRequests": sorted(ignoring)}
        if op == "stop_sender":
            # Stops one sender the way a client's track.stop() does in aiortc: an RTCP BYE for its
            # SSRC, then nothing. The signaling side is not told.
            await transceivers[req["source"]].sender.stop()
            return {}
        if op == "end_track":
            transceivers[req["source"]].sender.track.stop()
            return {}
        if op == "silence_sender":
            # A capture that stops without a word while the connection lives on: the sender's RTP and
            # RTCP (BYE included) go nowhere from now on; the other senders and ICE go on.
            sender = transceivers[req["source"]].sender

            class _Silent:
                def __init__(self, inner):
                    self._inner = inner

                def __getattr__(self, name):
                    return getattr(self._inner, name)

                async def _send_rtp(self, data):
                    return None
            sender._RTCRtpSender__transport = _Silent(sender._RTCRtpSender__transport)
            return {}
        raise ValueError(f"unknown op {op!r}")

    try:
        while True:
            line = await reader.readline()
            if not line:
                return      # the parent went away
            req = json.loads(line)
            if req["op"] == "close":
                _reply({"ok": {}})
                return
            try:
                _reply({"ok": await handle(req)})
            except Exception as e:
                _reply({"error": f"{type(e).__name__}: {e}"})
    finally:
        await pc.close()


def _reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def _worker_main(max_seconds):
    reader = asyncio.StreamReader(limit=1 << 20)
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        await asyncio.wait_for(_serve_publisher(reader), max_seconds)
    except asyncio.TimeoutError:
        pass


# -- subscriber ------------------------------------------------------------------------------------

class TrackStats:
    """What a subscriber received on one track: `info` is its entry of a `subscriber_offer`'s
    `tracks` ({} if no offer named its mid), `remote_id` the track id aiortc took from `a=msid`."""

    def __init__(self, mid, kind, info, remote_id):
        self.mid = mid
        self.kind = kind
        self.info = info
        self.remote_id = remote_id
        self.frames = 0
        self.classes = collections.Counter()
        self.ended_at = None
        self.rtp_packets = 0        # RTP packets (RTX included) and their bytes (payload, padding, fixed header)
        self.rtp_bytes = 0
        self.first_payload = None   # the payload of the first RTP packet received (RTX included)
        self.first_frame_at = None  # time.monotonic() of the first decoded frame
        self.first_class = None     # what the first decoded frame showed (classify_video/_audio)
        self.live_at = None         # time.monotonic() of the first frame captured at or after the
                                    # subscriber's `live_after_ms` (a stamped source), when it is given

    @property
    def track_id(self):
        return self.info.get("trackId")

    @property
    def source(self):
        return self.info.get("source")

    @property
    def ended(self):
        return self.ended_at is not None

    @property
    def mismatched(self):
        """Frames classified as a known source other than the declared one."""
        return sum(n for c, n in self.classes.items() if c in SOURCES and c != self.source)

    def __repr__(self):
        return (f"<{self.source} {self.track_id} mid={self.mid} frames={self.frames} "
                f"classes={dict(self.classes)}{' ended' if self.ended else ''}>")


class Subscriber:
    """A participant's subscriber connection. From construction on it answers, in order, every
    `subscriber_offer` of `client` (offers that arrived earlier are still buffered there), and drains
    and classifies every track it receives. `client` must have joined.

    `tracks` maps each mid ever received to its TrackStats; `live` is the `tracks` of the latest
    offer, by mid; `error` is the exception that stopped the answering loop, if any. An offer with
    `reset` starts a new connection (the server's subscriber connection gathered too many ended
    sections): the old one is closed, its tracks (ended) move to `retired`, and mids start again."""

    def __init__(self, client, answer_delay=0, live_after_ms=None):
        self.client = client
        self.live_after_ms = live_after_ms  # see TrackStats.live_at
        self.answer_delay = answer_delay    # seconds between applying an answer (ICE and DTLS start) and sending it
        self.offer_times = []               # time.monotonic() when each offer arrived
        self.pc = peer_connection()
        self.tracks = {}
        self.live = {}
        self.revisions = []
        self.error = None
        self._known = {}        # every offer entry of this connection, by mid (mids are never reused)
        self.retired = []       # TrackStats of closed connections
        self.resets = 0
        self._drains = []
        self.pc.on("track", self._on_track)
        self._answering = asyncio.get_running_loop().create_task(self._answer_offers())

    @property
    def applied_offer(self):
        """The last subscriber offer this connection applied (`join`'s `subscriberOffer` when the
        client joins again after its room's node was lost), or None."""
        d = self.pc.remoteDescription
        return d.sdp if d is not None else None

    async def continue_with(self, client):
        """Goes on answering on this connection for `client`, the participant joined again (with
        `subscriberOffer`) after its room's node was lost: the old client's offers are over."""
        self._answering.cancel()
        await asyncio.gather(self._answering, return_exceptions=True)
        self.client = client
        self.error = None
        self._answering = asyncio.get_running_loop().create_task(self._answer_offers())

    async def _next_offer(self):
        # `expect` gives up after its timeout; a quiet minute is normal, so wait again.
        while not self.client.is_closed:
            try:
                return await self.client.expect("subscriber_offer", timeout=60)
            except AssertionError:
                continue
        return None

    async def _answer_offers(self):
        try:
            while (offer := await self._next_offer()) is not None:
                if offer.get("reset"):
                    await self.pc.close()
                    self.retired += self.tracks.values()
                    self.tracks, self._known = {}, {}
                    self.resets += 1
                    self.pc = peer_connection()
                    self.pc.on("track", self._on_track)
                self.offer_times.append(time.monotonic())
                self.live = {t["mid"]: t for t in offer["tracks"]}
                self._known.update(self.live)        # before ontrack runs, inside setRemoteDescription
                await self.pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
                await self.pc.setLocalDescription(await self.pc.createAnswer())
                if self.answer_delay:
                    await asyncio.sleep(self.answer_delay)
                await self.client.request("subscriber_answer", revision=offer["revision"],
                                          sdp=self.pc.localDescription.sdp)
                self.revisions.append(offer["revision"])
        except Exception as e:
            self.error = e

    def _on_track(self, track):
        transceiver = next(t for t in self.pc.getTransceivers() if t.receiver.track is track)
        mid = transceiver.mid
        stats = TrackStats(mid, track.kind, self._known.get(mid, {}), track.id)
        self.tracks[mid] = stats
        self._count_rtp(transceiver.receiver, stats)
        self._drains.append(asyncio.ensure_future(self._drain(track, stats, self.live_after_ms)))

    @staticmethod
    def _count_rtp(receiver, stats):
        """Counts the RTP the receiver gets (aiortc's inbound stats have no byte count): wraps its
        packet handler, which the RTP router looks up on every packet."""
        handle_rtp = receiver._handle_rtp_packet

        async def counting(packet, arrival_time_ms):
            if stats.first_payload is None:
                stats.first_payload = bytes(packet.payload)
            stats.rtp_packets += 1
            stats.rtp_bytes += 12 + 4 * len(packet.csrc) + len(packet.payload) + packet.padding_size
            await handle_rtp(packet, arrival_time_ms=arrival_time_ms)
        receiver._handle_rtp_packet = counting

    @staticmethod
    async def _drain(track, stats, live_after_ms=None):
        # Every track is drained: aiortc decodes and queues frames whether or not anyone reads them.
        classify = classify_video if track.kind == "video" else classify_audio
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:    # RTCP BYE from the server, or the connection closed
                stats.ended_at = time.monotonic()
                return
            decoded_at = time.monotonic()
            what = classify(frame)
            if stats.frames == 0:
                stats.first_frame_at = decoded_at
                stats.first_class = what
            stats.frames += 1
            stats.classes[what] += 1
            if (live_after_ms is not None and stats.live_at is None and track.kind == "video"
                    and stamp_not_before(read_stamp(frame), live_after_ms)):
                stats.live_at = decoded_at

    # -- queries -----------------------------------------------------------------------------------

    def by_track(self, track_id):
        """The track's stats: its live section's if it has one, else its latest section's (on this
        connection, then on closed ones). A track can come back on a new section (unsubscribed and
        subscribed again) or on a new connection (after a reset)."""
        for mid, st in self.tracks.items():
            if self.live.get(mid, {}).get("trackId") == track_id and st.track_id == track_id:
                return st
        earlier = list(self.tracks.values())[::-1] + self.retired[::-1]
        return next((st for st in earlier if st.track_id == track_id), None)

    def describe(self):
        state = f"{self.client.label}: pc {self.pc.connectionState}, answered {self.revisions}"
        if self.error:
            state += f", error {self.error!r}"
        return f"{state}, tracks {list(self.tracks.values())}"

    async def wait_until(self, predicate, what, timeout):
        """Polls `predicate()` until it holds; fails with the subscriber's state after `timeout`."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.error is not None:
                raise AssertionError(f"{self.describe()}: stopped answering offers") from self.error
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.describe()}: no {what} within {timeout}s")
            await asyncio.sleep(0.1)

    async def wait_frames(self, track_ids, count, timeout):
        """Waits until each of `track_ids` has delivered `count` decoded frames (counting from 0)."""
        def done():
            return all((s := self.by_track(t)) is not None and s.frames >= count for t in track_ids)
        await self.wait_until(done, f"{count} frames on each of {track_ids}", timeout)

    async def wait_more_frames(self, track_ids, count, timeout):
        """Waits for `count` more frames on each of `track_ids` than they have now."""
        base = {t: self.by_track(t).frames for t in track_ids}
        await self.wait_until(lambda: all(self.by_track(t).frames >= base[t] + count for t in track_ids),
                              f"{count} more frames on each of {track_ids}", timeout)

    async def wait_ended(self, track_id, timeout):
        await self.wait_until(lambda: (s := self.by_track(track_id)) is not None and s.ended,
                              f"end (RTCP BYE) of {track_id}", timeout)

    async def close(self):
        self._answering.cancel()
        await asyncio.gather(self._answering, return_exceptions=True)
        await self.pc.close()
        # Closing stops the receivers, which ends every drain with MediaStreamError.
        if self._drains:
            await asyncio.wait(self._drains, timeout=5)
        for d in self._drains:
            d.cancel()


if __name__ == "__main__":     # the worker: media_peer.py publisher-worker MAX_SECONDS
    asyncio.run(_worker_main(float(sys.argv[2])))
