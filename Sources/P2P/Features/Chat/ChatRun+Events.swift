import Foundation

/// What goes into a ``ChatRun`` (``Input``, ``Timer``) and what comes out of it (``Event``).
extension ChatRun {
    /// What happens, in the order the front end's loop takes it.
    public enum Input: Sendable {
        case session(SessionEvent)
        case conversation(ConversationEvent)
        case transfer(TransferEvent)
        case room(ChatRoomRunner.Event)
        /// A dial of `--connect` or `--to` that failed (`target` as the person named it).
        case dialFailed(target: String, any Error)
        /// The person answered whether the room may dial this peer, whose key nobody here accepted yet (`askToDial`).
        case dialAnswered(PeerInfo, yes: Bool)
        case timer(Timer)
        /// A line the person typed (``ChatRun/type(_:)``), for a front end that hands over all it has as input.
        case typed(String)
        /// Piped input ended.
        case inputEnded
        /// Ctrl-C.
        case interrupted

        /// Whether it came from a library event stream (the front end's bounded backlog counts those).
        public var isPumped: Bool {
            switch self {
            case .session, .conversation, .transfer: true
            default: false
            }
        }
    }

    /// A timer the front end starts when asked (``Event/startTimer(_:after:)``) and hands back as input.
    public enum Timer: Sendable, Equatable {
        /// A dial still waiting a moment after it began: the other side is being asked.
        case dialSlow(PeerInfo)
        /// The wait for the `--to` peer is over.
        case waitForPeerExpired
        /// Every 2 s: members still announced are dialled again (links die without a word).
        case tick
        /// 10 s after piped input ended.
        case acknowledgementsOverdue

        public static func == (a: Timer, b: Timer) -> Bool {
            switch (a, b) {
            case (.dialSlow(let x), .dialSlow(let y)): x.id == y.id
            case (.waitForPeerExpired, .waitForPeerExpired), (.tick, .tick), (.acknowledgementsOverdue, .acknowledgementsOverdue): true
            default: false
            }
        }
    }

    /// What the front end renders (peer text in it is hostile: shown only through ``PeerText``).
    public enum Event: Sendable {
        /// A note, warning or error in words.
        case notice(ChatNotice)
        /// The session listens, under this name (peers may come to see another: ``advertising(_:)``); its ID, port and room are the session's.
        case listening(as: String)
        /// The name peers see (`requested` was taken when they differ).
        case advertising(String)
        /// A peer's state changed; `wasConnected`: it was in the chat (a request that never became a
        /// connection ended with its own line, so people hear of no "disconnect" of it).
        case peerChanged(PeerInfo, PeerState, reason: SessionError?, wasConnected: Bool)
        /// The browse failed or the daemon went away.
        case discoveryFailed(DiscoveryError)
        /// A line from a peer; `wantsAttention`: it mentions this side's name or is private to it.
        case lineReceived(ChatEntry, from: PeerInfo, wantsAttention: Bool)
        /// A line the person typed, as the others see it (`to`: a /msg; `held`: nobody gets it yet).
        case ownLine(String, to: PeerInfo?, held: Bool)
        /// A line, image or file from the history, shown when the chat starts.
        case recent(HistoryItem)
        /// Lines for a peer wait in the outbox (at the start and at the end).
        case outbox(OutboxCount)
        /// A line for a member that is away waits in the outbox.
        case queued(ChatEntry)
        /// A peer acknowledged a line; `afterWaiting`: it had waited in the outbox.
        case delivered(ChatEntry, afterWaiting: Bool)
        case receivedImage(ImageInfo, at: URL, from: PeerInfo)
        /// A received file, whole and with its SHA-256 checked.
        case receivedFile(Delivery, at: URL, from: PeerInfo)
        /// The peer refused this side, with what to do (``RefusalNotice``).
        case refusedBy(PeerInfo, PeerRefusal, message: String)
        /// A key refused before was refused again: `tries` so far, said at most once a minute.
        case refusedAgain(PeerInfo, tries: Int)
        /// Start this timer; hand it back as ``Input/timer(_:)``.
        case startTimer(Timer, after: Duration)
        /// The chat is over.
        case ended(ChatEnding.Status)
    }
}
