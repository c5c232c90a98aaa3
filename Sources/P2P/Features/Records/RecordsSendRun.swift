/// `p2p records send` as it runs: finds the peer (``PeerConnector``), sends it the job's snapshot and
/// reports its answer, on a ``SessionCommandRun`` (the session closed at the end, Ctrl-C carried out);
/// it returns the exit code the answer means (``CommandExitCode/records(_:)``). What happens comes to
/// the app as ``Event``s, in order, for it to show.
public struct RecordsSendRun: Sendable {
    /// What happened, for the app to show.
    public enum Event: Sendable {
        /// The peer is connected.
        case connected(PeerInfo)
        /// The snapshot is on its way: "Sending records to bob…".
        case sending(String)
        /// Something went wrong: the run ended on it, or (the store could not remember a merged
        /// snapshot) it goes on.
        case failed(CommandFailure)
        /// The peer's answer.
        case report(RecordsReport)
        /// Ctrl-C ended the run: how far the send got ("interrupted; nothing was sent").
        case interrupted(String)
    }

    /// The session's run (start, close, Ctrl-C).
    public let command: SessionCommandRun
    /// What is sent.
    public let job: RecordSendJob

    /// The send of `job` on `command`'s session, which must be started.
    public init(_ command: SessionCommandRun, job: RecordSendJob) {
        self.command = command
        self.job = job
    }

    /// Finds the peer `connector` looks for, sends it the snapshot and tells `events` each step; each
    /// element of `interrupts` is a Ctrl-C (``SessionCommandRun/run(interrupts:interrupted:failed:_:)``).
    public func run(connector: PeerConnector, interrupts: AsyncStream<Void>,
                    events: @escaping @Sendable (Event) -> Void) async -> CommandExitCode {
        let job = job
        return await command.run(interrupts: interrupts, interrupted: { events(.interrupted(job.interruptedLine)) },
                                 failed: { events(.failed($0)) }) { () throws(CommandFailure) -> CommandExitCode in
            try await send(connector: connector, events: events)
        }
    }

    /// Finds the peer, sends the snapshot and returns the exit code its answer means.
    func send(connector: PeerConnector, events: @Sendable (Event) -> Void) async throws(CommandFailure) -> CommandExitCode {
        let peer = try await command.connect(connector)
        events(.connected(peer))
        events(.sending(job.sendingNote(to: peer)))
        let sent: RecordSendReport
        do {
            sent = try await job.send(over: RecordExchange(session: command.session), to: peer)
        } catch {
            throw command.failure(CommandFailure(code: error.isStoreFailure ? "store" : "send", message: error.description, exitCode: .failure))
        }
        if let failure = sent.markFailureMessage { events(.failed(CommandFailure(code: "store", message: failure, exitCode: .failure))) }
        events(.report(.sent(sent.result, records: sent.records, delta: sent.isDelta, to: peer)))
        return .records(sent.result.status)
    }
}
