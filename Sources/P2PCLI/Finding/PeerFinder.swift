import P2P

/// The one peer a command talks to, from `--connect HOST:PORT`, `--to NAME-OR-ID` or, with neither,
/// the only peer of the session that shows up: the library's ``PeerConnector`` finds and connects it
/// and words each step and failure; this type reads the options and shows the lines on stderr.
struct PeerFinder: Sendable {
    let session: Session
    let to: String?
    let connect: String?
    let timeout: Double
    /// What the command calls the peer it wants, for its lines: "receiver", "peer".
    var role = "receiver"
    /// What the other machine runs, for the hint when nobody was seen.
    var counterpart = "p2p receive"
    var progress = ConnectProgress(json: false)

    /// The library's connector for these options, showing each step as a line.
    var connector: PeerConnector {
        let progress = progress
        return PeerConnector(session: session, to: to, address: connect, timeout: timeout,
                             wording: ReachWording(role: role, counterpart: counterpart)) { step, line in
            if case .awaitingAnswer = step { progress.showUntilNext(line) } else { progress.show(line) }
        }
    }
}
