import NIOConcurrencyHelpers

/// What every command that works on a session does around its work, the same for `p2p records send`,
/// `p2p records receive` and `p2p game`: start the session (a session that cannot listen is exit 1),
/// find and connect the peer the person named (``PeerConnector``: its failures carry their exit code),
/// and carry out Ctrl-C: the first closes the session (the goodbyes are said) and ends the work with
/// exit 130, a second leaves at once without them (a peer that stopped reading keeps no one waiting).
///
/// ```swift
/// let command = SessionCommandRun(session: session)
/// try await command.start()
/// let status = await command.run(interrupts: ctrlC) {
///     let peer = try await command.connect(PeerConnector(session: session, to: "bob"))
///     …
///     return .success
/// }
/// ```
public final class SessionCommandRun: Sendable {
    /// The session the command works on.
    public let session: Session
    private let interrupted = NIOLockedValueBox(false)

    /// A run of a command on `session` (created, not yet started).
    public init(session: Session) {
        self.session = session
    }

    /// Whether Ctrl-C came: what fails after it failed because the session closed under it.
    public var isInterrupted: Bool { interrupted.withLockedValue { $0 } }

    /// Starts the session; one that cannot listen is ``CommandFailure/listen(_:)``.
    public func start() async throws(CommandFailure) {
        do {
            try await session.start()
        } catch {
            throw .listen(error)
        }
    }

    /// Finds and connects the peer `connector` looks for. `events`: the session's events subscribed
    /// before it started (nil: subscribe now); `denial`: the exit code of a denied connection.
    /// After Ctrl-C the failure is ``CommandFailure/interrupted``: the search did not fail, it was stopped.
    public func connect(_ connector: PeerConnector, events: AsyncStream<SessionEvent>? = nil,
                        denial: CommandExitCode = .connectionFailed) async throws(CommandFailure) -> PeerInfo {
        do {
            return try await connector.connect(events: events ?? session.events())
        } catch {
            throw isInterrupted ? .interrupted : CommandFailure(error, denial: denial)
        }
    }

    /// What `work` threw, or ``CommandFailure/interrupted`` when Ctrl-C came first.
    public func failure(_ error: CommandFailure) -> CommandFailure {
        isInterrupted ? .interrupted : error
    }

    /// Runs `work` until it ends, then closes the session and returns its exit code; a failure it throws
    /// goes to `failed` (unless Ctrl-C caused it) and its exit code is returned. Each element of
    /// `interrupts` is a Ctrl-C: the first closes the session, then `interrupted` runs (to say how far
    /// the work got) and the run returns ``CommandExitCode/interrupted``; a second returns it at once.
    public func run(interrupts: AsyncStream<Void>, interrupted: @escaping @Sendable () -> Void = {},
                    failed: @escaping @Sendable (CommandFailure) -> Void = { _ in },
                    _ work: @escaping @Sendable () async throws(CommandFailure) -> CommandExitCode) async -> CommandExitCode {
        let (outcomes, outcome) = AsyncStream.makeStream(of: Outcome.self)
        let working = Task { [self] in
            do throws(CommandFailure) {
                outcome.yield(.ended(try await work()))
            } catch {
                if !isInterrupted { failed(error) }
                outcome.yield(.ended(error.exitCode))
            }
        }
        let listening = Task {
            for await _ in interrupts { outcome.yield(.interrupt) }
        }
        defer { listening.cancel() }
        for await next in outcomes {
            switch next {
            case .ended(let code):
                // After Ctrl-C the work ends because the session closed under it: not news.
                guard !isInterrupted else { continue }
                await session.close()
                return code
            case .interrupt:
                guard !self.interrupted.withLockedValue({ was in defer { was = true }; return was }) else {
                    working.cancel()
                    return .interrupted
                }
                let session = session
                Task {
                    await session.close()
                    outcome.yield(.closed)
                }
            case .closed:
                interrupted()
                working.cancel()
                return .interrupted
            }
        }
        return .interrupted  // Not reached: the stream ends only when this run stops reading it.
    }

    private enum Outcome: Sendable {
        case ended(CommandExitCode)
        case interrupt
        case closed
    }
}
