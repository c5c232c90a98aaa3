import Foundation

/// One send of files, a folder tree or a text to one or more receivers, as `p2p send` runs it once its
/// options are read: the receivers found and connected (``receivers(_:all:)``, by ``PeerLocator``), the
/// payload offered to each at once, each answer awaited, and each receiver's end turned into an
/// ``Outcome`` whose ``Verdict`` an app maps to what it reports (an exit status). A lost connection is
/// dialled again and the send resumes (``resumePatience``). Cancelling the task that runs ``send(_:to:onResume:)``
/// cancels every transfer on both sides.
///
/// ```swift
/// let send = SendRun(transfers: FileTransfers(session: session, directory: temporaryDirectory))
/// let bob = try await SendRun.receivers([PeerLocator(session: session, target: .named("bob"))])
/// let outcomes = await send.send(.files([report]), to: bob)
/// ```
public struct SendRun: Sendable {
    /// What one send carries: files and directories as one tree, or a text as one small file.
    public enum Payload: Sendable {
        /// Files and directories, sent as one tree (one question at the receiver).
        case files([URL])
        /// A text staged in a file (``TextTransfer/stage(_:)``), and its length in characters.
        case text(URL, characters: Int)
    }

    /// How a send to one receiver ended, in the categories a person acts on; ordered from best to worst
    /// (with several receivers the worst one stands for the whole send).
    public enum Verdict: Int, Sendable, Comparable {
        /// Everything arrived, verified.
        case delivered
        /// The receiver said no, or did not answer in time.
        case denied
        /// Cancelled: by this side, or by a person at the receiver (its Ctrl-C, its quitting).
        case cancelled
        /// Anything else: verification, a disconnect, an unreadable file, an older receiver, a receiver's failure.
        case failed

        /// The category of a transfer's failure.
        public init(_ error: TransferError) {
            switch error {
            case .denied, .notAnswered: self = .denied
            case .cancelled: self = .cancelled
            // Someone pressed Ctrl-C over there; any other CANCEL is the receiver failing (disk full, unwritable).
            case .cancelledByPeer(let reason) where reason.raw == FileTransfers.receiverCancelledReason: self = .cancelled
            default: self = .failed
            }
        }

        public static func < (lhs: Verdict, rhs: Verdict) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What the send to one receiver came to.
    public struct Outcome: Sendable {
        /// The receiver.
        public let peer: PeerInfo
        /// Its deliveries (one for a text), or why the send failed.
        public let result: Result<[Delivery], TransferError>

        /// The result's category.
        public var verdict: Verdict {
            switch result {
            case .success: .delivered
            case .failure(let error): Verdict(error)
            }
        }

        /// Whether a person at the receiver cancelled it (its Ctrl-C, or it quit): what it kept stays
        /// there, and the same send run again sends the rest.
        public var cancelledByReceiver: Bool {
            if case .failure(.cancelledByPeer(let reason)) = result { return reason.raw == FileTransfers.receiverCancelledReason }
            return false
        }

        /// Creates an outcome.
        public init(peer: PeerInfo, result: Result<[Delivery], TransferError>) {
            (self.peer, self.result) = (peer, result)
        }
    }

    /// Why a path named to send cannot go: said before any network work.
    public enum PathProblem: Sendable, Equatable {
        /// Nothing is at the path.
        case missing
        /// It cannot be read (a directory: cannot be listed).
        case unreadable
    }

    /// The transfers the payload goes through.
    public let transfers: FileTransfers
    /// How long a send waits for a receiver whose connection was lost to be reachable again.
    public var resumePatience: Duration

    /// A send through `transfers`.
    public init(transfers: FileTransfers, resumePatience: Duration = .seconds(30)) {
        self.transfers = transfers
        self.resumePatience = resumePatience
    }

    /// Why `path` cannot be sent, nil when it can: it must exist and be readable (a directory listable).
    public static func problem(with path: String, fileManager: FileManager = .default) -> PathProblem? {
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        guard fileManager.isReadableFile(atPath: path), !isDirectory.boolValue || fileManager.isExecutableFile(atPath: path) else {
            return .unreadable
        }
        return nil
    }

    /// Starts the locators' session and finds every receiver they name, at the same time, each
    /// connected; the same receiver named twice counts once. `all`: the one locator finds every
    /// receiver that shows up (``PeerLocator/findAll(events:)``). Throws the session's start error, or
    /// a ``PeerFindError``. Every locator must hold the same session.
    public static func receivers(_ locators: [PeerLocator], all: Bool = false) async throws -> [PeerInfo] {
        guard let session = locators.first?.session else { return [] }
        // Subscribed before starting, so that no peer found early is missed.
        let streams = locators.map { _ in session.events() }
        try await session.start()
        if all { return try await locators[0].findAll(events: streams[0]) }
        return try await withThrowingTaskGroup(of: PeerInfo.self) { group in
            for (locator, events) in zip(locators, streams) {
                group.addTask { try await locator.find(events: events) }
            }
            var peers: [PeerInfo] = []
            for try await peer in group where !peers.contains(where: { $0.id == peer.id }) { peers.append(peer) }
            return peers
        }
    }

    /// Sends `payload` to each of `peers` at once and returns each one's outcome once every send ended.
    /// Files go as one tree, resumed over a new connection when one is lost (`onResume`: the receiver and
    /// the attempt's number). Cancelling the calling task cancels every send (``Verdict/cancelled``).
    public func send(_ payload: Payload, to peers: [PeerInfo],
                     onResume: @escaping @Sendable (PeerInfo, Int) -> Void = { _, _ in }) async -> [Outcome] {
        await withTaskGroup(of: Outcome.self) { group in
            for peer in peers {
                group.addTask { Outcome(peer: peer, result: await send(payload, to: peer, onResume: onResume)) }
            }
            var outcomes: [Outcome] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
    }

    private func send(_ payload: Payload, to peer: PeerInfo,
                      onResume: @escaping @Sendable (PeerInfo, Int) -> Void) async -> Result<[Delivery], TransferError> {
        do throws(TransferError) {
            switch payload {
            case .text(let url, _):
                return .success(try await transfers.sendResource(at: url, to: peer.id, mediaType: TextTransfer.mediaType))
            case .files(let urls):
                // A connection lost mid-way (a link down, an address changed) is dialled again and the send
                // resumes where it was cut, for as long as the peer comes back within the patience.
                let sent = try await transfers.send(urls, resumingFor: resumePatience, to: peer.id) { onResume(peer, $0) }
                return .success(sent.report.deliveries)
            }
        } catch {
            return .failure(error)
        }
    }

    /// The one receiver whose send this side cancelled (its Ctrl-C), when there was only one: said as an
    /// interruption rather than as a failure.
    public static func interrupted(_ outcomes: [Outcome]) -> PeerInfo? {
        guard outcomes.count == 1, case .failure(.cancelled) = outcomes[0].result else { return nil }
        return outcomes[0].peer
    }

    /// The worst verdict of `outcomes` (``Verdict/delivered`` for none).
    public static func worst(_ outcomes: [Outcome]) -> Verdict {
        outcomes.map(\.verdict).max() ?? .delivered
    }
}
