import AtriumConfig

/// The usage text of each command (`atrium COMMAND --help`), with every default.
enum Usage {
    static let overview = """
        Usage:
          atrium serve [options]          run the server (atrium serve --help lists every setting)
          atrium token create [options]   mint a participant or admin token (atrium token create --help)
          atrium config check FILE        check a config file (atrium config check --help)
          atrium share --url U --token T  share a test pattern or a file as a native participant (atrium share --help)
          atrium watch --url U --token T  receive and decode a share as a native viewer (atrium watch --help)
          atrium version                  print the version
          atrium help                     this text

        Options start with two dashes (--port 8800 or --port=8800).
        """

    static var serve: String {
        """
        Usage: atrium serve [--config FILE] [--dev] [settings]

        Runs the HTTP, WebSocket and media server until SIGINT or SIGTERM.
          --config FILE                 a JSON config file (also ATRIUM_CONFIG); default: none
          --help                        this text

        Settings (flag, environment variable, config file field, default); precedence flag > environment > file > default:
        \(settingsTable)
        """
    }

    static var settingsTable: String {
        ConfigLoader.settingFlags.map { f in
            "  \(f.flag.padded(32))\(f.env.padded(36))\(f.path.padded(34))default \(f.defaultText)\n"
                + "      \(f.help)"
        }.joined(separator: "\n")
    }

    static let share = """
        Usage: atrium share --url ws://HOST:PORT --token TOKEN [--pattern | --y4m FILE | --ivf FILE] [--camera]
                            [--fps N] [--tone HZ] [--seconds S] [--drop-every N] [--passphrase P]

        Joins the token's room as a native participant (Atrium's own ICE, DTLS and SRTP; libvpx, libopus)
        and shares a video source as VP8 until SIGINT or SIGTERM.
          --pattern         a test pattern (the default): blue with white stripes, 1280x720, its frame
                            number stamped in the top row
          --y4m FILE        the pictures of a Y4M file (4:2:0), looping, at its frame rate
          --ivf FILE        the VP8 frames of an IVF file as they are, looping (a PLI resends its last key frame)
          --camera          publish it as a camera instead of a screen share
          --fps N           frames per second, 1 to 60; default 15
          --tone HZ         send an Opus tone of that pitch beside it (share audio, or a microphone)
          --seconds S       stop after S seconds; default: never
          --drop-every N    drop every Nth video packet before sending (a lossy path; NACKs repair it)
          --passphrase P    the passphrase of an end-to-end encrypted room: every frame is encrypted
                            (SFrame, as the JavaScript SDK's; the key rolls when someone leaves, as
                            the meeting page's does); such a room refuses to join without it
        SIGUSR1 pauses the share, SIGUSR2 resumes it. Prints the room's share events as JSON lines.
        """

    static let watch = """
        Usage: atrium watch --url ws://HOST:PORT --token TOKEN [--source SOURCE] [--participant IDENTITY]
                            [--share SHARE_ID] [--out FILE.ivf | FILE.y4m] [--seconds S] [--drop-every N]
                            [--estimate BPS] [--passphrase P]

        Joins the token's room as a native viewer, receives the room's media (VP8, Opus), decodes it, and
        prints a JSON line per second: frames, key frames, kbit/s, size, NACKs and PLIs sent.
          --source SOURCE       the video to watch: screen_share (default) or camera
          --participant IDENTITY  only that participant's
          --share SHARE_ID      only that share's video (one of several at once)
          --out FILE            write it: .ivf keeps the VP8 frames as received, .y4m the decoded pictures
                                (the first video that matches is followed)
          --seconds S           leave after S seconds; default: at SIGINT or SIGTERM
          --drop-every N        drop every Nth video packet received (a lossy path; NACKs repair it)
          --estimate BPS        the receive estimate stated by REMB (no estimator runs here); default 8000000
          --passphrase P        the passphrase of an end-to-end encrypted room: every frame is decrypted
                                (a frame that does not is dropped and counted: decryptFailures; the
                                key rolls when someone leaves: keyIndex)
        """

    static let tokenCreate = """
        Usage: atrium token create --key K --secret S --identity I [--room R] [options]

        Signs a token (JWT, HS256) with an API key of the server and prints it on one line.
          --key K             API key id, as configured with --keys KEY:SECRET (required)
          --secret S          its secret, at least \(ServerConfig.minimumSecretLength) bytes (required)
          --identity I        the participant's identity (required)
          --room R            the room it may join; required without --admin
          --name N            display name; default: none (the identity is shown)
          --role ROLE         host, cohost, participant or viewer; default: participant
          --sources LIST      sources it may publish, comma-separated; default: all of
                              camera,microphone,screen_share,screen_share_audio (none for a viewer)
          --admin             also roomCreate, roomList and roomAdmin (in room R, or every room); default: off
          --no-data           canPublishData false: no data messages (chat, reactions); default: allowed
          --ttl SECONDS       lifetime; default: 21600 (6 h), at most 31622400 (366 days)
          --help              this text
        """

    static let configCheck = """
        Usage: atrium config check FILE

        Checks a JSON config file as `atrium serve --config FILE` would read it, with the ATRIUM_*
        environment variables of this shell: every invalid field and a bind or media.bind address that
        is not one of this machine's (errors: exit 1); then, as warnings, what serve also needs from the
        machine it runs on: TLS files it can read and API keys (in the file, ATRIUM_KEYS or --keys,
        unless dev). Prints "FILE: ok" and exits 0 without errors; exit 2 on a usage error.
          --help              this text
        """
}

extension String {
    func padded(_ n: Int) -> String { count >= n ? self + " " : self + String(repeating: " ", count: n - count) }
}
