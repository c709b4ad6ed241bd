// swift-tools-version:6.0
// Atrium: a self-hosted WebRTC SFU and signaling server. See ARCHITECTURE.md for the module map.
import PackageDescription

// Every Swift target: a file sees only the members of the modules it imports itself, and an import is
// internal unless it is marked `public` (or `package`) because its types appear in the module's API.
let imports: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// The Swift SDK's library (AtriumKit and the modules it imports): no unsafe flags, which SwiftPM refuses
// in a package an app depends on by version.
let sdk: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")] + imports

// The server's release builds optimize for size: at a few viewers a worker wakes some 70 times a second
// with its caches cold, and the smaller code cost less per packet there and no more at saturation
// (docs/benchmarks.md, "optimized for size").
let strict: [SwiftSetting] = sdk + [.unsafeFlags(["-Osize"], .when(configuration: .release))]

// The packet path's modules skip the runtime exclusivity checks in release builds (a thread-local
// access set per `inout` of a class's stored property: about 3 % of a worker's CPU in a meeting).
// Debug and sanitizer builds, where every test runs, keep them, and so do the fuzz builds (release,
// with ATRIUM_EXCLUSIVITY_CHECKED set); the compile-time checks stay.
let packetPath: [SwiftSetting] =
    strict
    + (Context.environment["ATRIUM_EXCLUSIVITY_CHECKED"] == nil
        ? [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))] : [])

let package = Package(
    name: "Atrium",
    products: [
        .executable(name: "atrium", targets: ["atrium"]),
        .executable(name: "atrium-viewers", targets: ["atrium-viewers"]),
        .library(name: "AtriumKit", targets: ["AtriumKit"]),
    ],
    targets: [
        // C libraries from Debian, each behind a shim header of prefixed static inline wrappers.
        .systemLibrary(name: "CWebSockets", pkgConfig: "libwebsockets", providers: [.apt(["libwebsockets-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSRTP", pkgConfig: "libsrtp2", providers: [.apt(["libsrtp2-dev"])]),
        // hiredis's .pc adds a flag SwiftPM refuses: the module map links `hiredis` itself.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        // Codecs for native clients (AtriumCodecs): libvpx's VP8 and libopus.
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        // Process-level C helpers Swift cannot write safely: signal handling, the housekeeping ticker, lws log limits.
        .target(name: "CAtriumSupport", dependencies: ["CWebSockets"]),
        // UDP, epoll and eventfd wrappers; a real C target because sendmmsg/recvmmsg need _GNU_SOURCE.
        .target(name: "CAtriumUDP"),
        // posix_spawn with every inherited descriptor closed (addclosefrom_np needs _GNU_SOURCE).
        .target(name: "CAtriumSpawn"),
        // AES-CTR, AES-GCM and HMAC-SHA1 contexts for AtriumSRTP's OpenSSL backend (a real C target: the
        // allocation-free HMAC restart goes through SHA1_* calls OpenSSL 3.0 marks deprecated).
        .target(name: "CAtriumSRTP", dependencies: ["COpenSSL"]),
        // SCTP for WebRTC data channels: usrsctp (Debian's libusrsctp-dev, a static library) behind an
        // integer id per association and two plain callbacks (its own take unions by value).
        .target(name: "CAtriumSCTP", linkerSettings: [.linkedLibrary("usrsctp")]),

        // Wire formats and pure values.
        .target(name: "AtriumModel", swiftSettings: sdk),
        .target(name: "AtriumJSON", dependencies: ["CJansson"], swiftSettings: sdk),
        .target(name: "AtriumCrypto", dependencies: ["COpenSSL"], swiftSettings: sdk),
        // SFrame (RFC 9605) for the clients' end-to-end encryption: the same frames as the JavaScript SDK's.
        .target(name: "AtriumSFrame", dependencies: ["AtriumCrypto", "AtriumSync"], swiftSettings: sdk),
        .target(name: "AtriumLog", dependencies: ["AtriumJSON"], swiftSettings: strict),
        .target(name: "AtriumMetrics", swiftSettings: strict),
        .target(name: "AtriumHTTP", swiftSettings: strict),
        // The signaling protocol as Swift values: every request, answer and event of docs/protocol.md,
        // shared by the server and Swift clients.
        .target(name: "AtriumProtocol", dependencies: ["AtriumJSON", "AtriumModel"], swiftSettings: sdk),
        // Media-plane wire formats: pure codecs, bytes in and values or typed errors out.
        .target(name: "AtriumBytes", swiftSettings: strict),
        .target(name: "AtriumSTUN", dependencies: ["AtriumCrypto", "AtriumBytes"], swiftSettings: strict),
        .target(name: "AtriumRTP", dependencies: ["AtriumBytes"], swiftSettings: packetPath),
        // The forwarding core's pure decisions (sequence and timestamp rewriting, key frames).
        .target(name: "AtriumForwarding", swiftSettings: packetPath),
        .target(name: "AtriumSDP", swiftSettings: strict),
        // Bandwidth estimation toward receivers, as pure values (Google congestion control's trendline
        // and rate control).
        .target(name: "AtriumCongestion", swiftSettings: strict),
        // SRTP/SRTCP (AES-CM-HMAC-SHA1-80, AEAD-AES-128-GCM) over OpenSSL, or libsrtp2 (its reference).
        .target(name: "AtriumSRTP", dependencies: ["CSRTP", "CAtriumSRTP"], swiftSettings: packetPath),
        // DTLS-SRTP handshake state machine (OpenSSL), handing keys to AtriumSRTP.
        // Its endpoints' state is read for every transport on every 20 ms tick of the worker.
        .target(name: "AtriumDTLS", dependencies: ["COpenSSL", "AtriumSRTP"], swiftSettings: packetPath),

        // Media-plane transports: batched UDP sockets and the poller; ICE-lite as a pure state machine.
        .target(name: "AtriumUDP", dependencies: ["CAtriumUDP", "AtriumBytes"], swiftSettings: packetPath),
        .target(name: "AtriumICE", dependencies: ["AtriumSTUN"], swiftSettings: strict),
        // SCTP over DTLS for data channels (usrsctp) and the channels' own protocol, as a pure state machine.
        .target(name: "AtriumSCTP", dependencies: ["CAtriumSCTP", "AtriumSync"], swiftSettings: strict),
        // The forwarding core and its thread: transports (ICE-lite, DTLS-SRTP), producers, consumers.
        .target(
            name: "AtriumMedia",
            dependencies: [
                "AtriumUDP", "AtriumICE", "AtriumSTUN", "AtriumDTLS", "AtriumSRTP", "AtriumRTP", "AtriumForwarding",
                "AtriumBytes", "AtriumLog", "AtriumCongestion", "AtriumSync", "AtriumSCTP",
            ],
            swiftSettings: packetPath),
        // JSEP offer/answer for the publisher and subscriber connections, as pure functions over AtriumSDP.
        .target(name: "AtriumJSEP", dependencies: ["AtriumSDP"], swiftSettings: strict),

        // Services built on them.
        .target(
            name: "AtriumAuth", dependencies: ["AtriumModel", "AtriumJSON", "AtriumCrypto"], swiftSettings: strict),
        .target(name: "AtriumStore", dependencies: ["AtriumModel", "CSQLite"], swiftSettings: strict),
        // Redis for the cluster: connections, typed replies, reconnects, a pub/sub thread (hiredis).
        // A value behind a pthread mutex, for the few hand-offs between threads (never per packet), and the
        // one way a thread of our own starts and is joined.
        .target(name: "AtriumSync", swiftSettings: sdk),
        .target(name: "AtriumRedis", dependencies: ["CHiredis", "AtriumSync"], swiftSettings: strict),
        .target(name: "AtriumConfig", dependencies: ["AtriumJSON", "AtriumLog", "AtriumBytes"], swiftSettings: strict),
        .target(
            name: "AtriumEdge",
            dependencies: ["AtriumHTTP", "AtriumLog", "CWebSockets", "CAtriumSupport", "AtriumMetrics"],
            swiftSettings: strict
        ),
        // The seams between the edges and the cluster: a session relay and a node directory. The edges
        // call them; the cluster implements them (one node has none).
        .target(
            name: "AtriumRouting", dependencies: ["AtriumHTTP", "AtriumJSON", "AtriumModel"], swiftSettings: strict),
        // Rooms: the pure room and share state machine, the hub that owns the live rooms, and the typed
        // commands it applies (no JSON: the edges encode its values).
        .target(
            name: "AtriumRooms", dependencies: ["AtriumModel", "AtriumAuth", "AtriumMetrics"],
            swiftSettings: strict),
        // The rooms' wire forms at the edges: the JSON clients, the admin API and webhooks see, and the
        // documented error codes of the hub's refusals.
        .target(
            name: "AtriumRoomCoding", dependencies: ["AtriumRooms", "AtriumModel", "AtriumJSON", "AtriumProtocol"],
            swiftSettings: strict),
        // The cluster over Redis: node records and heartbeats, room ownership and placement, the Redis
        // room store, and the relay of sessions and admin calls to the node that owns a room.
        .target(
            name: "AtriumCluster",
            dependencies: [
                "AtriumRedis", "AtriumModel", "AtriumStore", "AtriumJSON", "AtriumRooms", "AtriumHTTP", "AtriumRouting",
                "AtriumProtocol", "AtriumSync", "AtriumCrypto", "AtriumSRTP",
            ],
            swiftSettings: strict),
        .target(
            name: "AtriumAdminAPI",
            dependencies: [
                "AtriumHTTP", "AtriumAuth", "AtriumModel", "AtriumJSON", "AtriumMetrics", "AtriumRooms",
                "AtriumRecording", "AtriumRoomCoding", "AtriumProtocol", "AtriumRouting",
            ],
            swiftSettings: strict
        ),
        // The signaling side of the media plane: transports, mid bindings, offers and answers, and the
        // reconcile that keeps the forwarding core in line with the rooms, behind `MediaPlane`.
        .target(
            name: "AtriumMediaControl",
            dependencies: [
                "AtriumMedia", "AtriumJSEP", "AtriumSDP", "AtriumRooms", "AtriumModel", "AtriumJSON", "AtriumICE",
                "AtriumUDP", "AtriumForwarding", "AtriumCongestion", "AtriumRoomCoding", "AtriumProtocol",
                "AtriumMetrics", "AtriumDTLS",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "AtriumSignal",
            dependencies: [
                "AtriumAuth", "AtriumJSON", "AtriumModel", "AtriumRooms", "AtriumHTTP", "AtriumMediaControl",
                "AtriumSDP", "AtriumRoomCoding", "AtriumProtocol", "AtriumRouting", "AtriumMetrics",
            ],
            swiftSettings: strict
        ),

        // Webhooks: room events signed and delivered from a durable outbox, one thread per endpoint, over
        // a small HTTP/1.1 client (OpenSSL for https).
        .target(
            name: "AtriumWebhook",
            dependencies: [
                "AtriumRooms", "AtriumModel", "AtriumJSON", "AtriumCrypto", "AtriumStore", "AtriumLog", "COpenSSL",
                "AtriumRoomCoding", "AtriumSync", "AtriumProtocol", "AtriumMetrics",
            ],
            swiftSettings: strict
        ),

        // Recordings: ffmpeg processes the server starts and supervises, fed plain RTP by the media worker.
        .target(
            name: "AtriumRecording",
            dependencies: ["AtriumRooms", "AtriumModel", "AtriumJSON", "AtriumLog", "CAtriumSpawn"],
            swiftSettings: strict),

        // The meeting page, its assets and the JavaScript client, served over HTTP.
        .target(name: "AtriumWeb", dependencies: ["AtriumHTTP", "AtriumJSON", "AtriumModel"], swiftSettings: strict),
        // Composition root and the command line.
        .target(
            name: "AtriumServer",
            dependencies: [
                "AtriumConfig", "AtriumEdge", "AtriumAdminAPI", "AtriumSignal", "AtriumStore", "AtriumAuth",
                "AtriumMetrics", "AtriumLog", "AtriumCrypto", "AtriumMedia", "AtriumMediaControl", "AtriumUDP",
                "AtriumWeb", "AtriumJSON", "AtriumModel", "AtriumRooms", "AtriumCluster", "AtriumRedis",
                "AtriumHTTP", "AtriumWebhook", "AtriumRecording", "AtriumDTLS", "CAtriumSupport", "AtriumProtocol",
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "atrium",
            dependencies: [
                "AtriumServer", "AtriumConfig", "AtriumAuth", "AtriumLog", "AtriumJSON", "AtriumModel", "AtriumKit",
                "AtriumNative", "AtriumProtocol", "AtriumCodecs", "AtriumSync",
            ],
            swiftSettings: strict
        ),

        // libFuzzer targets (`make fuzz`); without -DFUZZING they replay their corpus (`make test`).
        .target(name: "CFuzz", path: "Fuzz/CFuzz"),
        .target(name: "FuzzSupport", dependencies: ["CFuzz"], path: "Fuzz/Support", swiftSettings: imports),
        .executableTarget(
            name: "FuzzSTUN", dependencies: ["AtriumSTUN", "FuzzSupport"], path: "Fuzz/STUN", swiftSettings: imports),
        .executableTarget(
            name: "FuzzRTP", dependencies: ["AtriumRTP", "AtriumForwarding", "FuzzSupport"], path: "Fuzz/RTP",
            swiftSettings: imports),
        .executableTarget(
            name: "FuzzRTCP", dependencies: ["AtriumRTP", "FuzzSupport"], path: "Fuzz/RTCP", swiftSettings: imports),
        .executableTarget(
            name: "FuzzSDP", dependencies: ["AtriumSDP", "AtriumJSEP", "FuzzSupport"], path: "Fuzz/SDP",
            swiftSettings: imports),
        .executableTarget(
            name: "FuzzJSON", dependencies: ["AtriumJSON", "FuzzSupport"], path: "Fuzz/JSON", swiftSettings: imports),
        .executableTarget(
            name: "FuzzDTLS", dependencies: ["AtriumDTLS", "FuzzSupport"], path: "Fuzz/DTLS", swiftSettings: imports),

        // Load clients for the benchmarks and their test: many cheap WebRTC peers in one process and on
        // one thread (ICE checks, DTLS-SRTP, counting stamped RTP without decoding), and the publisher
        // sending stamped VP8-looking and Opus-sized packets; bench/viewers_sweep.py drives it.
        .target(
            name: "AtriumLoadPeer",
            dependencies: ["AtriumSTUN", "AtriumDTLS", "AtriumSRTP", "AtriumRTP", "AtriumUDP"],
            swiftSettings: strict),
        .executableTarget(
            name: "atrium-viewers",
            dependencies: ["AtriumLoadPeer", "AtriumDTLS", "AtriumJSON", "AtriumUDP"],
            swiftSettings: strict),

        // `make bench`: SRTP nanoseconds per packet, per profile and backend (bench/srtp_bench.py runs it).
        .executableTarget(
            name: "SRTPBench", dependencies: ["AtriumSRTP"], path: "bench/SRTPBench", swiftSettings: strict),

        // Test support: counts the calling thread's heap allocations and Swift retains/releases (the
        // packet path's regression tests), by the test executable's own malloc and the runtime's hooks.
        .target(name: "CAllocationCounter", path: "Tests/CAllocationCounter"),
        // Captured SDPs and the seeded generator of the malformed-input corpora, for every floor's tests.
        .target(
            name: "AtriumTestSupport", dependencies: ["AtriumCongestion", "AtriumSDP"], path: "Tests/AtriumTestSupport",
            exclude: ["Fixtures"], swiftSettings: imports),
        // VP8 and Opus encoding and decoding for native clients (libvpx, libopus).
        .target(name: "AtriumCodecs", dependencies: ["CVPX", "COpus"], swiftSettings: strict),
        // Native media for AtriumKit on Linux: Atrium's own ICE, DTLS and SRTP, libvpx and libopus.
        .target(
            name: "AtriumNative",
            dependencies: [
                "AtriumKit", "AtriumCodecs", "AtriumLoadPeer", "AtriumDTLS", "AtriumRTP", "AtriumSDP", "AtriumUDP",
                "AtriumModel", "AtriumProtocol", "AtriumSync", "AtriumSFrame",
            ], swiftSettings: strict),
        // The Swift client SDK: a participant's Room over /v1/signal with the server's own protocol
        // types, the share API in the seeds' terms, and the broadcast-extension channel.
        .target(
            name: "AtriumKit",
            dependencies: [
                "AtriumProtocol", "AtriumJSON", "AtriumModel", "AtriumSFrame", "AtriumCrypto", "CWebSockets",
            ],
            swiftSettings: sdk),
        // Tests by floor, so a change to a codec does not rebuild the cluster's tests: the protocol's own
        // (no server), wire formats, media, rooms and their signaling, and the server's parts.
        .testTarget(name: "AtriumCodecsTests", dependencies: ["AtriumCodecs"], swiftSettings: imports),
        .testTarget(
            name: "AtriumKitTests",
            dependencies: [
                "AtriumKit", "AtriumNative", "AtriumCodecs", "AtriumProtocol", "AtriumModel", "AtriumSync",
                "AtriumSFrame",
                "AtriumJSEP",
                "AtriumSDP",
            ],
            swiftSettings: imports),
        .testTarget(
            name: "AtriumProtocolTests", dependencies: ["AtriumProtocol", "AtriumJSON", "AtriumModel"],
            swiftSettings: imports),
        .testTarget(
            name: "AtriumWireTests",
            dependencies: [
                "AtriumCongestion", "AtriumCrypto", "AtriumDTLS", "AtriumForwarding", "AtriumICE", "AtriumJSEP",
                "AtriumJSON", "AtriumRTP", "AtriumSCTP", "AtriumSDP", "AtriumSRTP", "AtriumSTUN", "AtriumTestSupport",
                "COpenSSL", "AtriumSFrame",
            ],
            swiftSettings: imports),
        .testTarget(
            name: "AtriumMediaTests",
            dependencies: [
                "AtriumCongestion", "AtriumDTLS", "AtriumForwarding", "AtriumICE", "AtriumLoadPeer", "AtriumLog",
                "AtriumMedia", "AtriumRTP", "AtriumSRTP", "AtriumSTUN", "AtriumUDP", "CAllocationCounter",
                "AtriumTestSupport",
            ],
            swiftSettings: imports),
        .testTarget(
            name: "AtriumRoomsTests",
            dependencies: [
                "AtriumAuth", "AtriumCongestion", "AtriumCrypto", "AtriumForwarding", "AtriumICE", "AtriumJSEP",
                "AtriumJSON", "AtriumMedia", "AtriumMediaControl", "AtriumModel", "AtriumProtocol", "AtriumRoomCoding",
                "AtriumRooms", "AtriumSDP", "AtriumSignal", "AtriumStore", "AtriumTestSupport", "AtriumUDP",
                "AtriumHTTP", "AtriumMetrics",
            ],
            swiftSettings: imports),
        .testTarget(
            name: "AtriumServerTests",
            dependencies: [
                "AtriumAdminAPI", "AtriumAuth", "AtriumCluster", "AtriumConfig", "AtriumCrypto", "AtriumDTLS",
                "AtriumEdge", "AtriumForwarding", "AtriumHTTP", "AtriumJSON", "AtriumLog", "AtriumMedia",
                "AtriumMediaControl", "AtriumMetrics", "AtriumModel", "AtriumProtocol", "AtriumRecording",
                "AtriumRedis", "AtriumRooms", "AtriumRouting",
                "AtriumServer", "AtriumSignal", "AtriumStore", "AtriumTestSupport", "AtriumUDP", "AtriumWebhook",
            ],
            swiftSettings: imports),
    ],
    swiftLanguageModes: [.v6]
)
