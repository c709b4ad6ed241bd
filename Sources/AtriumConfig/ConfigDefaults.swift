import AtriumLog

/// Each setting's default as `--help` prints it, read from a fresh `ServerConfig` so the text cannot
/// drift from the value `serve` uses.
enum ConfigDefaults {
    static func text(_ path: String) -> String {
        let c = ServerConfig()
        switch path {
        case "bind": return c.bind
        case "port": return String(c.port)
        case "store": return c.store.rawValue
        case "dataDir": return c.dataDir
        case "dev": return String(c.dev)
        case "log.level": return "info"
        case "log.format": return c.logFormat.rawValue
        case "limits.maxBodyBytes": return String(c.maxBodyBytes)
        case "limits.requestTimeoutSeconds": return String(c.requestTimeout)
        case "limits.maxConnections": return String(c.maxConnections)
        case "limits.maxConnectionsPerAddress": return String(c.maxConnectionsPerAddress)
        case "auth.leewaySeconds": return String(c.tokenLeeway)
        case "signal.authTimeoutSeconds": return String(c.signalAuthTimeout)
        case "signal.idleTimeoutSeconds": return String(c.signalIdleTimeout)
        case "signal.stallTimeoutSeconds": return String(c.signalStallTimeout)
        case "signal.resumeWindowSeconds": return String(c.resumeWindow)
        case "rooms.autoCreate": return c.autoCreateRooms
        case "web.dir": return c.webDir
        case "media.udpPort": return String(c.udpPort)
        case "media.bind": return c.mediaBind
        case "media.udpPorts": return "from media.udpPort on"
        case "media.workers":
            return "\(c.mediaWorkers) (the cores the process may use, at most \(MediaPortPlan.defaultMaxWorkers))"
        case "media.roomSpread": return String(c.mediaRoomSpread)
        case "cluster.edgeAfter": return String(c.edgeAfter)
        case "media.announce": return "the bind address"
        case "media.testLossPercent": return String(c.mediaLossPercent)
        case "media.maxPublishBitrate": return String(c.maxPublishBitrate)
        case "media.keyFrameCacheBytes": return String(c.keyFrameCacheBytes)
        case "media.keyFrameCacheSeconds": return String(c.keyFrameCacheSeconds)
        case "media.tcpPort": return "\(c.mediaTCPPort) (off)"
        case "turn.ttlSeconds": return String(c.turnTTL)
        case "webhookTimeoutSeconds": return String(c.webhookTimeout)
        case "recording.ffmpeg": return c.ffmpeg
        default: return "none"
        }
    }
}
