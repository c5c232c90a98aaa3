import ArgumentParser
import P2P

/// What `p2p chat` decides around its room (the room runs in the library's `ChatRoomRunner`): a dial that
/// failed, the end of piped input and the wait for acknowledgements after it, the wait for a `--to` peer,
/// Ctrl-C, and the exit status. `ChatLoop` hands it what happened and carries out what it returns.
struct ChatModel: CommandModel {
    enum Event: Sendable {
        /// Piped input ended.
        case inputEnded
        /// Ten seconds after piped input ended: connected peers that did not acknowledge yet are not waited for.
        case acknowledgementsOverdue
        /// A dial failed; `unasked`: the room dialled that peer by itself (a member coming back, a peer of
        /// the room), whose refusal the runner reports itself (`ChatRoomRunner.Event.refusedBy`).
        case dialFailed(target: String, any Error, unasked: PeerID?)
        /// The wait for the `--to` peer is over; `found`: a peer is connected or being dialled.
        case waitExpired(found: Bool)
        /// Ctrl-C (SIGINT or SIGTERM).
        case interrupted
    }

    enum Effect: Sendable, Equatable {
        /// Send `.acknowledgementsOverdue` after 10 s.
        case waitForAcknowledgements
        case note(String)
        case error(code: String, message: String)
        /// Say that the `--to` peer was not found.
        case reportNotFound
        case exit(ExitCode)
    }

    /// `--to` or `--connect`: a dial that fails ends the chat.
    let scripted: Bool
    /// `--verbose`: failed dials nobody asked for are reported too.
    let verbose: Bool
    /// Set 10 s after piped input ended: stop waiting for connected peers to acknowledge what was sent.
    private(set) var acknowledgementsOverdue = false

    mutating func handle(_ event: Event) -> [Effect] {
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
                return verbose ? [.note("connecting to \(Terminal.sanitize(target)) failed: \(error)")] : []
            }
            let failure = (error as? SessionError).map { PeerTarget.connectFailure($0, to: target) } ?? (error as? ReachError)
            let shown = Effect.error(code: failure?.jsonCode ?? "connect",
                                     message: failure?.description ?? "cannot connect to \(Terminal.sanitize(target)): \(error)")
            return scripted ? [shown, .exit(ExitStatus.connectionFailed)] : [shown]
        case .waitExpired(let found):
            return found ? [] : [.reportNotFound, .exit(ExitStatus.peerNotFound)]
        case .interrupted:
            return [.exit(.success)]
        }
    }

    /// `/who`: "3 here: alice, bob, carol" (this side included, names sorted, as peers may print them).
    static func names(own: String, connected: [String]) -> String {
        let everyone = ([own] + connected).map { Terminal.sanitize($0) }.sorted { $0.localizedCaseInsensitiveCompare($1) == .orderedAscending }
        return "\(everyone.count) here: " + everyone.joined(separator: ", ")
    }

    /// Piped input is done once every held line went out and connected peers acknowledged them (or did
    /// not within 10 s: those lines stay in the outbox).
    func isDone(room: ChatRoom, awaitingAcknowledgement: @autoclosure () -> Bool) -> Bool {
        room.isDone(settled: acknowledgementsOverdue || !awaitingAcknowledgement())
    }
}
