/// What a send says when it ends: delivered (with its time and rate), or cut short by either side (what
/// the receiver kept, and the command that sends the rest). Pure: the numbers come from the transfer's
/// events (``TransferTally``), the command from the app. Every peer's text in it is sanitized.
public enum SendWording {
    /// `Delivered 2,000 files (7.7 MiB) to bob in 3.2 s (2.4 MiB/s), all verified.`; `timing`: how long the
    /// send took and the bytes that travelled (nil: not known, then neither is said).
    public static func delivered(_ deliveries: [Delivery], to peer: String, timing: (seconds: Double, moved: UInt64)?) -> String {
        let total = deliveries.reduce(0) { $0 + $1.size }
        let there = deliveries.count { $0.alreadyThere }
        let note = there == 0 ? "" : there == deliveries.count ? " (all already there: nothing travelled)" : " (\(there) already there)"
        let time = timing.map { " " + TransferMeter.timeAndRate(seconds: $0.seconds, moved: $0.moved) } ?? ""
        return "Delivered \(ByteCount.describeCount(deliveries.count, "file")) (\(ByteCount.describe(total))) to \(PeerText.sanitized(peer))\(time), all verified\(note)."
    }

    /// `Delivered a text (12 characters) to bob.`
    public static func deliveredText(characters: Int, to peer: String) -> String {
        "Delivered a text (\(ByteCount.describeCount(characters, "character"))) to \(PeerText.sanitized(peer))."
    }

    /// A connection to the receiver was lost and the send resumed over a new one (``SendRun``'s `onResume`):
    /// `the connection to bob was lost; resumed over a new one (2)`.
    public static func resuming(_ peer: PeerInfo, attempt: Int) -> String {
        "the connection to \(peer.displayName) was lost; resumed over a new one (\(attempt))"
    }

    /// The same for programs: the `resuming` event.
    public static func resumingEvent(_ peer: PeerInfo, attempt: Int) -> [String: any Sendable] {
        ["event": "resuming", "peer": peer.displayName, "id": peer.id.hex, "attempt": attempt]
    }

    /// A path named to send that cannot go, said before any network work:
    /// `notes.txt: no such file or directory; nothing was sent`.
    public static func unsendable(_ path: String, _ problem: SendRun.PathProblem) -> String {
        switch problem {
        case .missing: "\(PeerText.sanitized(path)): no such file or directory; nothing was sent"
        case .unreadable: "\(PeerText.sanitized(path)): permission denied (cannot read it); nothing was sent"
        }
    }

    /// What the receiver holds of a send cut short, from the send's last progress (its last ACK: bytes in
    /// flight may have landed since, hence "at least"): `at least 92.6 MiB of big.bin (512.0 MiB) kept at
    /// bob`, `at least 812 of 2,000 files (3.1 MiB of 7.8 MiB) kept at bob`; nil when nothing had reached it.
    public static func kept(_ meter: TransferMeter?) -> String? {
        guard let meter, meter.done > 0 else { return nil }
        let peer = PeerText.sanitized(meter.peer)
        let bytes = "\(ByteCount.describe(min(meter.done, meter.size))) of \(ByteCount.describe(meter.size))"
        guard meter.files > 1 else {
            return "at least \(ByteCount.describe(meter.done)) of \(PeerText.sanitized(meter.name)) (\(ByteCount.describe(meter.size))) kept at \(peer)"
        }
        let files = "\(ByteCount.describeCount(min(meter.filesDone ?? 0, meter.files))) of \(ByteCount.describeCount(meter.files, "file"))"
        return "at least \(files) (\(bytes)) kept at \(peer)"
    }

    /// How to go on: `run the same command again to send the rest: p2p send many --to bob`.
    public static func resume(_ meter: TransferMeter?, command: String) -> String {
        let what = meter.map { $0.done == 0 ? "to send it" : $0.files > 1 ? "to send the rest" : "to resume it" } ?? "to send the rest"
        return "run the same command again \(what): \(command)"
    }

    /// Ctrl-C on the sender in mid-transfer: what the receiver kept (or the files it had verified) and how
    /// to send the rest. `files`, `bytes`: files the receiver reported verified before the key.
    public static func interrupted(files: Int, bytes: UInt64, to peer: String, meter: TransferMeter?, command: String) -> String {
        let name = PeerText.sanitized(peer)
        if files > 0 {
            return "interrupted after \(ByteCount.describeCount(files, "file")) (\(ByteCount.describe(bytes))) reached \(name), verified; "
                + resume(meter, command: command)
        }
        guard let kept = kept(meter) else { return "interrupted; nothing had reached \(name) yet; " + resume(meter, command: command) }
        return "interrupted; \(kept); " + resume(meter, command: command)
    }

    /// The receiver cancelled (its Ctrl-C, or it quit): what it kept and how to send the rest once it
    /// receives again.
    public static func cancelledByReceiver(_ peer: String, meter: TransferMeter?, command: String) -> String {
        let name = PeerText.sanitized(peer)
        let kept = kept(meter).map { "; \($0)" } ?? "; nothing had reached \(name)"
        return "\(name) cancelled the transfer\(kept); once \(name) receives again, " + resume(meter, command: command)
    }
}
