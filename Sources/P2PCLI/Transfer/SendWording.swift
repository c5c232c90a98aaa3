import P2P

/// What `p2p send` says when a send ends: delivered (with its time and rate), or cut short by either side
/// (what the receiver kept, and the command that sends the rest). Pure: the numbers come from the
/// transfer's events (`TransferView`), the command from the process's arguments.
enum SendWording {
    /// `Delivered 2,000 files (7.7 MiB) to bob in 3.2 s (2.4 MiB/s), all verified.`; `timing`: how long the
    /// send took and the bytes that travelled (nil: not known, then neither is said).
    static func delivered(_ deliveries: [Delivery], to peer: String, timing: (seconds: Double, moved: UInt64)?) -> String {
        let total = deliveries.reduce(0) { $0 + $1.size }
        let there = deliveries.count { $0.alreadyThere }
        let note = there == 0 ? "" : there == deliveries.count ? " (all already there: nothing travelled)" : " (\(there) already there)"
        let time = timing.map { " " + TransferMeter.timeAndRate(seconds: $0.seconds, moved: $0.moved) } ?? ""
        return "Delivered \(ReceiveLoop.count(deliveries.count, "file")) (\(ByteCount.describe(total))) to \(Terminal.sanitize(peer))\(time), all verified\(note)."
    }

    /// What the receiver holds of a send cut short, from the send's last progress (its last ACK: bytes in
    /// flight may have landed since, hence "at least"): `at least 92.6 MiB of big.bin (512.0 MiB) kept at
    /// bob`, `at least 812 of 2,000 files (3.1 MiB of 7.8 MiB) kept at bob`; nil when nothing had reached it.
    static func kept(_ meter: TransferMeter?) -> String? {
        guard let meter, meter.done > 0 else { return nil }
        let peer = Terminal.sanitize(meter.peer)
        let bytes = "\(ByteCount.describe(min(meter.done, meter.size))) of \(ByteCount.describe(meter.size))"
        guard meter.files > 1 else { return "at least \(ByteCount.describe(meter.done)) of \(Terminal.sanitize(meter.name)) (\(ByteCount.describe(meter.size))) kept at \(peer)" }
        let files = "\(ByteCount.describeCount(min(meter.filesDone ?? 0, meter.files))) of \(ReceiveLoop.count(meter.files, "file"))"
        return "at least \(files) (\(bytes)) kept at \(peer)"
    }

    /// How to go on: `run the same command again to send the rest: p2p send many --to bob`.
    static func resume(_ meter: TransferMeter?, command: String) -> String {
        let what = meter.map { $0.done == 0 ? "to send it" : $0.files > 1 ? "to send the rest" : "to resume it" } ?? "to send the rest"
        return "run the same command again \(what): \(command)"
    }

    /// Ctrl-C on the sender in mid-transfer: what the receiver kept (or the files it had verified) and how
    /// to send the rest. `files`, `bytes`: files the receiver reported verified before the key.
    static func interrupted(files: Int, bytes: UInt64, to peer: String, meter: TransferMeter?, command: String) -> String {
        let name = Terminal.sanitize(peer)
        if files > 0 {
            return "interrupted after \(ReceiveLoop.count(files, "file")) (\(ByteCount.describe(bytes))) reached \(name), verified; "
                + resume(meter, command: command)
        }
        guard let kept = kept(meter) else { return "interrupted; nothing had reached \(name) yet; " + resume(meter, command: command) }
        return "interrupted; \(kept); " + resume(meter, command: command)
    }

    /// The receiver cancelled (its Ctrl-C, or it quit): what it kept and how to send the rest once it
    /// receives again.
    static func cancelledByReceiver(_ peer: String, meter: TransferMeter?, command: String) -> String {
        let name = Terminal.sanitize(peer)
        let kept = kept(meter).map { "; \($0)" } ?? "; nothing had reached \(name)"
        return "\(name) cancelled the transfer\(kept); once \(name) receives again, " + resume(meter, command: command)
    }

    /// This command as typed, to run again: `p2p send many --to bob`.
    static func command(_ arguments: [String]) -> String {
        (["p2p"] + arguments.dropFirst().map { PeerTarget.shellWord(Terminal.sanitize($0)) }).joined(separator: " ")
    }
}
