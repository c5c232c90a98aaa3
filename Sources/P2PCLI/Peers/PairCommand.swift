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

    /// What the command's one loop takes besides the person's input and Ctrl-C.
    private enum Event: Sendable {
        case session(SessionEvent)
        /// The time to pair (`--timeout`) is up.
        case timeUp
        /// The typing side's search for the peer showing the code ended.
        case found(Result<PeerInfo, ReachError>)
        /// A run of the code with this peer ended.
        case ran(PeerInfo, Result<PeerInfo, PairingError>)
    }

    func run() async throws {
        // The code is the consent here, so the pairing session pins nothing by itself and refuses nothing.
        let session = try network.makeSession(defaultSessionID: Self.sessionID, pinning: false)
        let store = try TrustCommand.store()
        let events = session.events()
        // Before any connection, so a share the peer sends at once is not missed.
        let pairing = Pairing(session: session)
        // Pinning is the last step: until then Ctrl-C (through the loop) leaves nothing behind.
        let driver = CommandDriver<Event>()
        driver.readInterrupts()
        do {
            try await session.start()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        let showing = to == nil && connect == nil
        let outcome = showing ? await show(session, pairing, events, driver) : await type(session, pairing, events, driver)
        await driver.drain(closing: {})
        let peer: PeerInfo
        switch outcome {
        case .success(let paired): peer = paired
        case .failure(let error):
            // A second Ctrl-C while the goodbyes hang (a peer that stopped reading): leave without them.
            if error.code == ExitStatus.interrupted { Signals.onInterrupt { Foundation.exit(ExitStatus.interrupted.rawValue) } }
            // Closed before the error is printed and the process exits, so the peer hears the goodbye
            // (a close left to an unawaited task may never run).
            await session.close()
            guard error.code == ExitStatus.interrupted else { throw error }
            Output.error("p2p: \(error.description)")
            throw ExitStatus.interrupted
        }
        do {
            try store.pin(peer.id, name: peer.displayName.raw, method: .paired)
        } catch {
            await session.close()
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        Output.line("Paired with \(Terminal.sanitize(peer.displayName)) — key \(peer.fingerprint). It is now trusted by every p2p command.")
        await session.close()
    }

    /// Shows a code and lets connected peers try it, one run at a time, as the library's `PairingHost` decides.
    private func show(_ session: Session, _ pairing: Pairing, _ events: AsyncStream<SessionEvent>,
                      _ driver: CommandDriver<Event>) async -> Result<PeerInfo, CLIError> {
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
        driver.pump(events) { .session($0) }
        driver.timers.after(.seconds(timeout), .timeUp)
        let feed = driver.feed
        var host = PairingHost()
        var outcome: Result<PeerInfo, CLIError> = .failure(Self.interrupted)
        _ = await driver.run { input in
            let event: PairingHost.Event
            switch input {
            case .event(.session(.peerChanged(let peer, .connected, _))): event = .connected(peer)
            case .event(.session(.peerChanged(let peer, .disconnected, _))): event = .disconnected(peer.id)
            case .event(.ran(let peer, .success(let paired))): event = .succeeded(paired.id == peer.id ? paired : peer)
            case .event(.ran(let peer, .failure(let error))): event = .failed(peer, error)
            case .event(.timeUp): event = .timeUp
            case .interrupt: return ExitStatus.interrupted
            default: return nil
            }
            for effect in host.handle(event) {
                switch effect {
                case .tryCode(let peer):
                    Self.runCode(code, with: peer, pairing, feed)
                case .reportFailure(let peer, let error):
                    Output.error("p2p: \(Terminal.sanitize(peer.displayName)) (\(peer.fingerprint)): \(error)")
                    await session.disconnect(peer.id)
                case .finish(let end):
                    outcome = Self.result(end, timeout: timeout)
                    return Self.status(outcome)
                }
            }
            return nil
        }
        return outcome
    }

    /// Reads the code, finds the peer that shows it, and runs the code with it: each step's result
    /// comes into the loop, so Ctrl-C ends any of them.
    private func type(_ session: Session, _ pairing: Pairing, _ events: AsyncStream<SessionEvent>,
                      _ driver: CommandDriver<Event>) async -> Result<PeerInfo, CLIError> {
        let feed = driver.feed
        var finder = PeerFinder(session: session, to: to, connect: connect, timeout: timeout, role: "peer", counterpart: "p2p pair")
        finder.anyKeyByShortPrefix = true  // the pairing code proves the key
        var code: PairingCode?
        var search: Task<Void, Never>?
        defer { search?.cancel() }
        var outcome: Result<PeerInfo, CLIError> = .failure(Self.interrupted)
        /// Once the code is known: find the peer (a code that is not 8 digits ends it).
        func codeRead(_ typed: String?) -> ExitCode? {
            code = typed.flatMap(PairingCode.init(typed:))
            guard code != nil else {
                outcome = .failure(CLIError("a pairing code is 8 digits, like 1234-5678", code: ExitStatus.pairingFailed))
                return ExitStatus.pairingFailed
            }
            search = finder.start(events: events, on: feed) { .found($0) }
            return nil
        }
        // The code from P2P_PAIR_CODE, else a line of input; never from argv, where other users could read it.
        if let fromEnvironment = ProcessInfo.processInfo.environment["P2P_PAIR_CODE"] {
            if codeRead(fromEnvironment) != nil { return outcome }
        } else {
            if Terminal.stdinIsTTY { FileHandle.standardError.write(Data("Pairing code shown on the other machine: ".utf8)) }
            driver.readLines()
        }
        _ = await driver.run { input in
            switch input {
            case .line(let typed) where code == nil: return codeRead(typed)
            case .endOfInput where code == nil: return codeRead(nil)
            case .event(.found(.success(let peer))):
                if let code { Self.runCode(code, with: peer, pairing, feed) }
            case .event(.found(.failure(let error))):
                outcome = .failure(error.cliError(denial: ExitStatus.connectionFailed))
                return Self.status(outcome)
            case .event(.ran(_, .success(let peer))):
                outcome = .success(peer)
                return .success
            case .event(.ran(_, .failure(let error))):
                outcome = .failure(CLIError(error.description, code: ExitStatus.pairingFailed))
                return ExitStatus.pairingFailed
            case .interrupt: return ExitStatus.interrupted
            default: break
            }
            return nil
        }
        return outcome
    }

    /// Runs the code with `peer` in a task of its own; its result comes into the loop (`.ran`).
    private static func runCode(_ code: PairingCode, with peer: PeerInfo, _ pairing: Pairing, _ feed: CommandFeed<Event>) {
        Task {
            do throws(PairingError) {
                feed.send(.ran(peer, .success(try await pairing.pair(with: peer.id, code: code))))
            } catch {
                feed.send(.ran(peer, .failure(error)))
            }
        }
    }

    private static func status(_ outcome: Result<PeerInfo, CLIError>) -> ExitCode {
        switch outcome {
        case .success: .success
        case .failure(let error): error.code
        }
    }

    /// Ctrl-C before the pairing was done: nothing is pinned.
    private static let interrupted = CLIError("interrupted; nothing was paired", code: ExitStatus.interrupted)

    /// How the showing side's pairing ended, as the command's result.
    static func result(_ outcome: PairingHost.Outcome, timeout: Double) -> Result<PeerInfo, CLIError> {
        switch outcome {
        case .paired(let peer): .success(peer)
        case .spent(let attempts): .failure(CLIError("\(attempts) failed attempts; run p2p pair again for a new code", code: ExitStatus.pairingFailed))
        case .timeUp: .failure(CLIError("nobody paired within \(PeerTarget.duration(timeout))", code: ExitStatus.peerNotFound))
        }
    }

    /// What the showing side tells the person to type on the other machine: its name, which may be
    /// shared by another machine (so the fingerprint's start too), and the addresses to dial without mDNS.
    static func instructions(name: String, fingerprint: String, addresses: [String], port: Int) -> String {
        let direct = (addresses.isEmpty ? ["ADDRESS-OF-THIS-MACHINE"] : addresses).map { "--connect \($0):\(port)" }
        return "On the other machine run: p2p pair --to \"\(Terminal.sanitize(name))\"   (or --to \(fingerprint.prefix(9)), "
            + "or without mDNS: \(direct.joined(separator: " or ")))"
    }
}
