extension GameLobby.Ending {
    /// How `p2p game` ends for this reason: nil when it left normally (exit 0), else the exit code and,
    /// where the person has not been told yet, the line saying why: the opponent named `query` did not
    /// appear within `timeout` seconds (`seen`: who did), or the name could not be resolved.
    public func failure(opponent query: String?, seen: [PeerInfo], within timeout: Double) -> CommandFailure? {
        let wording = GameLobbyRunner.wording
        switch self {
        case .done: return nil
        case .interrupted: return .interrupted
        case .connectionFailed:
            // The failed dial was said when it failed.
            return CommandFailure(code: "connect", message: nil, exitCode: .connectionFailed)
        case .notFound: return CommandFailure(wording.notFound(query, seen: seen, within: timeout))
        case .unresolvable(let error): return CommandFailure(ReachError(error, wording: wording))
        }
    }
}

extension GameLobbyRunner {
    /// How the game names the peer it looks for and what the other machine runs.
    public static let wording = ReachWording(role: "opponent", counterpart: "p2p game")

    /// A dial to `target` (a name or an address) that failed, in the words a person reads.
    public static func dialFailure(_ error: any Error, to target: String) -> ReachError {
        if let error = error as? SessionError { return ReachWording().connectFailure(error, to: target) }
        return .failed("cannot connect to \(target): \(error)")
    }
}

extension GameNarrator {
    /// The invitation's details under its question: who asks, and what accepting does to its key
    /// ("new key …, pinned if you accept").
    public static func invitationDetails(_ request: ConnectionRequest) -> String {
        let trust = request.trust.note(fingerprint: request.peer.fingerprint)
        return "  " + trust.replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
    }
}
