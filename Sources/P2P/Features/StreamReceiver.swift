import Foundation
import NIOConcurrencyHelpers

/// A receiver of one byte stream that carries out its run (`p2p receive --stdout`): it answers the
/// session's connection requests (unasked for `--yes`, `--from` and pinned keys; otherwise through
/// `ask`, or declined when nobody can be asked), declines files and trees saying where they are taken,
/// and takes one stream at a time to the output (``StreamOutputReceiver``) as ``ReceiveRules`` and `ask`
/// say. It keeps the session's ``ByteStreams`` for its whole life: their handlers hang off it.
///
/// Fed the session's events, the output receiver's steps, a sender's lingering and Ctrl-C
/// (``handle(_:)``), it decides the run (``StreamReceiveRun``), cancels the stream itself when Ctrl-C
/// says so, and returns what the app is to do: wait for the sender, or finish (with why the stream is
/// not whole on the output). The app asks, shows the steps and reads keys.
public final class StreamReceiver: Sendable {
    /// Something that happened, in arrival order.
    public enum Input: Sendable {
        /// One of the session's events; a peer's disconnect counts.
        case session(SessionEvent)
        /// A step of the stream (reported through the `report` given at ``init(session:rules:canAsk:output:ask:progress:report:)``).
        case stream(StreamOutputReceiver.Event)
        /// ``StreamReceiveRun/lingerDelay`` passed after ``Effect/waitForSender``.
        case lingered
        /// Ctrl-C (SIGINT or SIGTERM).
        case interrupted
    }

    /// What the app is to do.
    public enum Effect: Sendable, Equatable {
        /// Feed ``Input/lingered`` after ``StreamReceiveRun/lingerDelay``: the sender hangs up first.
        case waitForSender
        /// The run is over: the whole stream arrived (nil), or this failure (its kind gives the exit status).
        case finish(StreamReceiveFailure?)
    }

    /// The session the sender connects to.
    public let session: Session
    /// Kept for the receiver's life: the stream and file handlers hang off it.
    private let streams: ByteStreams
    private let output: StreamOutputReceiver
    private let run = NIOLockedValueBox(StreamReceiveRun())

    /// Takes the connection requests and byte streams of `session` from now on (it replaces their
    /// handlers). `canAsk`: a person can answer `ask`; `output`: where the stream's bytes go;
    /// `progress`: the bytes written so far; `report`: each step, to show and to feed back as ``Input/stream(_:)``.
    public init(session: Session, rules: ReceiveRules, canAsk: Bool, output: Int32 = STDOUT_FILENO,
                ask: @escaping @Sendable (PeerQuestion) async -> Bool,
                progress: @escaping @Sendable (ByteStreamInfo, UInt64) -> Void = { _, _ in },
                report: @escaping @Sendable (StreamOutputReceiver.Event) -> Void) {
        self.session = session
        streams = ByteStreams(session: session)
        session.setConnectionRequestHandler { request in
            if rules.trusts(request.peer) || request.trust.pinnedKey != nil { return true }
            return canAsk ? await ask(.connection(request)) : false
        }
        // A `p2p send` of files here hears why not, and where files are taken.
        streams.declineFilesAndTrees(reason: StreamReceiveRun.fileOfferReason)
        self.output = StreamOutputReceiver(streams: streams, output: output, decide: { info in
            if rules.trusts(info.peer) { return true }
            return canAsk ? await ask(.stream(info)) : false
        }, progress: progress, report: report)
    }

    /// Takes one input: decides the run, cancels the stream when Ctrl-C says so, and returns what to do.
    public func handle(_ input: Input) -> [Effect] {
        let event: StreamReceiveRun.Event
        switch input {
        case .session(.peerChanged(let peer, .disconnected, _)): event = .disconnected(peer.id)
        case .session: return []
        case .stream(let step):
            guard case .ended(let info, _, _, _) = step else { return [] }
            event = .ended(sender: info.peer.id, failure: step.failure, senderConnected: session.connectedPeer(info.peer.id) != nil)
        case .lingered: event = .lingered
        case .interrupted: event = .interrupted(streaming: output.hasStream)
        }
        return run.withLockedValue { $0.handle(event) }.compactMap { effect in
            switch effect {
            case .waitForSender: return .waitForSender
            case .finish(let failure): return .finish(failure)
            case .cancelStream:
                output.cancel()
                return nil
            }
        }
    }

    /// The question put to a person for `question` (a connection request or a stream offer); nil for
    /// anything else, which is never asked here.
    public static func prompt(_ question: PeerQuestion) -> String? {
        switch question {
        case .connection(let request):
            "\(request.peer.displayName) wants to connect to stream to you — \(request.trust.noteIfAccepted(fingerprint: request.peer.fingerprint)). Accept?"
        case .stream(let info):
            info.outputQuestion
        case .offer, .roomDial:
            nil
        }
    }
}
