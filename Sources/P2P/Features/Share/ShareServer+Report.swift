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

extension ShareServer {
    /// `http://ADDRESS:PORT/` for every IPv4 address of `interfaces` (this host's that are up), with the
    /// interface's name; loopback's when there is none, so the page can at least be opened here.
    public static func urls(port: Int, interfaces: [LocalInterface] = LocalInterface.up()) -> [(url: String, interface: String)] {
        let found = interfaces.flatMap { interface in
            interface.addresses.filter { $0.bytes.count == 4 }.map { ("http://\($0):\(port)/", interface.name) }
        }
        return found.isEmpty ? [("http://127.0.0.1:\(port)/", "lo")] : found
    }

    /// The `sharing` event (README): the port, the PIN, the URLs and the files with their sizes.
    public static func sharingEvent(files: [SharedFile], pin: SharePIN, port: Int, urls: [String]) -> [String: Any] {
        ["event": "sharing", "port": port, "pin": pin.value, "urls": urls, "files": files.map { ["name": $0.name, "size": $0.size] as [String: Any] }]
    }

    /// What is shared, for a person: "Sharing 2 files (3.0 KiB)".
    public static func sharing(_ files: [SharedFile]) -> String {
        "Sharing \(files.count == 1 ? "1 file" : "\(files.count) files") (\(ByteCount.describe(files.reduce(0) { $0 + $1.size })))"
    }

    /// The `done` event of a share over once every file was fetched (`--once`).
    public static func doneEvent(files: [SharedFile]) -> [String: Any] { ["event": "done", "files": files.count] }

    /// The line of a share over once every file was fetched (`--once`).
    public static let doneLine = "Every file was fetched (--once): the share is over."
}
