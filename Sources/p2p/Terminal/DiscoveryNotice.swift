import P2P

/// How `chat`, `receive`, `game` and `records receive` show a discovery problem: the daemon going away under a
/// running command is an event of its own (`discovery-lost`; `advertising` follows when it is back),
/// anything else an `error` with code `discovery`.
enum DiscoveryNotice {
    static func show(_ error: DiscoveryError, json: Bool) {
        switch (error, json) {
        case (.daemonLost, true):
            Output.json(["event": "discovery-lost", "message": error.description])
        case (.daemonLost, false):
            Output.error(Terminal.paint("* \(error.description)", .dim))
        case (_, true):
            Output.json(["event": "error", "code": "discovery", "message": error.description])
        case (_, false):
            Output.error("p2p: \(error)")
        }
    }
}
