/// What a chat decides around its room (the room itself runs in ``ChatRoomRunner``): a dial that failed,
/// the end of piped input and the wait for acknowledgements after it, the wait for a `--to` peer,
/// Ctrl-C, and how the chat ends. The app hands it what happened and carries out what it returns.
public struct ChatEnding: Sendable {
    /// What happened that may end the chat.
    public enum Event: Sendable {
        /// Piped input ended.
        case inputEnded
        /// Ten seconds after piped input ended: connected peers that did not acknowledge yet are not waited for.
        case acknowledgementsOverdue
        /// A dial failed; `unasked`: the room dialled that peer by itself (a member coming back, a peer of
        /// the room), whose refusal the runner reports itself (``ChatRoomRunner/Event/refusedBy(_:_:waiting:heldLines:)``).
        case dialFailed(target: String, any Error, unasked: PeerID?)
        /// The wait for the `--to` peer is over; `found`: a peer is connected or being dialled.
        case waitExpired(found: Bool)
        /// Ctrl-C (SIGINT or SIGTERM).
        case interrupted
    }

    /// How a chat ends.
    public enum Status: Sendable, Equatable {
        case success
        /// The one peer asked for (`--to`, `--connect`) could not be reached.
        case connectionFailed
        /// The `--to` peer did not appear in time.
        case peerNotFound
        /// The chat could not begin: the history cannot be opened, or the session cannot listen.
        case failed
        /// No mDNS daemon answers, and the chat needs one to find its peers.
        case noDaemon
    }

    /// A dial the person asked for that failed: to be told, with the error as it came.
    public struct DialFailure: Sendable, Equatable, CustomStringConvertible {
        public let target: String
        public let error: any Error

        public var description: String { "cannot connect to \(PeerText.sanitized(target)): \(error)" }

        /// The same target and the same error, as described.
        public static func == (a: DialFailure, b: DialFailure) -> Bool {
            a.target == b.target && String(describing: a.error) == String(describing: b.error)
        }
    }

    /// What the app carries out.
    public enum Effect: Sendable, Equatable {
        /// Send ``Event/acknowledgementsOverdue`` after 10 s.
        case waitForAcknowledgements
        /// Show a note (a line about the chat itself, not a peer's text).
        case note(String)
        /// Tell the person that a dial they asked for failed.
        case reportDialFailure(DialFailure)
        /// Say that the `--to` peer was not found.
        case reportNotFound
        case exit(Status)
    }

    /// `--to` or `--connect`: a dial that fails ends the chat.
    public let scripted: Bool
    /// `--verbose`: failed dials nobody asked for are reported too.
    public let verbose: Bool
    /// Set 10 s after piped input ended: stop waiting for connected peers to acknowledge what was sent.
    public private(set) var acknowledgementsOverdue = false

    public init(scripted: Bool, verbose: Bool) {
        self.scripted = scripted
        self.verbose = verbose
    }

    public mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .inputEnded:
            return [.waitForAcknowledgements]
        case .acknowledgementsOverdue:
            acknowledgementsOverdue = true
            return []
        case .dialFailed(let target, let error, let unasked):
            if unasked != nil {
                // A stale DNS-SD record is not the user's error: reported only when asked for, or refused.
                // The peer said no to us: the runner tells it once per peer (`.refusedBy`), with what to do.
                if (error as? SessionError)?.refusal != nil { return [] }
                return verbose ? [.note("connecting to \(PeerText.sanitized(target)) failed: \(error)")] : []
            }
            let shown = Effect.reportDialFailure(DialFailure(target: target, error: error))
            return scripted ? [shown, .exit(.connectionFailed)] : [shown]
        case .waitExpired(let found):
            return found ? [] : [.reportNotFound, .exit(.peerNotFound)]
        case .interrupted:
            return [.exit(.success)]
        }
    }

    /// Piped input is done once every held line went out and connected peers acknowledged them (or did
    /// not within 10 s: those lines stay in the outbox).
    public func isDone(room: ChatRoom, awaitingAcknowledgement: @autoclosure () -> Bool) -> Bool {
        room.isDone(settled: acknowledgementsOverdue || !awaitingAcknowledgement())
    }
}
