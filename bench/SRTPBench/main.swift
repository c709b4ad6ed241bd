// SRTP micro benchmark (`make bench`, through bench/srtp_bench.py): CPU nanoseconds (the thread's own
// clock, so a loaded machine does not inflate them) per protect and per
// unprotect of one RTP packet, per profile and backend, for an audio-sized and a video-sized packet.
// With bench/malloc_count.c preloaded, SIGUSR2 before and after each timed loop makes the preload
// print its allocation count, so the script can report allocations per packet too.
import AtriumSRTP
import Glibc

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) * 1e9 + Double(t.tv_nsec)
}

func mark(_ label: String) {
    let line = "MARK \(label)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    raise(SIGUSR2)
}

let counting = getenv("LD_PRELOAD") != nil

let batch = 8192
let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 6
let stride = 1300
/// `SRTPBench ROUNDS [openssl|libsrtp]`: one backend alone, for `perf record`.
let only = CommandLine.arguments.dropFirst(2).first

for size in [100, 1200] {
    for profile in [SRTPProfile.aeadAES128GCM, .aesCM128HMACSHA1_80] {
        for backend in SRTPBackend.allCases where only == nil || only == backend.description {
            let key = [UInt8](repeating: 0x42, count: profile.keyLength)
            let salt = [UInt8](repeating: 0x24, count: profile.saltLength)
            let sender = try SRTPSession(
                profile: profile, masterKey: key, masterSalt: salt, direction: .outbound,
                allowRepeatTransmission: true, backend: backend)
            let receiver = try SRTPSession(
                profile: profile, masterKey: key, masterSalt: salt, direction: .inbound, backend: backend)
            var template = [UInt8](repeating: 0xAB, count: size)
            template[0] = 0x80
            template[1] = 96
            template[8] = 0x12
            var store = [UInt8](repeating: 0, count: batch * stride)
            var lengths = [Int](repeating: 0, count: batch)
            var seq: UInt16 = 0
            var protectNs = 0.0
            var unprotectNs = 0.0
            var copyNs = 0.0
            let name = "\(size) \(profile) \(backend)"
            try store.withUnsafeMutableBytes { all in
                try template.withUnsafeBytes { t in
                    for round in 0..<rounds {
                        // The copy into the slot is part of the loop; timed alone and taken off.
                        let c0 = now()
                        for i in 0..<batch {
                            UnsafeMutableRawBufferPointer(rebasing: all[(i * stride)..<(i * stride + size)]).copyMemory(
                                from: t)
                        }
                        copyNs += now() - c0
                        if round == rounds - 1 && counting { mark("protect \(name)") }
                        let t0 = now()
                        for i in 0..<batch {
                            let slot = UnsafeMutableRawBufferPointer(rebasing: all[(i * stride)..<((i + 1) * stride)])
                            slot.copyMemory(from: t)
                            slot.storeBytes(of: seq.bigEndian, toByteOffset: 2, as: UInt16.self)
                            seq &+= 1
                            lengths[i] = try sender.protect(rtp: slot, length: size)
                        }
                        protectNs += now() - t0
                        if round == rounds - 1 && counting { mark("protect-end \(name)") }
                        if round == rounds - 1 && counting { mark("unprotect \(name)") }
                        let u0 = now()
                        for i in 0..<batch {
                            let slot = UnsafeMutableRawBufferPointer(rebasing: all[(i * stride)..<((i + 1) * stride)])
                            _ = try receiver.unprotect(srtp: slot, length: lengths[i])
                        }
                        unprotectNs += now() - u0
                        if round == rounds - 1 && counting { mark("unprotect-end \(name)") }
                    }
                }
            }
            let n = Double(batch * rounds)
            let p = (protectNs - copyNs) / n
            let u = unprotectNs / n
            print(
                "srtp \(size) bytes  \(profile == .aeadAES128GCM ? "AEAD_AES_128_GCM       " : "AES_CM_128_HMAC_SHA1_80")"
                    + "  \(backend == .openSSL ? "openssl" : "libsrtp")  protect \(Int(p.rounded())) ns"
                    + "  unprotect \(Int(u.rounded())) ns")
        }
    }
}
