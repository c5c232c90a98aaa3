import Foundation
import NIOCore
import NIOHTTP1

/// `POST /api/localsend/v2/upload`: one file's bytes, streamed from the request body into its `.part`
/// (`LocalSendFileSink`) a buffer at a time, the connection reading no further while the disk catches up.
extension LocalSendReceiver {
    /// Bytes gathered from the network before one write to disk.
    static let writeBuffer = 1 << 20

    func upload(_ request: HTTPRequest, _ body: HTTPRequestBody) async throws -> HTTPResponse {
        guard let sessionId = request.query["sessionId"], let fileId = request.query["fileId"], let token = request.query["token"] else {
            throw HTTPError(.badRequest, "missing sessionId, fileId or token")
        }
        guard let incoming = session(sessionId) else { throw HTTPError(.forbidden, "no such session (cancelled, finished or never offered)") }
        let slot = try incoming.claim(fileId: fileId, token: token, from: request.remoteIP)
        if let length = request.contentLength, UInt64(length) != slot.file.size {
            return try await fail(incoming, fileId, .sizeMismatch(expected: slot.file.size, got: UInt64(length)), sink: nil)
        }
        let sink = LocalSendFileSink(destination: slot.destination, size: slot.file.size, sha256: slot.file.sha256, overwrite: transfers.configuration.overwrite,
                                     sender: incoming.info.peer.id)
        incoming.begin()
        do {
            try await sink.open()
        } catch {
            return try await fail(incoming, fileId, error, sink: sink, status: .internalServerError)
        }
        var pending = ByteBuffer()
        var received: UInt64 = 0
        var lastProgress = ContinuousClock.now
        do {
            while var chunk = try await body.next() {
                guard !incoming.isOver else { return try await fail(incoming, fileId, .cancelledByPeer(PeerText(FileTransfers.senderCancelledReason)), sink: sink) }
                received += UInt64(chunk.readableBytes)
                if received > slot.file.size {
                    return try await fail(incoming, fileId, .sizeMismatch(expected: slot.file.size, got: received), sink: sink)
                }
                pending.writeBuffer(&chunk)
                if pending.readableBytes >= Self.writeBuffer {
                    try await sink.write(pending)
                    pending.clear()
                }
                if ContinuousClock.now - lastProgress > .milliseconds(250) {
                    lastProgress = .now
                    incoming.progress(received)
                }
            }
            if pending.readableBytes > 0 { try await sink.write(pending) }
            incoming.progress(received)
            let delivery = try await sink.finish(name: slot.file.fileName)
            incoming.ended(fileId, .success(delivery))
            if incoming.isOver { ended(incoming) }
            return .empty()
        } catch let error as TransferError {
            let status: HTTPResponseStatus = switch error {
            case .verificationFailed, .sizeMismatch: .badRequest
            default: .internalServerError
            }
            return try await fail(incoming, fileId, error, sink: sink, status: status)
        } catch {
            // The connection broke or stalled mid-body: the file is short.
            return try await fail(incoming, fileId, .sizeMismatch(expected: slot.file.size, got: received), sink: sink)
        }
    }

    /// The file failed: its `.part` goes, the failure is reported, and the sender hears why.
    private func fail(_ incoming: LocalSendIncoming, _ fileId: String, _ error: TransferError, sink: LocalSendFileSink?,
                      status: HTTPResponseStatus = .badRequest) async throws -> HTTPResponse {
        await sink?.discard()
        incoming.begin()
        incoming.ended(fileId, .failure(error))
        if incoming.isOver { ended(incoming) }
        throw HTTPError(status, error.description)
    }
}
