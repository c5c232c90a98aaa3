import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

/// A small HTTP/1.1 client on SwiftNIO (`NIOHTTP1`, `NIOSSL`): one request per connection, over HTTPS with
/// a TLS context of the caller's (LocalSend: any server certificate, ours shown as the client's) or plain
/// HTTP; the body given whole or streamed from a file; the answer's body read up to a limit; the server
/// certificate's SHA-256 reported, for the caller to compare with the fingerprint it expects.
public struct HTTPClient: Sendable {
    /// An answer.
    public struct Response: Sendable {
        /// The status.
        public var status: HTTPResponseStatus
        /// The body, at most the request's `responseLimit` bytes.
        public var body: ByteBuffer
        /// SHA-256 (upper-case hex) of the server's certificate, over HTTPS.
        public var serverFingerprint: String?
        /// The body as text, for messages.
        public var text: String { String(buffer: body) }
    }

    /// What the request carries.
    public enum Body: Sendable {
        /// Nothing.
        case none
        /// These bytes.
        case bytes(ByteBuffer)
        /// `length` bytes read from the file at `path`, in chunks, each after the connection took the last;
        /// `progress` hears the bytes sent so far.
        case file(path: String, length: UInt64, progress: @Sendable (UInt64) -> Void)
    }

    /// Why a request got no answer.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What happened, with the address.
        public let description: String
    }

    let tls: NIOSSLContext?
    let group: any EventLoopGroup

    /// A client; `tls` nil for plain HTTP.
    public init(tls: NIOSSLContext?, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.tls = tls
        self.group = group
    }

    /// Sends one request to `host:port` and reads the answer, all within `timeout` (a file body: the
    /// timeout is for the connection to stay silent, not for the whole upload).
    public func request(_ method: HTTPMethod, host: String, port: Int, path: String, headers: HTTPHeaders = [:], body: Body = .none,
                        timeout: Duration = .seconds(10), responseLimit: Int = 1 << 20) async throws -> Response {
        let tls = self.tls
        let address = "\(host):\(port)"
        let idle = TimeAmount.nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        let connection: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        let recorder = PeerCertificateRecorder()
        do {
            connection = try await ClientBootstrap(group: group)
                .connectTimeout(min(idle, .seconds(5)))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let tls {
                            try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: nil))
                            try pipeline.addHandler(recorder)
                        }
                        try pipeline.addHandler(IdleStateHandler(allTimeout: idle))
                        try pipeline.addHandler(IdleCloser())
                        try pipeline.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw Failure(description: "cannot connect to \(address): \(error)")
        }
        do {
            return try await connection.executeThenClose { inbound, outbound in
                var head = HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
                head.headers.replaceOrAdd(name: "host", value: address)
                head.headers.replaceOrAdd(name: "connection", value: "close")
                switch body {
                case .none: head.headers.replaceOrAdd(name: "content-length", value: "0")
                case .bytes(let bytes): head.headers.replaceOrAdd(name: "content-length", value: "\(bytes.readableBytes)")
                case .file(_, let length, _): head.headers.replaceOrAdd(name: "content-length", value: "\(length)")
                }
                try await outbound.write(.head(head))
                switch body {
                case .none: break
                case .bytes(let bytes): try await outbound.write(.body(.byteBuffer(bytes)))
                case .file(let path, let length, let progress): try await Self.stream(path, length: length, progress: progress, to: outbound)
                }
                try await outbound.write(.end(nil))
                var status: HTTPResponseStatus?
                var answer = ByteBuffer()
                for try await part in inbound {
                    switch part {
                    case .head(let head): status = head.status
                    case .body(var chunk):
                        if answer.readableBytes < responseLimit {
                            chunk.moveWriterIndex(to: chunk.readerIndex + min(chunk.readableBytes, responseLimit - answer.readableBytes))
                            answer.writeBuffer(&chunk)
                        }
                    case .end:
                        guard let status else { throw Failure(description: "\(address) answered without a status") }
                        return Response(status: status, body: answer, serverFingerprint: recorder.fingerprint.withLockedValue { $0 })
                    }
                }
                throw Failure(description: "\(address) closed the connection before answering")
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "\(address): \(error)")
        }
    }

    /// Reads the file a chunk at a time on a queue of its own (never on the cooperative pool) and writes
    /// each chunk once the connection took the last (the writer waits while the socket is full).
    private static func stream(_ path: String, length: UInt64, progress: @Sendable (UInt64) -> Void,
                               to outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>) async throws {
        let reader = ChunkReader(path: path)
        defer { reader.close() }
        var sent: UInt64 = 0
        while sent < length {
            try Task.checkCancellation()  // Ctrl-C: the upload stops within a chunk.
            let chunk = try await reader.read(Int(min(UInt64(1 << 18), length - sent)))
            guard chunk.readableBytes > 0 else { throw Failure(description: "\(path) is shorter than \(length) bytes") }
            try await outbound.write(.body(.byteBuffer(chunk)))
            sent += UInt64(chunk.readableBytes)
            progress(sent)
        }
    }
}

/// A file read in chunks on a queue of its own.
private final class ChunkReader: @unchecked Sendable {
    // The handle is only touched on `queue`.
    private var handle: FileHandle?
    private var failure: (any Error)?
    private let queue = DispatchQueue(label: "p2p.http.reader")
    private let path: String

    init(path: String) { self.path = path }

    func read(_ count: Int) async throws -> ByteBuffer {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer, any Error>) in
            queue.async { [self] in
                do {
                    if handle == nil { handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path)) }
                    let data = try handle?.read(upToCount: count) ?? Data()
                    continuation.resume(returning: ByteBuffer(bytes: data))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    func close() {
        queue.async { [self] in try? handle?.close() }
    }
}

/// Closes a client connection on which nothing moved for the idle time.
private final class IdleCloser: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
