/// What a share decides for each request of the LocalSend download API, without sockets: who may list
/// the files (the PIN, guesses limited per address), which session may fetch which file, and, with
/// `once`, when every file has been fetched and the share is over.
///
/// A session is what a right PIN buys: a random ID bound to the address that gave the PIN. The page keeps
/// it to list the files again after a reload (`prepare-download?sessionId=`) and to fetch each file.
public struct ShareState: Sendable {
    /// The answer to `POST /api/localsend/v2/prepare-download`.
    public enum PrepareAnswer: Sendable, Equatable {
        /// 200: the session (new, or the one given) and the files.
        case files(sessionID: String, [SharedFile])
        /// 401: no PIN was given (and no session of this address).
        case pinRequired
        /// 401: the PIN is wrong.
        case wrongPIN
        /// 429: too many wrong PINs from this address; it may try again after this long.
        case tooManyGuesses(retryAfter: Duration)
    }

    /// The answer to `GET /api/localsend/v2/download`.
    public enum DownloadAnswer: Sendable, Equatable {
        /// 200: stream this file.
        case file(SharedFile)
        /// 403: no such session, or it belongs to another address.
        case forbidden
        /// 404: the session is fine but the share has no such file.
        case noSuchFile
    }

    /// The files offered, in order.
    public let files: [SharedFile]
    /// The PIN browsers must give.
    public let pin: SharePIN
    /// Whether the share ends once every file has been fetched whole.
    public let once: Bool
    /// Sessions remembered at most (the oldest is forgotten first).
    public static let maxSessions = 256

    private var guesses: PINGuessLimit
    private var sessions: [String: String] = [:]
    private var sessionOrder: [String] = []
    private var fetchedIDs: Set<String> = []
    private let newSessionID: @Sendable () -> String

    /// A share of `files` behind `pin`. `newSessionID` makes session IDs (random by default; tests pass
    /// their own).
    public init(files: [SharedFile], pin: SharePIN, once: Bool, guesses: PINGuessLimit = PINGuessLimit(),
                newSessionID: @escaping @Sendable () -> String = ShareState.randomSessionID) {
        self.files = files
        self.pin = pin
        self.once = once
        self.guesses = guesses
        self.newSessionID = newSessionID
    }

    /// `prepare-download` from `address`, with the query's `pin` and `sessionId` (either may be absent).
    /// A session of this address is taken back without the PIN (the page reloaded); anything else needs it.
    public mutating func prepareDownload(pin given: String?, sessionID: String?, from address: String,
                                         at now: ContinuousClock.Instant) -> PrepareAnswer {
        if let sessionID, sessions[sessionID] == address {
            return .files(sessionID: sessionID, files)
        }
        if let wait = guesses.wait(for: address, at: now) { return .tooManyGuesses(retryAfter: wait) }
        guard let given, !given.isEmpty else { return .pinRequired }
        guard pin.matches(given) else {
            guesses.recordFailure(from: address, at: now)
            return .wrongPIN
        }
        guesses.recordSuccess(from: address)
        let session = newSessionID()
        sessions[session] = address
        sessionOrder.append(session)
        if sessionOrder.count > Self.maxSessions { sessions[sessionOrder.removeFirst()] = nil }
        return .files(sessionID: session, files)
    }

    /// `download` of `fileID` in `sessionID` from `address`.
    public func download(sessionID: String?, fileID: String?, from address: String) -> DownloadAnswer {
        guard let sessionID, sessions[sessionID] == address else { return .forbidden }
        guard let file = files.first(where: { $0.id == fileID }) else { return .noSuchFile }
        return .file(file)
    }

    /// The file `fileID` was sent whole. Returns true when, with `once`, this was the last file not yet
    /// fetched: the share is over (true only once).
    public mutating func fetched(_ fileID: String) -> Bool {
        let wasOver = isOver
        if files.contains(where: { $0.id == fileID }) { fetchedIDs.insert(fileID) }
        return !wasOver && isOver
    }

    /// With `once`: every file has been fetched whole at least once.
    public var isOver: Bool { once && fetchedIDs.count == files.count }

    /// How many different files have been fetched whole.
    public var fetchedCount: Int { fetchedIDs.count }

    /// 128 random bits, hex.
    public static let randomSessionID: @Sendable () -> String = {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
