import ArgumentParser
import Foundation
import P2P

/// `p2p pair`: authenticates two installations' keys with a short code (CPace) and pins them.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with a peer using a short code, so each trusts the other's key.",
        discussion: """
            Examples:
              p2p pair                                 alice: shows a code, waits
              p2p pair --to alice                      bob: types that code
              P2P_PAIR_CODE=1234-5678 p2p pair --to alice   (a script)

            On one machine run `p2p pair`: it shows a code and waits. On the other run `p2p pair --to NAME` \
            (or --connect HOST:PORT) and type the code when asked, or pass it in the environment variable \
            P2P_PAIR_CODE — never as an argument. A wrong code fails and pins nothing; the showing side gives up \
            after 3 wrong attempts.
            Exit codes: 0 paired, 1 error, 2 no mDNS daemon, 3 peer not found (or several fit --to), \
            4 connection failed, 5 pairing failed, 130 interrupted (Ctrl-C; nothing is pinned).
            """
    )

    @OptionGroup var network: NetworkOptions

    @Option(help: "The peer showing the code: display name, or the start of its ID or fingerprint.")
    var to: String?

    @Option(help: "Connect directly to the peer showing the code, at HOST:PORT.")
    var connect: String?

    @Option(help: "Seconds to wait for the other side.")
    var timeout: Double = 120

    static let sessionID = "p2p-pair"
    static let maxAttempts = 3

    func run() async throws {
        // The code is the consent here, so the pairing session pins nothing by itself and refuses nothing.
        let session = try network.makeSession(defaultSessionID: Self.sessionID, pinning: false)
        let store = try TrustCommand.store()
        let events = session.events()
        // Before any connection, so a share the peer sends at once is not missed.
        let pairing = Pairing(session: session)
        // Pinning is the last step: until then Ctrl-C leaves nothing behind.
        Interruption.quit(saying: { "interrupted; nothing was paired" }, after: { await session.close() })
        do {
            try await session.start()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        do {
            let outcome: PeerInfo
            if to == nil && connect == nil {
                outcome = try await show(session, pairing, events)
            } else {
                outcome = try await type(session, pairing, events)
            }
            do {
                try store.pin(outcome.id, name: outcome.displayName.raw, method: .paired)
            } catch {
                throw CLIError(error.description, code: ExitStatus.failure)
            }
            Output.line("Paired with \(Terminal.sanitize(outcome.displayName)) — key \(outcome.fingerprint). It is now trusted by every p2p command.")
        } catch {
            // Closed before the error is printed and the process exits, so the peer hears the goodbye
            // (a close left to an unawaited task may never run).
            await session.close()
            throw error
        }
        await session.close()
    }

    /// Shows a code and waits for peers to try it.
    private func show(_ session: Session, _ pairing: Pairing, _ events: AsyncStream<SessionEvent>) async throws -> PeerInfo {
        session.setConnectionRequestHandler { _ in true }
        do {
            try session.setAvailable(true)
        } catch {
            Output.error("p2p: \(error)")
        }
        let code = PairingCode.random()
        Output.line("Pairing code: \(Terminal.paint(code.description, .bold))")
        Output.line(Self.instructions(name: session.displayName, fingerprint: session.peerID.fingerprint,
                                      addresses: DiscoveryNotice.localAddresses(), port: session.localPort ?? 0))
        let driver = CommandDriver<ShowingEvent>()
        driver.pump(events) { .session($0) }
        driver.timers.after(.seconds(timeout), .timeUp)
        var attempts = 0
        var outcome: Result<PeerInfo, CLIError> = .failure(CLIError("nobody paired within \(PeerTarget.duration(timeout))", code: ExitStatus.peerNotFound))
        // One attempt at a time: a peer that connects while another tries its code waits its turn.
        _ = await driver.run { input in
            switch input {
            case .event(.session(.peerChanged(let peer, .connected, _))):
                do {
                    outcome = .success(try await pairing.pair(with: peer.id, code: code))
                    return .success
                } catch {
                    attempts += 1
                    Output.error("p2p: \(Terminal.sanitize(peer.displayName)) (\(peer.fingerprint)): \(error)")
                    await session.disconnect(peer.id)
                    guard attempts < Self.maxAttempts else {
                        outcome = .failure(CLIError("\(attempts) failed attempts; run p2p pair again for a new code", code: ExitStatus.pairingFailed))
                        return ExitStatus.pairingFailed
                    }
                }
            case .event(.timeUp):
                return ExitStatus.peerNotFound
            default:
                break
            }
            return nil
        }
        await driver.drain(closing: {})
        return try outcome.get()
    }

    /// What the showing side's loop takes: the session's events, and the end of the time to pair.
    private enum ShowingEvent: Sendable {
        case session(SessionEvent)
        case timeUp
    }

    /// Reads the code, connects to the peer that shows it, and pairs.
    private func type(_ session: Session, _ pairing: Pairing, _ events: AsyncStream<SessionEvent>) async throws -> PeerInfo {
        guard let code = readCode() else {
            throw CLIError("a pairing code is 8 digits, like 1234-5678", code: ExitStatus.pairingFailed)
        }
        let peer: PeerInfo
        do {
            var finder = PeerFinder(session: session, to: to, connect: connect, timeout: timeout, role: "peer", counterpart: "p2p pair")
            finder.anyKeyByShortPrefix = true  // the pairing code proves the key
            peer = try await finder.find(events: events)
        } catch {
            throw error.cliError(denial: ExitStatus.connectionFailed)
        }
        do {
            return try await pairing.pair(with: peer.id, code: code)
        } catch {
            throw CLIError(error.description, code: ExitStatus.pairingFailed)
        }
    }

    /// What the showing side tells the person to type on the other machine: its name, which may be
    /// shared by another machine (so the fingerprint's start too), and the addresses to dial without mDNS.
    static func instructions(name: String, fingerprint: String, addresses: [String], port: Int) -> String {
        let direct = (addresses.isEmpty ? ["ADDRESS-OF-THIS-MACHINE"] : addresses).map { "--connect \($0):\(port)" }
        return "On the other machine run: p2p pair --to \"\(Terminal.sanitize(name))\"   (or --to \(fingerprint.prefix(9)), "
            + "or without mDNS: \(direct.joined(separator: " or ")))"
    }

    /// The code from P2P_PAIR_CODE, else a prompt; never from argv, where other users could read it.
    private func readCode() -> PairingCode? {
        if let fromEnvironment = ProcessInfo.processInfo.environment["P2P_PAIR_CODE"] {
            return PairingCode(typed: fromEnvironment)
        }
        if Terminal.stdinIsTTY { FileHandle.standardError.write(Data("Pairing code shown on the other machine: ".utf8)) }
        return readLine().flatMap(PairingCode.init(typed:))
    }
}
