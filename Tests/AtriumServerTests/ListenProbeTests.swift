import AtriumServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ListenProbe`: what start-up and `config check` tell a person about an address or a port, checked
/// on loopback (192.0.2.1, TEST-NET-1, is never an address of this machine; nothing is sent).
struct ListenProbeTests {
    @Test func aFreeLoopbackPortBinds() {
        #expect(ListenProbe.check(address: "127.0.0.1", port: 0) == nil)
        #expect(ListenProbe.check(address: "127.0.0.1", port: 0, udp: true) == nil)
    }

    @Test func anAddressOfAnotherMachineIsNotLocal() {
        #expect(ListenProbe.check(address: "192.0.2.1", port: 0) == .notLocal)
        #expect(
            ListenProbe.message(
                .notLocal, address: "192.0.2.1", port: 8800, addressFlag: "--bind", portFlag: "--port", proto: "TCP")
                == "--bind 192.0.2.1 is not an address of this machine: use 127.0.0.1 (this machine only), "
                + "0.0.0.0 (every interface) or one of the machine's own addresses")
    }

    @Test func aHostNameIsNotAnAddress() {
        #expect(ListenProbe.check(address: "localhost", port: 0) == .notAnAddress)
        #expect(ListenProbe.check(address: "127.0.0.1", port: 70000) == .notAnAddress)
    }

    @Test func aTakenUDPPortIsInUse() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        let port = Int(UInt16(bigEndian: a.sin_port))
        #expect(ListenProbe.check(address: "127.0.0.1", port: port, udp: true) == .portInUse)
        #expect(
            ListenProbe.message(
                .portInUse, address: "127.0.0.1", port: port, addressFlag: "--media-bind", portFlag: "--udp-port",
                proto: "UDP")
                == "UDP port \(port) is already in use on 127.0.0.1 (another atrium running?): stop that process, "
                + "or choose another port with --udp-port N (--udp-port 0 picks a free one)")
    }
}
