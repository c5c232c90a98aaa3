import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// `p2p share`'s server: the page at `/` and LocalSend's download API (`prepare-download`, `download`)
/// over plain HTTP (browsers refuse self-signed certificates; the PIN guards the files), deciding through
/// `ShareState` and streaming each file from disk.
public final class ShareServer: Sendable {
    /// What happened, for the person sharing. Addresses are the browsers' IP addresses.
    public enum Event: Sendable, Equatable {
        /// A browser gave the right PIN (or came back with its session) and sees the list.
        case listed(by: String)
        /// A browser gave a wrong PIN.
        case wrongPIN(from: String)
        /// A browser is refused for a while after too many wrong PINs.
        case lockedOut(from: String)
        /// A file is being sent.
        case started(SharedFile, to: String)
        /// A file was sent whole.
        case sent(SharedFile, to: String)
        /// A file's download ended early (why).
        case failed(SharedFile, to: String, reason: String)
        /// With `once`: every file was fetched whole; the share is over.
        case over
    }

    /// What the share answers with, after each request.
    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let state: NIOLockedValueBox<ShareState>
    private let server: NIOLockedValueBox<HTTPServer?> = NIOLockedValueBox(nil)
    private let info: LocalSendDeviceInfo

    /// A share of `files` behind `pin`, named `alias` in the page.
    public init(files: [SharedFile], pin: SharePIN, once: Bool, alias: String) {
        state = NIOLockedValueBox(ShareState(files: files, pin: pin, once: once))
        // In HTTP mode the fingerprint is a random string (LocalSend v2, section 2).
        info = LocalSendDeviceInfo(alias: alias, deviceModel: "p2p", deviceType: "headless", fingerprint: ShareState.randomSessionID(),
                                   port: nil, protocol: "http", download: true)
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(1024))
    }

    /// Listens on `hosts` at `port` (with `fallsBack`, any free port when it is taken); returns the port.
    public func start(hosts: [String] = ["0.0.0.0"], port: Int, fallsBack: Bool) async throws -> Int {
        var configuration = HTTPServer.Configuration(hosts: hosts, port: port)
        configuration.fallsBackToAnyPort = fallsBack
        let server = HTTPServer(configuration: configuration, router: router())
        self.server.withLockedValue { $0 = server }
        return try await server.start()
    }

    /// Ends the share: downloads under way finish (their last bytes on the wire), then every connection closes.
    public func finish() async {
        await server.withLockedValue { $0 }?.quiesce()
        continuation.finish()
    }

    /// Ends the share at once (Ctrl-C): downloads under way are cut.
    public func stop() async {
        await server.withLockedValue { $0 }?.stop()
        continuation.finish()
    }

    private func router() -> HTTPRouter {
        var router = HTTPRouter()
        router.on(.GET, "/") { _, _ in
            HTTPResponse(status: .ok, headers: HTTPHeaders(SharePage.headers), body: .bytes(ByteBuffer(string: SharePage.html)))
        }
        router.on(.POST, LocalSendPath.prepareDownload) { [self] request, _ in prepareDownload(request) }
        router.on(.GET, LocalSendPath.download) { [self] request, _ in try download(request) }
        return router
    }

    func prepareDownload(_ request: HTTPRequest) -> HTTPResponse {
        let address = request.remoteIP
        let answer = state.withLockedValue {
            $0.prepareDownload(pin: request.query["pin"], sessionID: request.query["sessionId"], from: address, at: .now)
        }
        switch answer {
        case .files(let session, let files):
            continuation.yield(.listed(by: address))
            let listed = files.map { LocalSendFileInfo(id: $0.id, fileName: $0.name, size: $0.size, fileType: $0.fileType) }
            return noStore(.json(LocalSendDownloadSession(info: info, sessionId: session, files: Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0) }))))
        case .pinRequired:
            return .text(.unauthorized, "PIN required")
        case .wrongPIN:
            continuation.yield(.wrongPIN(from: address))
            return .text(.unauthorized, "Invalid PIN")
        case .tooManyGuesses(let wait):
            continuation.yield(.lockedOut(from: address))
            var response = HTTPResponse.text(.tooManyRequests, "Too many wrong PINs from \(address); try again in \(wait.components.seconds + 1) s")
            response.headers.add(name: "retry-after", value: "\(wait.components.seconds + 1)")
            return response
        }
    }

    func download(_ request: HTTPRequest) throws -> HTTPResponse {
        let address = request.remoteIP
        let answer = state.withLockedValue { $0.download(sessionID: request.query["sessionId"], fileID: request.query["fileId"], from: address) }
        let file: SharedFile
        switch answer {
        case .forbidden: throw HTTPError(.forbidden, "no such session for \(address): give the PIN again")
        case .noSuchFile: throw HTTPError(.notFound, "no such file in this share")
        case .file(let shared): file = shared
        }
        let reader: SharedFileReader
        do {
            reader = try SharedFileReader(file.source)
        } catch {
            throw HTTPError(.gone, "\(file.name) cannot be read any more: \(error)")
        }
        guard reader.size == file.size else {
            throw HTTPError(.conflict, "\(file.name) changed on disk since the share started (\(file.size) bytes then, \(reader.size) now)")
        }
        let headers: HTTPHeaders = ["content-type": file.fileType, "content-disposition": file.contentDisposition,
                                    "cache-control": "no-store", "x-content-type-options": "nosniff"]
        return HTTPResponse(status: .ok, headers: headers, body: .stream(length: file.size) { [self] writer in
            continuation.yield(.started(file, to: address))
            do {
                try await reader.stream(file.size, to: writer)
            } catch {
                continuation.yield(.failed(file, to: address, reason: error is ShareError ? "\(error)" : "the browser stopped reading"))
                throw error
            }
            continuation.yield(.sent(file, to: address))
            if state.withLockedValue({ $0.fetched(file.id) }) { continuation.yield(.over) }
        })
    }

    private func noStore(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.add(name: "cache-control", value: "no-store")
        return response
    }
}
