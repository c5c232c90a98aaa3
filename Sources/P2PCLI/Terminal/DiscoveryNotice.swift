import P2P

extension DiscoveryNotice {
    /// Shows a discovery problem of a command that stays on the network: its JSON event, or a line
    /// (a dim note when the daemon went away, since the command goes on).
    static func show(_ error: DiscoveryError, json: Bool) {
        switch (error, json) {
        case (_, true):
            Output.json(event(for: error))
        case (.daemonLost, false):
            Output.error(Terminal.paint("* \(error.description)", .dim))
        case (_, false):
            Output.error("p2p: \(error)")
        }
    }
}
