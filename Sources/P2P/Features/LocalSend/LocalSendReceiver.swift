@preconcurrency import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The receiving side of LocalSend's upload API (v2), over HTTPS: `register`, `info`, `prepare-upload`,
/// `upload`, `cancel`. An offer goes through the receiver's `FileTransfers`: the same question (its offer
/// handler), the same rules, the same events (`FileTransfers.decide`, `report`), so a LocalSend sender is
/// one more kind of peer (`PeerKind.localSend`) for whoever reads them.
///
/// One upload session at a time (another sender meanwhile: 409). PIN: 401 wrong or missing, 429 after
/// `LocalSendPinGuard.attempts` per address. Uploads from another address than the offer's, with a wrong
/// token, after a cancel or for a declined offer: 403. JSON bodies over `jsonLimit`: 413; malformed: 400.
public final class LocalSendReceiver: Sendable {
    /// How the receiver presents itself and what it takes.
    public struct Configuration: Sendable {
        /// The name LocalSend devices show (`p2p receive --name`).
        public var alias: String
        /// The model shown under it.
        public var deviceModel: String? = "p2p"
        /// `headless` (no screen of its own: a terminal) or `desktop`.
        public var deviceType = "headless"
        /// The PIN senders must give; nil: none.
        public var pin: String?
        /// Addresses to listen on.
        public var hosts = ["0.0.0.0"]
        /// The port to try first (53317); any free one when taken.
        public var port = LocalSendDeviceInfo.defaultPort
        /// The largest JSON body taken (`prepare-upload` of many files included).
        public var jsonLimit = 1 << 20
        /// Idle or stalled connections are closed after this.
        public var idleTimeout: Duration = .seconds(30)
        /// An accepted session whose sender uploads nothing for this long (and has no upload under way) is
        /// ended when another sender offers, instead of answering it 409.
        public var abandonedAfter: Duration = .seconds(120)

        /// A configuration for `alias`.
        public init(alias: String) { self.alias = alias }
    }

    public let configuration: Configuration
    /// The certificate shown (its fingerprint names this node).
    public let certificate: LocalSendCertificate
    /// The devices heard of: `register` calls land here.
    public let devices: LocalSendDevices
    let transfers: FileTransfers
    private let state: NIOLockedValueBox<State>
    private let server = NIOLockedValueBox<HTTPServer?>(nil)

    private struct State {
        var pins: LocalSendPinGuard
        /// A `prepare-upload` is being decided (its question is open).
        var deciding: (ip: String, task: Task<OfferAnswer, Never>?)?
        /// The session being uploaded.
        var current: LocalSendIncoming?
        var port = 0
    }

    /// A receiver writing into `transfers.directory`; nothing listens before `start`.
    public init(transfers: FileTransfers, certificate: LocalSendCertificate, configuration: Configuration, devices: LocalSendDevices? = nil) {
        self.transfers = transfers
        self.certificate = certificate
        self.configuration = configuration
        self.devices = devices ?? LocalSendDevices(ownFingerprint: certificate.fingerprint)
        state = NIOLockedValueBox(State(pins: LocalSendPinGuard(pin: configuration.pin)))
    }

    /// How this node describes itself (`announce` unset).
    public var deviceInfo: LocalSendDeviceInfo {
        LocalSendDeviceInfo(alias: configuration.alias, deviceModel: configuration.deviceModel, deviceType: configuration.deviceType,
                            fingerprint: certificate.fingerprint, port: port, protocol: "https", download: false)
    }

    /// The port listened on (0 before `start`).
    public var port: Int { state.withLockedValue { $0.port } }

    /// Listens (HTTPS) on the configured addresses; returns the port.
    @discardableResult
    public func start() async throws -> Int {
        var serverConfiguration = HTTPServer.Configuration(hosts: configuration.hosts, port: configuration.port, tls: try certificate.serverContext())
        serverConfiguration.idleTimeout = configuration.idleTimeout
        let server = HTTPServer(configuration: serverConfiguration, router: router())
        let port = try await server.start()
        self.server.withLockedValue { $0 = server }
        state.withLockedValue { $0.port = port }
        return port
    }

    /// Stops listening; a session under way ends as cancelled here.
    public func stop() async {
        let current = state.withLockedValue { state in
            defer { state.current = nil }
            state.deciding?.task?.cancel()
            return state.current
        }
        if let current, current.cancel(.cancelled) { devices.emit(.sessionEnded(current.info.peer)) }
        await server.withLockedValue { $0 }?.stop()
    }

    /// The upload API's routes (also served over plain HTTP beside the browser upload page: `WebUploadServer`).
    func router() -> HTTPRouter {
        var router = HTTPRouter()
        router.on(.POST, LocalSendPath.register) { [self] request, body in
            let info = try await body.decode(LocalSendDeviceInfo.self, limit: 64 << 10, headers: request.headers)
            var seen = info
            if let fingerprint = request.clientFingerprint { seen.fingerprint = fingerprint }
            devices.record(seen, address: request.remoteIP, fingerprintSeen: request.clientFingerprint != nil)
            return .json(deviceInfo)
        }
        router.on(.GET, LocalSendPath.info) { [self] _, _ in .json(deviceInfo) }
        router.on(.POST, LocalSendPath.prepareUpload) { [self] request, body in try await prepareUpload(request, body) }
        router.on(.POST, LocalSendPath.upload) { [self] request, body in try await upload(request, body) }
        router.on(.POST, LocalSendPath.cancel) { [self] request, _ in
            guard let id = request.query["sessionId"] else { throw HTTPError(.badRequest, "missing sessionId") }
            let ended = state.withLockedValue { state -> LocalSendIncoming? in
                guard let current = state.current, current.id == id, current.senderIP == request.remoteIP else { return nil }
                state.current = nil
                return current
            }
            guard let ended else { throw HTTPError(.forbidden, "no such session from this address") }
            if ended.cancel(.cancelledByPeer(PeerText(FileTransfers.senderCancelledReason))) { devices.emit(.sessionEnded(ended.info.peer)) }
            return .empty()
        }
        return router
    }

    /// Whether no session is under way and no offer is being decided (a session whose sender went quiet
    /// without a cancel is ended first, so that it does not block the next sender for ever); `take`: the
    /// slot becomes `ip`'s offer being decided.
    private func freeSlot(for ip: String, take: Bool) -> Bool {
        let limit = configuration.abandonedAfter
        let (free, abandoned) = state.withLockedValue { state -> (Bool, LocalSendIncoming?) in
            var abandoned: LocalSendIncoming?
            if let current = state.current, current.isOver || current.isAbandoned(after: limit) {
                abandoned = current.isOver ? nil : current
                state.current = nil
            }
            guard state.deciding == nil, state.current == nil else { return (false, abandoned) }
            if take { state.deciding = (ip, nil) }
            return (true, abandoned)
        }
        if let abandoned, abandoned.cancel(.senderSilent(for: limit)) { devices.emit(.sessionEnded(abandoned.info.peer)) }
        return free
    }

    private func prepareUpload(_ request: HTTPRequest, _ body: HTTPRequestBody) async throws -> HTTPResponse {
        let ip = request.remoteIP
        switch state.withLockedValue({ $0.pins.check(request.query["pin"], from: ip) }) {
        case .allowed: break
        case .wrong: throw HTTPError(.unauthorized, request.query["pin"] == nil ? "PIN required" : "wrong PIN")
        case .tooMany: throw HTTPError(.tooManyRequests, "too many wrong PINs from \(ip); try again in a minute")
        }
        // Busy: said before the body is read. The slot is taken only once the whole body is here, so that a
        // client sending its body slowly (or half of it, then nothing) cannot hold every other sender off.
        guard freeSlot(for: ip, take: false) else { throw HTTPError(.conflict, "busy with another session") }
        let prepare = try await body.decode(LocalSendPrepareUpload.self, limit: configuration.jsonLimit, headers: request.headers)
        guard freeSlot(for: ip, take: true) else { throw HTTPError(.conflict, "busy with another session") }
        defer { state.withLockedValue { $0.deciding = nil } }
        var sender = prepare.info.truncated(to: 256)
        // Over TLS a v2.2 sender shows its certificate: its fingerprint, not the body's claim, names it.
        if let fingerprint = request.clientFingerprint { sender.fingerprint = fingerprint }
        let peer = LocalSendPeer.info(sender, address: ip)
        let read: LocalSendOffer
        do {
            read = try LocalSendOffer.read(prepare, from: peer, id: UInt64.random(in: 1 ... .max), into: transfers.directory)
        } catch let error as HTTPError {
            let info = TransferInfo(id: UInt64.random(in: 1 ... .max), peer: peer, name: PeerText(prepare.files.values.first?.fileName ?? "?"),
                                    size: 0, mediaType: "", direction: .receiving)
            transfers.report(.failed(info, .untruthfulOffer(peer: LocalSendPeer.label(of: peer), error.message)))
            throw error
        }
        // The question; a cancelled request (the sender gave up) withdraws it.
        let decision = Task { [transfers] in await transfers.decide(read.offer) }
        state.withLockedValue { $0.deciding?.task = decision }
        // The sender gave up waiting (closed its connection): the question is withdrawn.
        request.connectionClosed?.whenComplete { _ in decision.cancel() }
        let answer = await withTaskCancellationHandler { await decision.value } onCancel: { decision.cancel() }
        guard answer.accepted else { throw HTTPError(.forbidden, "declined") }
        switch read.content {
        case .text(let text): return try await receiveText(text, read.offer.info)
        case .files(let files): return try accept(read.offer, files: files, answer: answer, from: ip)
        }
    }

    /// A text message: nothing to upload (204); it arrives as a p2p text does.
    private func receiveText(_ text: String, _ info: TransferInfo) async throws -> HTTPResponse {
        transfers.report(.started(info, offset: 0))
        do {
            let bytes = Data(text.utf8)
            let url = try TextTransfer.stage(bytes)
            let sha = Array(SHA256.hash(data: bytes)).hex
            transfers.report(.finished(info, Delivery(name: info.name.raw, size: UInt64(bytes.count), sha256: sha, resumedFrom: 0, url: url)))
        } catch {
            transfers.report(.failed(info, .unwritable("text", "\(error)")))
            throw HTTPError(.internalServerError, "could not take the text: \(error)")
        }
        return .empty(.noContent)
    }

    /// An accepted offer: a token for each file the answer lets through; the session becomes current.
    private func accept(_ offer: IncomingOffer, files: [LocalSendFileInfo], answer: OfferAnswer, from ip: String) throws -> HTTPResponse {
        let info = offer.info
        var slots: [String: LocalSendIncoming.Slot] = [:]
        var skipped: [TreeReport.FileFailure] = []
        var needed: UInt64 = 0
        for file in files {
            if !answer.allowsHidden && SafePath.isHidden(file.fileName) {
                skipped.append(.init(name: file.fileName, reason: IncomingTree.hiddenReason))
                continue
            }
            let destination = try LocalSendOffer.resolve(file.fileName, in: transfers.directory)
            slots[file.id] = .init(file: file, token: Self.token(), destination: destination)
            needed += file.size
        }
        if let free = FileTransfers.freeBytes(at: transfers.directory.path), needed > free {
            let error = TransferError.unwritable(transfers.directory.path, "not enough space: \(ByteCount.describe(needed)) needed, \(ByteCount.describe(free)) free")
            transfers.report(.failed(info, error))
            throw HTTPError(.insufficientStorage, error.description)
        }
        guard !slots.isEmpty else {
            // Nothing the answer lets through: a single hidden file is denied, as a p2p one is.
            transfers.report(.failed(info, .skipped(info.name, IncomingTree.hiddenReason)))
            throw HTTPError(.forbidden, "declined: \(IncomingTree.hiddenReason)")
        }
        let incoming = LocalSendIncoming(id: UUID().uuidString, senderIP: ip, info: info, slots: slots, skipped: skipped, transfers: transfers)
        state.withLockedValue { $0.current = incoming }
        return .json(LocalSendUploadSession(sessionId: incoming.id, files: incoming.tokens))
    }

    static func token() -> String { (0 ..< 16).map { _ in String(format: "%02x", UInt8.random(in: 0 ... 255)) }.joined() }

    /// The session `id`, if it is the current one.
    func session(_ id: String) -> LocalSendIncoming? {
        state.withLockedValue { $0.current?.id == id ? $0.current : nil }
    }

    /// The session ended: it is no longer current, and its summary is due.
    func ended(_ incoming: LocalSendIncoming) {
        let wasCurrent = state.withLockedValue { state -> Bool in
            guard state.current === incoming else { return false }
            state.current = nil
            return true
        }
        if wasCurrent { devices.emit(.sessionEnded(incoming.info.peer)) }
    }
}
