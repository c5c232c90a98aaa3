/// What a receiver of files (`p2p receive`) decides about an offer before anyone is asked, from its
/// standing choices: accept everyone (`--yes`) or one sender (`--from NAME`), take texts only (`--text`),
/// and what an offer accepted unasked may write (hidden paths, execute bits). Pure: no clock, no I/O.
public struct ReceiveRules: Sendable, Equatable {
    /// Every offer and connection is accepted unasked.
    public var acceptsEveryone = false
    /// The sender whose offers and connections are accepted unasked: its pinned name for a pinned key,
    /// its display name, or its ID or fingerprint (a prefix of 80 bits at least) (``PeerMatcher``).
    public var from: String?
    /// Hidden paths and execute bits are written even when nobody was asked.
    public var allowsHidden = false, allowsExecutable = false
    /// Only texts are taken (`receive --text`); files are declined.
    public var textsOnly = false

    /// Rules with nothing accepted unasked.
    public init(acceptsEveryone: Bool = false, from: String? = nil, allowsHidden: Bool = false, allowsExecutable: Bool = false,
                textsOnly: Bool = false) {
        (self.acceptsEveryone, self.from, self.allowsHidden, self.allowsExecutable, self.textsOnly) =
            (acceptsEveryone, from, allowsHidden, allowsExecutable, textsOnly)
    }

    /// What becomes of an offer before anyone is asked.
    public enum Unasked: Sendable, Equatable {
        /// Declined: it is not a text, and only texts are taken.
        case declinedAsNotText
        /// Accepted unasked, letting through what the rules allow.
        case accepted(OfferAnswer)
        /// A person decides (``OfferQuestions``).
        case ask
    }

    /// Whether connections and offers from `peer` are accepted unasked (`--yes`, or `--from` names it:
    /// never a name pinned to another key, never by a prefix of fewer than 80 bits).
    public func trusts(_ peer: PeerInfo) -> Bool {
        acceptsEveryone || from.map { PeerMatcher($0).names(peer) } ?? false
    }

    /// The offer `info` before anyone is asked.
    public func unasked(_ info: TransferInfo) -> Unasked {
        if textsOnly && !TextTransfer.isText(info) { return .declinedAsNotText }
        if trusts(info.peer) { return .accepted(OfferAnswer(accepted: true, allowsHidden: allowsHidden, allowsExecutable: allowsExecutable)) }
        return .ask
    }

    /// A person's answer: a yes to a question that named the offer's hidden paths and execute bits
    /// allows them; a standing answer ("all from this sender", a folder's) did not name them.
    public func answer(_ yes: Bool, namedRisks: Bool) -> OfferAnswer {
        OfferAnswer(accepted: yes, allowsHidden: allowsHidden || namedRisks, allowsExecutable: allowsExecutable || namedRisks)
    }
}

/// Which offers a receiver asks a person about, and how: a text, a tree (one question for all of it),
/// the first file of a folder (the answer covers the folder), a loose file (the answer may cover the
/// sender's loose files: "a"). Keeps the answers that stand for later offers until their sender leaves.
/// Pure: the command asks, draws and reads keys.
public struct OfferQuestions: Sendable {
    /// The question an offer raises.
    public enum Question: Sendable, Equatable {
        /// A text: accept it?
        case text
        /// A tree: all of it, naming its hidden paths and execute bits.
        case tree
        /// The first file of this folder (`many/`) from its sender: accept everything in it?
        case folder(String)
        /// A loose file, naming its hidden paths and execute bits; "all from this sender" may answer it.
        case file

        /// Whether the question names the offer's hidden paths and execute bits (``ReceiveRules/answer(_:namedRisks:)``).
        public var namesRisks: Bool { self == .tree || self == .file }
    }

    /// What to do with an offer that is not accepted unasked.
    public enum Decision: Sendable, Equatable {
        /// An answer given before stands for it.
        case answered(Bool)
        /// Nobody can be asked (no terminal): declined, and said so.
        case declined
        /// Ask a person; `key`: the standing answer it may set (nil: this offer only).
        case ask(Question, key: String?)
        /// A question with the same `key` (the same folder) is waiting: this offer takes its answer.
        case joins(key: String)
    }

    /// Whether a person is there to answer.
    public let canAsk: Bool
    /// Answers that stand for later offers: a folder's (key: sender and folder), or "all" for a sender's
    /// loose files (key: sender).
    private var standing: [String: Bool] = [:]

    /// Questions for a run where a person can answer (`canAsk`) or not.
    public init(canAsk: Bool) { self.canAsk = canAsk }

    /// The folder an offered path is in ("many/" for "many/a/b.txt"), nil for a loose file.
    public static func folder(of path: String) -> String? {
        guard let slash = path.firstIndex(of: "/") else { return nil }
        return String(path[...slash])
    }

    /// Whether `key` is a sender's loose files' key ("<id>/"), which "all" answers; a folder's goes on ("<id>/many/").
    public static func isLooseKey(_ key: String) -> Bool { key.firstIndex(of: "/") == key.index(before: key.endIndex) }

    /// The decision for the offer `info`; `waiting`: whether a question with this key waits for an answer.
    public func decide(_ info: TransferInfo, waiting: (String) -> Bool = { _ in false }) -> Decision {
        let sender = info.peer.id.hex + "/"
        if TextTransfer.isText(info) { return canAsk ? .ask(.text, key: nil) : .declined }
        if info.isTree {
            if standing[sender] == true { return .answered(true) }
            return canAsk ? .ask(.tree, key: nil) : .declined
        }
        let folder = Self.folder(of: info.name.raw)
        let key = sender + (folder ?? "")
        // "All from this sender" covers its folders too.
        if let answer = standing[key] ?? (standing[sender] == true ? true : nil) { return .answered(answer) }
        guard canAsk else { return .declined }
        guard let folder else { return .ask(.file, key: key) }
        // Later offers of the folder wait behind its question and take its answer.
        return waiting(key) ? .joins(key: key) : .ask(.folder(folder), key: key)
    }

    /// A person answered the question about the offer named `offerName` (nil: not an offer) whose key
    /// is `key`; `all`: "all from this sender". Returns whether the answer covers every question waiting
    /// with the same key (a folder's always does), and keeps it for later offers then.
    public mutating func answered(_ yes: Bool, all: Bool, offerName: String?, key: String?) -> Bool {
        let covers = all || offerName.flatMap(Self.folder(of:)) != nil
        if let key, covers { standing[key] = yes }
        return covers
    }

    /// The sender left: its standing answers are forgotten.
    public mutating func senderLeft(_ peer: PeerID) {
        standing = standing.filter { !$0.key.hasPrefix(peer.hex + "/") }
    }
}
