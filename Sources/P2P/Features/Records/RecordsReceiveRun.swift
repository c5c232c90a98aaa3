import NIOConcurrencyHelpers

/// `p2p records receive` as it runs: who may connect (``ConnectionPolicy``: a pinned sender, or one
/// accepted before in this run, is let in unasked; a new one is asked about when a person can answer,
/// else declined), every snapshot merged into the store (``RecordStoreReceiver``) and reported, and when
/// the run ends: with `once`, after the first snapshot, with the exit code its result means.
/// What happens comes to the app as ``Event``s, in order, for it to show.
public final class RecordsReceiveRun: Sendable {
    /// What happened, for the app to show.
    public enum Event: Sendable {
        /// An offer, a merge or a rejection.
        case report(RecordsReport)
        /// A connection request was declined without asking: the line saying so.
        case declined(String)
        /// The run is over (`once`, after the first snapshot): exit with this code.
        case ended(CommandExitCode)
    }

    /// The session snapshots arrive on.
    public let session: Session
    private let admission: NIOLockedValueBox<ConnectionPolicy>
    /// Kept for the run: the exchange answers the session's snapshot offers only while it lives.
    private let exchange: RecordExchange
    private let receiver: RecordStoreReceiver
    private let events: @Sendable (Event) -> Void

    /// Takes snapshots from `session`'s peers into `store` from now on, merged under `policy`; `admission`
    /// decides connection requests (``admitConnections(ask:)``); with `once` the first snapshot ends the run.
    public init(session: Session, store: RecordStore, policy: MergePolicy, options: RecordReceiveOptions = RecordReceiveOptions(),
                admission: ConnectionPolicy, once: Bool, events: @escaping @Sendable (Event) -> Void) {
        self.session = session
        self.admission = NIOLockedValueBox(admission)
        self.events = events
        exchange = RecordExchange(session: session)
        receiver = RecordStoreReceiver(exchange, store: store, policy: policy, options: options) { event in
            events(.report(RecordsReport(event)))
            if once, let status = event.status { events(.ended(.records(status))) }
        }
    }

    /// Decides the session's connection requests from now on; `ask` asks the person (true: accepted,
    /// and not asked about again in this run).
    public func admitConnections(ask: @escaping @Sendable (ConnectionRequest) async -> Bool) {
        session.setConnectionRequestHandler { [self] request in await admit(request, ask: ask) }
    }

    /// Whether `request` is let in: the policy's decision (a request declined unasked is told as
    /// ``Event/declined(_:)``), or the person's answer.
    public func admit(_ request: ConnectionRequest, ask: (ConnectionRequest) async -> Bool) async -> Bool {
        switch admission.withLockedValue({ $0.decide(request.peer.id, trust: request.trust) }) {
        case .accept:
            return true
        case .deny:
            events(.declined(Self.declined(request)))
            return false
        case .ask:
            let yes = await ask(request)
            if yes { admission.withLockedValue { $0.accepted(request.peer.id) } }
            return yes
        }
    }

    /// The line for a request declined unasked.
    public static func declined(_ request: ConnectionRequest) -> String {
        "declined a connection request from \(request.peer.displayName) (\(request.peer.id.short)); use --yes to accept requests"
    }

    /// The question for a sender asked about: "bob wants to send records — new key ab12…. Accept?".
    public static func question(for request: ConnectionRequest) -> String {
        "\(request.peer.displayName) wants to send records — \(request.trust.note(fingerprint: request.peer.fingerprint)). Accept?"
    }

    /// Turns away later snapshots and waits for the merges under way (each says what it did), then
    /// lets the answer to the last one reach its sender before the session says goodbye.
    public func finish() async {
        await receiver.finish()
        try? await Task.sleep(for: .milliseconds(200))
    }
}
