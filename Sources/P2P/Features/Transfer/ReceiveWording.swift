import Foundation

/// What a receiver of files (`p2p receive`) says to a person: each sender's summary, the questions its
/// offers raise, and its notes. Every name from a peer is sanitized (``PeerText``) here, once.
public enum ReceiveWording {
    /// Up to `limit` peer-given names, sanitized, then "and N more".
    public static func list(_ names: [String], limit: Int = 5) -> String {
        let shown = names.prefix(limit).map(PeerText.sanitized).joined(separator: ", ")
        return names.count > limit ? "\(shown) and \(names.count - limit) more" : shown
    }

    /// The last word of a run whose transfer was cancelled (here or by a sender): the summaries above say
    /// what arrived and what was kept.
    public static let cancelled = "cancelled; what arrived stays, and the same send run again by its sender sends the rest"

    /// The lines around a text shown on a terminal; nothing on its lines, so that it copies as sent.
    public static func textFrame(from peer: String) -> (header: String, footer: String) {
        ("\(PeerText.sanitized(peer)) sent a text:", "── end of text ──")
    }

    /// "* Waiting for alice to resume big.iso (run the same send again; Ctrl-C to stop)."
    public static func waitingForResume(_ info: TransferInfo) -> String {
        "* Waiting for \(info.peer.displayName) to resume \(info.name) (run the same send again; Ctrl-C to stop)."
    }

    /// What a sender's leaving is called: that it left (`waitsForNext`: and the receiver waits for the
    /// next one), or, as a warning, why it refused this receiver.
    public static func left(_ peer: PeerInfo, reason: SessionError?, waitsForNext: Bool) -> (line: String, isWarning: Bool) {
        let name = peer.displayName
        switch reason {
        case .refusedAsUntrusted(let why)?:
            // A sender that has this name pinned to another key refused us: say so, not that it left.
            return ("* \(name) refused this machine's key; \(name) says: \(why)", true)
        case .refusedAsUnexpected(let why)?:
            // A sender that dialled another peer at this address (its address for it is out of date).
            return ("* \(name) was looking for another peer at this address; \(name) says: \(why)", true)
        default:
            return ("* \(name) left\(waitsForNext ? "; waiting for the next sender (Ctrl-C to stop)." : ".")", false)
        }
    }
}

extension ReceiveLedger.Counts {
    /// The summary line of what a sender (named `peer`) sent in `seconds` into `directory`: what arrived,
    /// and how it was checked (only what was is called verified), then what was already there, skipped,
    /// failed and cancelled. The rate counts the bytes that travelled, not those already here.
    public func summary(from peer: String, seconds: Double, into directory: String) -> String {
        let name = PeerText.sanitized(peer), count: (Int, String) -> String = ByteCount.describeCount
        var notes: [String] = []
        if alreadyThere > 0 { notes.append("\(alreadyThere) already there (same SHA-256), left as they were") }
        if skipped > 0 { notes.append("\(skipped) skipped (hidden paths; --allow-hidden writes them)") }
        if failed > 0 { notes.append("\(failed) failed") }
        if cancelled > 0 {
            let by = cancelledBy.map { "cancelled by \(PeerText.sanitized($0))" } ?? "cancelled here"
            notes.append("\(count(cancelled, "file")) did not arrive (\(by))")
            // What stays, and how to get the rest: the sender runs the same send again.
            let again = "the same send run again by \(name) " + (kept == nil ? "sends the rest" : "resumes it")
            notes.append((kept.map { "\(ByteCount.describe($0.bytes)) of \(PeerText.sanitized($0.name)) kept: " } ?? "") + again)
        }
        let rest = notes.isEmpty ? "" : "; " + notes.joined(separator: "; ")
        if files == 0 { return "Received no file from \(name)\(rest)" }
        let time = TransferMeter.timeAndRate(seconds: seconds, moved: moved)
        if files == 1, notes.isEmpty, let file = lastFile {
            return "Received \(PeerText.sanitized(file.name)) (\(ByteCount.describe(bytes))) from \(name) \(time)"
                + (file.path.map { " → \(PeerText.sanitized($0))" } ?? "") + "; " + checked
        }
        return "Received \(count(files, "file")) (\(ByteCount.describe(bytes))) from \(name) \(time) "
            + "into \(PeerText.sanitized(directory)); \(checked)\(rest)"
    }

    /// How the files that arrived were checked, exactly: by the sender's SHA-256, or (a LocalSend sender that
    /// gave none) by their size only; never "verified" for a file whose hash nobody gave.
    public var checked: String {
        let noHash = "the sender gave no SHA-256", count: (Int, String) -> String = ByteCount.describeCount
        switch (files, sizeOnly) {
        case (1, 0): return "SHA-256 verified"
        case (_, 0): return "each verified by SHA-256"
        case (1, _): return "size checked; \(noHash)"
        case let (files, sizeOnly) where sizeOnly == files: return "sizes checked; \(noHash)"
        case let (files, sizeOnly):
            return "\(count(files - sizeOnly, "file")) verified by SHA-256, \(count(sizeOnly, "file")) by size only (\(noHash) for \(sizeOnly == 1 ? "it" : "them"))"
        }
    }
}

extension IncomingOffer {
    /// The question this offer raises (``OfferQuestions/Question``), from the sender called `name`
    /// (a label, already sanitized).
    public func question(_ question: OfferQuestions.Question, from name: String) -> String {
        switch question {
        case .text:
            "\(name) wants to send you a text (\(ByteCount.describe(info.size))) — accept?"
        case .tree:
            "\(name) offers \(Self.contents(name: info.name.raw, fileCount: info.fileCount, size: info.size, roots: roots))\(risks) — accept?"
        case .folder(let folder):
            "\(name) offers the folder \(PeerText.sanitized(folder)) (first file \(info.name), \(ByteCount.describe(info.size))) — accept everything in it?"
        case .file:
            "\(name) offers \(info.name) (\(ByteCount.describe(info.size)), \(PeerText.sanitized(info.mediaType)))\(risks) — accept? (a: all from \(name))"
        }
    }

    /// Names what a yes would let through beyond plain files: " — includes hidden paths: .ssh/authorized_keys
    /// — executable: run.sh"; empty when there is nothing of the kind.
    public var risks: String {
        var text = ""
        if !hiddenPaths.isEmpty { text += " — includes hidden paths: \(ReceiveWording.list(hiddenPaths))" }
        if !executablePaths.isEmpty { text += " — executable: \(ReceiveWording.list(executablePaths))" }
        return text
    }

    /// What a tree offer holds, for its question: "notes.txt (161 B)", "5 files, 3.0 KiB in many/", and
    /// for several top-level items which ones: "2 files, 161 B: a.txt, b.txt".
    public static func contents(name: String, fileCount: Int, size: UInt64, roots: [String]) -> String {
        let bytes = ByteCount.describe(size), count: (Int, String) -> String = ByteCount.describeCount
        if fileCount == 1 && !name.hasSuffix("/") { return "\(PeerText.sanitized(name)) (\(bytes))" }
        if roots.count > 1 { return "\(count(fileCount, "file")), \(bytes): \(ReceiveWording.list(roots))" }
        return "\(count(fileCount, "file")), \(bytes) in \(PeerText.sanitized(name))"
    }
}

extension ReceiveLedger.Sender {
    /// The summary line of what this sender (named `peer`) sent into `directory`, timed from its first
    /// transfer to `now` (``ReceiveLedger/Counts/summary(from:seconds:into:)``); nil when nothing was offered.
    public func summary(from peer: String, into directory: String, at now: ContinuousClock.Instant = .now) -> String? {
        counts.isEmpty ? nil : counts.summary(from: peer, seconds: TransferMeter.seconds(now - began), into: directory)
    }
}
