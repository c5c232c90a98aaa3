import Foundation
import NIOCore
import NIOHTTP1

/// A request's body, read as it arrives: chunk by chunk (`next()`, an upload streamed to disk, never held
/// whole) or collected up to a limit (`collect(upTo:)`, a JSON body; more is 413). Reading waits for the
/// network, and the network waits for the reader (the connection reads no further meanwhile), so a fast
/// client cannot fill memory.
///
/// Used only inside the route it is handed to, in that route's task.
public final class HTTPRequestBody {
    private var iterator: NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator
    /// The request's end was read (the connection may carry another request).
    public private(set) var ended = false
    /// Body bytes read so far.
    public private(set) var received: UInt64 = 0

    init(_ iterator: NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator) {
        self.iterator = iterator
    }

    /// The iterator back, once the route is done.
    func release() -> NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator { iterator }

    /// The next chunk, or nil at the body's end. Throws when the connection broke or timed out mid-body.
    public func next() async throws -> ByteBuffer? {
        guard !ended else { return nil }
        while true {
            guard let part = try await iterator.next() else { throw HTTPError(.badRequest, "the connection ended before the body did") }
            switch part {
            case .body(let chunk):
                received += UInt64(chunk.readableBytes)
                return chunk
            case .end:
                ended = true
                return nil
            case .head:
                throw HTTPError(.badRequest, "a request head inside a body")
            }
        }
    }

    /// The whole body, if it is at most `limit` bytes; otherwise 413 (at once when the announced length says
    /// so, without reading it).
    public func collect(upTo limit: Int, headers: HTTPHeaders? = nil) async throws -> ByteBuffer {
        if let length = headers?.first(name: "content-length").flatMap({ Int($0) }), length > limit {
            throw HTTPError(.payloadTooLarge, "the body (\(length) bytes) is over the limit of \(limit) bytes")
        }
        var whole = ByteBuffer()
        while var chunk = try await next() {
            guard whole.readableBytes + chunk.readableBytes <= limit else {
                throw HTTPError(.payloadTooLarge, "the body is over the limit of \(limit) bytes")
            }
            whole.writeBuffer(&chunk)
        }
        return whole
    }

    /// The body decoded as JSON of type `T`, at most `limit` bytes: 413 when over, 400 with the reason when
    /// it is not that JSON.
    public func decode<T: Decodable>(_ type: T.Type, limit: Int, headers: HTTPHeaders? = nil) async throws -> T {
        let bytes = try await collect(upTo: limit, headers: headers)
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes.readableBytesView))
        } catch let error as DecodingError {
            throw HTTPError(.badRequest, "invalid JSON body: \(Self.describe(error))")
        } catch {
            throw HTTPError(.badRequest, "invalid JSON body")
        }
    }

    /// Reads and drops what is left of the body, up to `limit` bytes; false when more was left (then the
    /// connection is not reused).
    func discard(upTo limit: UInt64) async -> Bool {
        let start = received
        do {
            while try await next() != nil {
                if received - start > limit { return false }
            }
            return true
        } catch {
            return false
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
            return keys.isEmpty ? "" : " at \(keys)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\"\(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "wrong type\(path(context))"
        case .dataCorrupted(let context): return "not JSON\(path(context))"
        @unknown default: return "not the expected JSON"
        }
    }
}
