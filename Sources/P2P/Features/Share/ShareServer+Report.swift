extension ShareServer.Event {
    /// The event for programs (`listed`, `wrong-pin`, `locked-out`, `file-started`, `file-sent`,
    /// `file-failed`); nil for ``over``, which the app reports its own way.
    public var json: [String: any Sendable]? {
        switch self {
        case .listed(let address): ["event": "listed", "address": address]
        case .wrongPIN(let address): ["event": "wrong-pin", "address": address]
        case .lockedOut(let address): ["event": "locked-out", "address": address]
        case .started(let file, let address): ["event": "file-started", "name": file.name, "size": file.size, "address": address]
        case .sent(let file, let address): ["event": "file-sent", "name": file.name, "size": file.size, "address": address]
        case .failed(let file, let address, let reason): ["event": "file-failed", "name": file.name, "address": address, "reason": reason]
        case .over: nil
        }
    }

    /// What a person reads of it, sanitized (nil: nothing to say, as for a download that starts), and
    /// whether it is a warning (a wrong PIN, a download cut short) or a refusal (too many wrong PINs).
    public var line: (text: String, severity: Severity)? {
        switch self {
        case .listed(let address): ("\(address) opened the list", .info)
        case .wrongPIN(let address): ("\(address) gave a wrong PIN", .warning)
        case .lockedOut(let address): ("\(address) gave too many wrong PINs: refused for a minute", .refusal)
        case .sent(let file, let address): ("\(address) fetched \(PeerText.sanitized(file.name)) (\(ByteCount.describe(file.size)))", .info)
        case .failed(let file, let address, let reason): ("\(address) did not get all of \(PeerText.sanitized(file.name)): \(reason)", .warning)
        case .started, .over: nil
        }
    }

    /// How much a line of the share matters to the person sharing.
    public enum Severity: Sendable {
        /// News.
        case info
        /// Something went wrong for one browser.
        case warning
        /// A browser is refused.
        case refusal
    }
}
