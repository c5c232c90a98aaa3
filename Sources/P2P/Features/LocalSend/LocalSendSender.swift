import Foundation
import NIOCore
import NIOHTTP1

/// Sends files or a text to a LocalSend device (upload API v2, as a v2.2 sender: over HTTPS it shows this
/// node's certificate): `prepare-upload` (with the PIN when one is given), then each file's bytes streamed
/// from disk, then nothing more; on a failure mid-way, `cancel`. The device's certificate must have the
/// fingerprint it announced, before any file is sent.
public struct LocalSendSender: Sendable {
    /// Why a send did not go through; each says what to do.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// 403 to the offer: the person there said no.
        case declined(PeerText)
        /// 409: the device is busy with another session.
        case busy(PeerText)
        /// 401: a PIN is needed, or the one given is wrong.
        case pinRequired(PeerText, given: Bool)
        /// 429: too many wrong PINs from this address.
        case tooManyTries(PeerText)
        /// The certificate the device showed is not the one it announced.
        case fingerprintMismatch(PeerText, announced: String, shown: String)
        /// No answer, or not one of the protocol's.
        case failed(PeerText, String)
        /// This side cancelled (the task was cancelled: Ctrl-C). `sent`: the files the device took whole
        /// before; `told`: whether the device was told (an upload session to cancel there existed).
        case cancelled(PeerText, sent: [String], told: Bool)

        /// For people.
        public var description: String {
            switch self {
            case .declined(let name): "\(name) declined"
            case .busy(let name): "\(name) is busy with another transfer (409); try again when it is done"
            case .pinRequired(let name, let given): given ? "\(name) says the PIN is wrong (401)" : "\(name) wants a PIN (401): add --pin PIN"
            case .tooManyTries(let name): "\(name) refuses more PIN tries from this address for now (429); wait a minute"
            case .fingerprintMismatch(let name, let announced, let shown):
                "\(name) showed a certificate with fingerprint \(shown.prefix(16))…, not the announced \(announced.prefix(16))…; nothing was sent"
            case .failed(let name, let why): "\(name): \(why)"
            case .cancelled(let name, let sent, let told):
                told ? (sent.isEmpty ? "cancelled before any file went whole" : "cancelled after \(sent.count) file\(sent.count == 1 ? "" : "s") went whole")
                    + "; \(name) was told, and keeps no part of the file under way (LocalSend does not resume: the same send starts it again)"
                    : "cancelled before \(name) answered the offer; nothing was sent"
            }
        }
    }

    /// One file to send: where it is, the relative name it goes under, its size.
    public struct Item: Sendable {
        /// The file.
        public var url: URL
        /// Its name at the receiver (`folder/file.jpg` for a file of a folder).
        public var name: String
        /// Bytes.
        public var size: UInt64
        /// A file to send.
        public init(url: URL, name: String, size: UInt64) {
            self.url = url
            self.name = name
            self.size = size
        }
    }

    let client: HTTPClient
    let me: LocalSendDeviceInfo
    /// How long the device's person may take to answer the offer.
    public var answerTimeout: Duration = .seconds(120)

    /// A sender describing itself as `me`, with `client` (showing this node's certificate).
    public init(client: HTTPClient, me: LocalSendDeviceInfo) {
        self.client = client
        self.me = me
    }

    /// The files of `urls` (a folder as its regular files, by relative name), as items.
    public static func items(_ urls: [URL]) throws(TransferError) -> [Item] {
        var items: [Item] = []
        for url in urls {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            let pairs = isDirectory.boolValue ? try FileTransfers.files(under: url) : [(url, url.lastPathComponent)]
            for (file, name) in pairs {
                let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.uint64Value ?? 0
                items.append(Item(url: file, name: name, size: size))
            }
        }
        return items
    }

    /// Sends `items` to `device` (heard at `address`); `progress` hears each file's bytes sent so far.
    /// Returns the deliveries (LocalSend reports no hash back: the sha256 is the one p2p announced).
    public func send(_ items: [Item], to device: LocalSendDeviceInfo, at address: String, pin: String? = nil,
                     progress: @escaping @Sendable (Item, UInt64) -> Void = { _, _ in }) async throws -> [Delivery] {
        var files: [String: LocalSendFileInfo] = [:]
        var byID: [String: Item] = [:]
        for item in items {
            let id = UUID().uuidString
            let sha256 = try await LocalSendHashing.sha256(of: item.url)
            files[id] = LocalSendFileInfo(id: id, fileName: item.name, size: item.size, fileType: Self.mediaType(of: item.name), sha256: sha256)
            byID[id] = item
        }
        let name = PeerText(device.alias)
        let session: LocalSendUploadSession?
        do {
            session = try await prepare(LocalSendPrepareUpload(info: me, files: files), to: device, at: address, pin: pin)
        } catch where Task.isCancelled {
            // Cancelled while the device's person was deciding: there is no upload session to cancel there.
            throw Failure.cancelled(name, sent: [], told: false)
        }
        guard let session else { return [] }
        var sent: [String] = []
        for (id, token) in session.files.sorted(by: { $0.key < $1.key }) {
            guard let item = byID[id], let info = files[id] else { continue }
            let path = "\(LocalSendPath.upload)?sessionId=\(Self.escape(session.sessionId))&fileId=\(Self.escape(id))&token=\(Self.escape(token))"
            do {
                let answer = try await client(for: device).request(.POST, host: address, port: device.effectivePort, path: path,
                                                                   headers: ["content-type": "application/octet-stream"],
                                                                   body: .file(path: item.url.path, length: item.size, progress: { progress(item, $0) }),
                                                                   timeout: .seconds(60))
                guard answer.status == .ok || answer.status == .noContent else {
                    throw Failure.failed(name, "\(item.name) was refused (HTTP \(answer.status.code): \(PeerText(String(answer.text.prefix(200)))))")
                }
            } catch where Task.isCancelled {
                await cancel(session.sessionId, at: device, address: address)
                throw Failure.cancelled(name, sent: sent, told: true)
            } catch let failure as Failure {
                await cancel(session.sessionId, at: device, address: address)
                throw failure
            } catch {
                // The device closed the connection mid-file (its person cancelled, or it failed): say which
                // file broke off, not only the socket's error.
                await cancel(session.sessionId, at: device, address: address)
                throw Failure.failed(name, "the upload of \(PeerText(item.name)) broke off (\(error)): cancelled or failed on the device; "
                                     + "the files after it were not sent")
            }
            _ = info
            sent.append(item.name)
        }
        return session.files.keys.compactMap { id in
            guard let item = byID[id], let info = files[id] else { return nil }
            return Delivery(name: item.name, size: item.size, sha256: info.sha256 ?? "", resumedFrom: 0, url: nil)
        }
    }

    /// Sends a text message: one file whose `preview` holds it (204: shown there). A device that wants the
    /// bytes anyway gets them as `NAME.txt`.
    public func send(text: String, to device: LocalSendDeviceInfo, at address: String, pin: String? = nil) async throws {
        let id = UUID().uuidString
        let bytes = Data(text.utf8)
        let file = LocalSendFileInfo(id: id, fileName: "\(id).txt", size: UInt64(bytes.count), fileType: "text/plain",
                                     sha256: Array(LocalSendHashing.sha256(bytes)).hex, preview: text)
        guard let session = try await prepare(LocalSendPrepareUpload(info: me, files: [id: file]), to: device, at: address, pin: pin),
              let token = session.files[id] else { return }
        let path = "\(LocalSendPath.upload)?sessionId=\(Self.escape(session.sessionId))&fileId=\(Self.escape(id))&token=\(Self.escape(token))"
        let answer = try await client(for: device).request(.POST, host: address, port: device.effectivePort, path: path, body: .bytes(ByteBuffer(bytes: bytes)))
        guard answer.status == .ok || answer.status == .noContent else {
            throw Failure.failed(PeerText(device.alias), "the text was refused (HTTP \(answer.status.code))")
        }
    }

    /// `prepare-upload`: the session, or nil for 204 (nothing to upload).
    private func prepare(_ request: LocalSendPrepareUpload, to device: LocalSendDeviceInfo, at address: String, pin: String?) async throws -> LocalSendUploadSession? {
        let name = PeerText(device.alias)
        let body = ByteBuffer(bytes: try JSONEncoder().encode(request))
        let query = pin.map { "?pin=\(Self.escape($0))" } ?? ""
        let answer: HTTPClient.Response
        do {
            answer = try await client(for: device).request(.POST, host: address, port: device.effectivePort, path: LocalSendPath.prepareUpload + query,
                                                           headers: ["content-type": "application/json"], body: .bytes(body), timeout: answerTimeout)
        } catch {
            throw Failure.failed(name, "\(error)")
        }
        if device.usesHTTPS, let shown = answer.serverFingerprint, !device.hasFingerprint(shown) {
            throw Failure.fingerprintMismatch(name, announced: device.fingerprint, shown: shown)
        }
        switch answer.status.code {
        case 200:
            guard let session = try? JSONDecoder().decode(LocalSendUploadSession.self, from: Data(answer.body.readableBytesView)) else {
                throw Failure.failed(name, "its answer to the offer is not LocalSend's JSON")
            }
            return session
        case 204: return nil
        case 401: throw Failure.pinRequired(name, given: pin != nil)
        case 403: throw Failure.declined(name)
        case 409: throw Failure.busy(name)
        case 429: throw Failure.tooManyTries(name)
        default: throw Failure.failed(name, "it answered the offer with HTTP \(answer.status.code) \(PeerText(String(answer.text.prefix(200))))")
        }
    }

    /// Tells the device to end the upload session. In a task of its own: the send's task may be the one
    /// cancelled, and the cancel must still go out.
    private func cancel(_ sessionId: String, at device: LocalSendDeviceInfo, address: String) async {
        let client = client(for: device)
        await Task {
            _ = try? await client.request(.POST, host: address, port: device.effectivePort,
                                          path: "\(LocalSendPath.cancel)?sessionId=\(Self.escape(sessionId))", timeout: .seconds(5))
        }.value
    }

    private func client(for device: LocalSendDeviceInfo) -> HTTPClient {
        device.usesHTTPS ? client : HTTPClient(tls: nil, group: client.group)
    }

    static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? value
    }

    /// A media type from a name's extension, for the device's icon; `application/octet-stream` otherwise.
    static func mediaType(of name: String) -> String {
        switch (name as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "txt": "text/plain"
        case "pdf": "application/pdf"
        case "mp4": "video/mp4"
        case "mp3": "audio/mpeg"
        case "zip": "application/zip"
        default: "application/octet-stream"
        }
    }
}
