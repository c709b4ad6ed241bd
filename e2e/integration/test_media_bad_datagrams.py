"""Malformed datagrams at the media port: random bytes, truncated and corrupted STUN, STUN with
unknown credentials, DTLS-looking garbage, RTP and RTCP headers without valid SRTP, empty and
oversized datagrams, from a stranger's address and from none the server knows. The worker drops and
counts them; the session on the same port keeps forwarding."""
import asyncio
import os
import random
import re
import socket
import struct

from test_media import metric, run_in_room, sample_of, snapshot_after, wait_metric_above


def media_port(sdp):
    return int(re.search(r"a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+) typ host", sdp).group(1))


def corpus(rng):
    out = [b"", b"\x00", b"\xff" * 1500, bytes(2000)]
    stun_header = struct.pack("!HHI12s", 0x0001, 0, 0x2112A442, bytes(12))
    out.append(stun_header)                                            # a Binding request, no attributes
    out.append(stun_header[:10])                                       # truncated header
    out.append(struct.pack("!HHI12s", 0x0001, 200, 0x2112A442, bytes(12)) + bytes(8))   # length past the end
    user = b"nosuchufrag:x"
    attr = struct.pack("!HH", 0x0006, len(user)) + user + bytes((4 - len(user) % 4) % 4)
    out.append(struct.pack("!HHI12s", 0x0001, len(attr), 0x2112A442, bytes(12)) + attr)  # unknown ufrag
    out.append(bytes([22, 0xFE, 0xFD]) + bytes(10) + b"\x00\x10" + bytes(16))              # DTLS-looking record
    out.append(bytes([0x80, 96]) + bytes(10) + bytes(100))                                # RTP header, no SRTP
    out.append(bytes([0x80, 200, 0, 6]) + bytes(24))                                      # RTCP SR, no SRTCP
    out.append(bytes([0x90, 96]) + bytes(10) + b"\xbe\xde\xff\xff")                       # extension past the end
    for _ in range(200):
        first = rng.choice([0, 1, 20, 22, 64, 128, 144, 200, rng.randrange(256)])
        out.append(bytes([first]) + rng.randbytes(rng.randrange(0, 1400)))
    return out


def test_garbage_at_the_media_port_is_dropped_and_media_keeps_flowing(media_server):
    rng = random.Random(20261130)

    async def scenario(s):
        _, _, sub, pub, camera = await s.camera_flowing(10)
        port = media_port(pub.result["sdp"])
        dropped = await metric(media_server, "atrium_media_dropped_packets_total")

        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            for datagram in corpus(rng) * 3:
                try:
                    sock.sendto(datagram, ("127.0.0.1", port))
                except OSError:
                    pass            # larger than the loopback MTU allows: the kernel refuses it
                await asyncio.sleep(0)
        finally:
            sock.close()

        await sub.wait_more_frames([camera], 30, timeout=10)
        await wait_metric_above(media_server, dropped + 100, "atrium_media_dropped_packets_total")
        assert media_server.alive()

    run_in_room(media_server, "media-garbage", scenario)


def stun_check(local_ufrag, remote_ufrag, password, tie_breaker):
    """An ICE connectivity check (RFC 8445 section 7.1.2) signed with the server's password: USERNAME,
    ICE-CONTROLLING, PRIORITY, MESSAGE-INTEGRITY and FINGERPRINT (RFC 8489 sections 14.5, 14.7)."""
    import binascii
    import hashlib
    import hmac
    import struct

    def attr(kind, value):
        pad = (4 - len(value) % 4) % 4
        return struct.pack("!HH", kind, len(value)) + value + b"\0" * pad

    tid = os.urandom(12)
    body = attr(0x0006, f"{local_ufrag}:{remote_ufrag}".encode())
    body += attr(0x802A, struct.pack("!Q", tie_breaker)) + attr(0x0024, struct.pack("!I", 0x6E0001FF))
    header = lambda length: struct.pack("!HHI", 0x0001, length, 0x2112A442) + tid
    mac = hmac.new(password.encode(), header(len(body) + 24) + body, hashlib.sha1).digest()
    body += attr(0x0008, mac)
    crc = binascii.crc32(header(len(body) + 8) + body) ^ 0x5354554E
    body += attr(0x8028, struct.pack("!I", crc))
    return header(len(body)) + body


def test_valid_checks_from_many_ports_do_not_grow_the_address_tables(media_server):
    """A peer that sends valid, signed checks from 200 source ports is remembered at 8 of them at
    most (the ICE agent's valid pairs), and the meeting goes on. The gauge counts every transport of
    the server (the module's earlier rooms may still hold theirs during their resume window), so the
    check is on its growth, read from metrics snapshots taken before the first check and after the
    last."""
    async def scenario(s):
        _, _, sub, pub, camera = await s.camera_flowing(5)
        answer, offer = pub.result["sdp"], pub.offer_sdp
        local_ufrag = re.search(r"a=ice-ufrag:(\S+)", answer).group(1)
        password = re.search(r"a=ice-pwd:(\S+)", answer).group(1)
        remote_ufrag = re.search(r"a=ice-ufrag:(\S+)", offer).group(1)
        port = media_port(answer)
        # alice's 1 among them
        base = sample_of(await snapshot_after(media_server, camera), "atrium_media_peer_addresses")
        for i in range(200):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                u.bind(("127.0.0.1", 0))
                u.sendto(stun_check(local_ufrag, remote_ufrag, password, i + 1), ("127.0.0.1", port))
                u.settimeout(2)
                reply, _ = u.recvfrom(2048)
                assert reply[:2] == b"\x01\x01", reply[:2].hex()       # a Binding success response
        addresses = sample_of(await snapshot_after(media_server, camera), "atrium_media_peer_addresses")
        print("peer addresses before/after:", base, addresses)
        assert addresses <= base + 7, (base, addresses)     # alice's transport: at most 8 in all
        await sub.wait_more_frames([camera], 20, timeout=10)

    run_in_room(media_server, "media-many-ports", scenario)
