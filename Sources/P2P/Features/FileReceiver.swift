import NIOConcurrencyHelpers

/// A receiver of files that carries out its rules (`p2p receive`): it answers connection requests and
/// offers on a session's ``FileTransfers`` — unasked where ``ReceiveRules`` and the trust store allow
/// (`--yes`, `--from`, a pinned key), declined where nobody can be asked, otherwise through `ask`, the
/// app's one question queue — keeps the answers that stand for later offers (a folder's, "all from this
/// sender"), lets through the hidden paths and execute bits a person saw named, and declines byte
/// streams, saying where they are taken. The app asks, draws and reads keys; it hands each question
/// that reaches it to ``decide(_:waiting:)`` first.
///
/// It also runs the receive (``handle(_:)``): fed the transfers', the session's and the LocalSend
/// peer's events and Ctrl-C, it counts what arrived (``ReceiveRun``), cancels the transfers at Ctrl-C,
/// and returns what to show, in order (``Note``): each sender's summary once its transfers told their
/// end, then that it left; texts; when the run is over.
///
/// Its state is behind a lock: the handlers run on the session's tasks, the decisions on the app's loop.
public final class FileReceiver: Sendable {
    /// What becomes of a question that reached the app.
    public enum Decision: Sendable, Equatable {
        /// Answered at once: a standing answer, or the trust store's and the rules' verdict.
        case answered(Bool)
        /// Nobody can be asked (no terminal) and nothing lets it in: declined (the app says so).
        case declined
        /// Ask a person: about a connection (nil) or an offer (its ``OfferQuestions/Question``); `key`:
        /// the standing answer the person's answer may set.
        case ask(OfferQuestions.Question?, key: String?)
        /// A question with the same `key` (the same folder) is waiting: this one takes its answer.
        case joins(key: String)
    }

    /// Why a receiver of files declines a byte stream.
    public static let streamOfferReason = "this receiver takes files (p2p receive); a stream needs `p2p receive --stdout` there"

    struct State {
        var policy: ConnectionPolicy
        var offers: OfferQuestions
        /// Offers (peer ID/transfer ID) whose question named their hidden paths and execute bits: a yes
        /// to that question allows them.
        var named: Set<String> = []
        /// The run's decisions, and what the transfers came to.
        var run: ReceiveRun
        /// How LocalSend senders are named in their summaries (``LocalSendPeer/label(of:)``), by peer.
        var labels: [PeerID: String] = [:]
        /// "* NAME left" notes held until the sender's transfers have told their end.
        var leftNotes: [PeerID: Note] = [:]
    }

    /// What is accepted unasked.
    public let rules: ReceiveRules
    /// The session the senders connect to, and its transfers.
    public let session: Session, transfers: FileTransfers
    let state: NIOLockedValueBox<State>
    private let streams: ByteStreams

    /// Answers the connection requests of `session` and the offers of `transfers` from now on (it
    /// replaces their handlers), and declines its byte streams. `canAsk`: a person can answer `ask`;
    /// `once`: the run ends when the first sender left (``ReceiveRun``); `declinedAsNotText` hears of a
    /// file declined by a receiver of texts only (`--text`).
    public init(session: Session, transfers: FileTransfers, rules: ReceiveRules, canAsk: Bool, once: Bool = false,
                ask: @escaping @Sendable (PeerQuestion) async -> Bool,
                declinedAsNotText: @escaping @Sendable (TransferInfo) -> Void = { _ in }) {
        (self.rules, self.session, self.transfers) = (rules, session, transfers)
        let state = NIOLockedValueBox(State(policy: ConnectionPolicy(acceptsEveryone: rules.acceptsEveryone, canAsk: canAsk),
                                            offers: OfferQuestions(canAsk: canAsk), run: ReceiveRun(once: once, textOnly: rules.textsOnly)))
        self.state = state
        streams = ByteStreams(session: session)
        streams.declineEvery(reason: Self.streamOfferReason)
        session.setConnectionRequestHandler { request in
            if rules.trusts(request.peer) { return true }
            return await ask(.connection(request))
        }
        transfers.setOfferHandler(answers: { offer in
            switch rules.unasked(offer.info) {
            case .declinedAsNotText:
                declinedAsNotText(offer.info)
                return .declined
            case .accepted(let answer):
                return answer
            case .ask:
                let yes = await ask(.offer(offer))
                return rules.answer(yes, namedRisks: state.withLockedValue { $0.named.remove(Self.key(offer.info)) != nil })
            }
        })
    }

    /// What becomes of `question`; `waiting`: whether a question with this key waits for an answer.
    public func decide(_ question: PeerQuestion, waiting: (String) -> Bool = { _ in false }) -> Decision {
        state.withLockedValue { state in
            switch question {
            case .roomDial, .stream:
                return .answered(false)  // only a chat room and receive --stdout ask these
            case .connection(let request):
                switch state.policy.decide(request.peer.id, trust: request.trust) {
                case .accept: return .answered(true)
                case .deny: return .declined
                case .ask: return .ask(nil, key: nil)
                }
            case .offer(let offer):
                switch state.offers.decide(offer.info, waiting: waiting) {
                case .answered(let yes): return .answered(yes)
                case .declined: return .declined
                case .joins(let key): return .joins(key: key)
                case .ask(let kind, let key):
                    if kind.namesRisks { state.named.insert(Self.key(offer.info)) }
                    return .ask(kind, key: key)
                }
            }
        }
    }

    /// A person answered `question` (whose key is `key`); `all`: "all from this sender". Returns whether
    /// the answer covers every question waiting with the same key (a folder's always does), and keeps
    /// it for later offers then; a yes to a connection lets that peer in for the rest of the run.
    public func answered(_ question: PeerQuestion, _ yes: Bool, all: Bool, key: String?) -> Bool {
        state.withLockedValue { state in
            if yes, case .connection(let request) = question { state.policy.accepted(request.peer.id) }
            let offerName: String? = if case .offer(let offer) = question { offer.info.name.raw } else { nil }
            return state.offers.answered(yes, all: all, offerName: offerName, key: key)
        }
    }

    private static func key(_ info: TransferInfo) -> String { "\(info.peer.id.hex)/\(info.id)" }
}
