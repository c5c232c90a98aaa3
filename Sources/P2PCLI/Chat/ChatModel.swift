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
        /// A dial failed; `unasked`: the room dialled that peer by itself (a member coming back), and
        /// `heldLines` and `waitingLines` are what the room holds for everyone and keeps for that peer.
        case dialFailed(target: String, any Error, unasked: PeerID?, heldLines: Int = 0, waitingLines: Int = 0)
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
    /// This side's display name, as the other side pinned it (for `p2p trust remove NAME` there).
    var localName = ""
    /// Set 10 s after piped input ended: stop waiting for connected peers to acknowledge what was sent.
    private(set) var acknowledgementsOverdue = false
    /// Peers that refused our dial (our key, or the connection): told once each.
    private(set) var refusedBy: Set<PeerID> = []

    mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .inputEnded:
            return [.waitForAcknowledgements]
        case .acknowledgementsOverdue:
            acknowledgementsOverdue = true
            return []
        case .dialFailed(let target, let error, let unasked, let heldLines, let waitingLines):
            let refusal = Refusal(error)
            if let unasked {
                // A stale DNS-SD record is not the user's error: reported only when asked for, or refused.
                if let refusal {
                    // The peer said no to us: said once per peer, with what to do, not at every try.
                    guard refusedBy.insert(unasked).inserted else { return [] }
                    return [.error(code: refusal.code, message: refusal.message(by: target, localName: localName, heldLines: heldLines, waiting: waitingLines))]
                }
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

/// Why a peer refused this side's dial, and the one line that tells the person what to do about it.
struct Refusal: Equatable {
    /// `untrusted`: our name is pinned to another key over there (ERROR untrustedIdentity); otherwise
    /// the peer (a person, or a limit) declined the connection (ERROR connectionDenied).
    let untrusted: Bool

    init?(_ error: any Error) {
        switch error as? SessionError {
        case .refusedAsUntrusted?: untrusted = true
        case .denied?: untrusted = false
        default: return nil
        }
    }

    var code: String { untrusted ? "refused-by-peer" : "declined-by-peer" }

    /// "alice refused this key (…): ask alice to run …", and what becomes of the lines waiting for it.
    func message(by target: String, localName: String, heldLines: Int, waiting: Int) -> String {
        let name = Terminal.sanitize(target)
        var text = untrusted
            ? "\(name) refused this key (your name is pinned to another key there): ask \(name) to run "
                + "`p2p trust remove \(localName.isEmpty ? "YOUR-NAME" : Terminal.sanitize(localName))` if you really have a new key, or pair again with `p2p pair`; "
                + "not dialled again in this run"
            : "\(name) declined the connection: not dialled again in this run (restart the chat to ask again)"
        if waiting > 0 {
            text += "; \(waiting) line\(waiting == 1 ? "" : "s") for \(name) will not be delivered now (\(waiting == 1 ? "it stays" : "they stay") in the outbox)"
        }
        if heldLines > 0 {
            text += "; \(heldLines) line\(heldLines == 1 ? "" : "s") typed while nobody was here will not reach \(name)"
        }
        return text
    }
}
