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

    /// What the command's one loop takes besides the person's input and Ctrl-C: how the library's run ended.
    private enum Event: Sendable {
        case ended(Result<PeerInfo, PairingRun.Failure>)
    }

    func run() async throws {
        // The code is the consent here, so the pairing session pins nothing by itself and refuses nothing.
        let session = try network.makeSession(defaultSessionID: Self.sessionID, pinning: false)
        let store = try TrustCommand.store()
        let events = session.events()
        // Before any connection, so a share the peer sends at once is not missed.
        let run = PairingRun(session: session)
        // Pinning is the last step: until then Ctrl-C (through the loop) leaves nothing behind.
        let driver = CommandDriver<Event>()
        driver.readInterrupts()
        try await CLIError.failing { try await session.start() }
        let feed = driver.feed
        let connector = PeerFinder(session: session, to: to, connect: connect, timeout: timeout, role: "peer", counterpart: "p2p pair").connector
        /// The typing side: finds the peer that shows the code and runs `typed` with it (`PairingRun.join`).
        func join(_ typed: String?) -> Task<Void, Never> {
            Self.start(feed) { () async throws(PairingRun.Failure) in try await run.join(typed: typed, with: connector, events: events) }
        }
        var pairing: Task<Void, Never>?
        if to == nil && connect == nil {
            pairing = await show(run, events, feed)
        } else if let fromEnvironment = ProcessInfo.processInfo.environment["P2P_PAIR_CODE"] {
            // The code from P2P_PAIR_CODE, else a line of input; never from argv, where other users could read it.
            pairing = join(fromEnvironment)
        } else {
            if Terminal.stdinIsTTY { FileHandle.standardError.write(Data("Pairing code shown on the other machine: ".utf8)) }
            driver.readLines()
        }
        // The loop until the run ends (nil: Ctrl-C first); only the first line typed is the code.
        var outcome: Result<PeerInfo, PairingRun.Failure>?
        _ = await driver.run { input in
            switch input {
            case .line(let typed) where pairing == nil: pairing = join(typed)
            case .endOfInput where pairing == nil: pairing = join(nil)
            case .event(.ended(let result)):
                outcome = result
                return .success
            case .interrupt: return ExitStatus.interrupted
            default: break
            }
            return nil
        }
        pairing?.cancel()
        await driver.drain(closing: {})
        guard case .success(let peer)? = outcome else {
            // A second Ctrl-C while the goodbyes hang (a peer that stopped reading): leave without them.
            if outcome == nil { Signals.onInterrupt { Foundation.exit(ExitStatus.interrupted.rawValue) } }
            // Closed before the error is printed and the process exits, so the peer hears the goodbye
            // (a close left to an unawaited task may never run).
            await session.close()
            if case .failure(let failure)? = outcome { throw CLIError(failure.description, code: ExitStatus.code(CommandExitCode(failure))) }
            // Ctrl-C before the pairing was done: nothing is pinned.
            Output.error("p2p: interrupted; nothing was paired")
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

    /// Shows a code and lets connected peers try it (the library's `PairingRun.host`).
    private func show(_ run: PairingRun, _ events: AsyncStream<SessionEvent>, _ feed: CommandFeed<Event>) async -> Task<Void, Never> {
        let session = run.session
        session.setConnectionRequestHandler { _ in true }
        do {
            try await session.setAvailable(true)
        } catch {
            Output.error("p2p: \(error)")
        }
        let code = PairingCode.random()
        Output.line("Pairing code: \(Terminal.paint(code.description, .bold))")
        Output.line(PairingRun.instructions(name: session.displayName, fingerprint: session.peerID.fingerprint,
                                            addresses: DiscoveryNotice.localAddresses(), port: session.localPort ?? 0))
        let timeout = timeout
        return Self.start(feed) { () async throws(PairingRun.Failure) in
            try await run.host(code: code, events: events, timeout: timeout) { peer, error in
                Output.error("p2p: \(Terminal.sanitize(peer.displayName)) (\(peer.fingerprint)): \(error)")
            }
        }
    }

    /// Runs a side of the pairing on a task of its own and hands how it ended to the loop.
    private static func start(_ feed: CommandFeed<Event>,
                              _ side: @escaping @Sendable () async throws(PairingRun.Failure) -> PeerInfo) -> Task<Void, Never> {
        Task {
            do throws(PairingRun.Failure) {
                feed.send(.ended(.success(try await side())))
            } catch {
                feed.send(.ended(.failure(error)))
            }
        }
    }
}
