import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP request as a route sees it: the head, parsed, and who sent it. The body comes separately
/// (`HTTPRequestBody`), as a stream.
public struct HTTPRequest: Sendable {
    /// The method.
    public var method: HTTPMethod
    /// The path without the query, percent-decoded.
    public var path: String
    /// The query's parameters, percent-decoded (the last of a repeated name wins).
    public var query: [String: String]
    /// The headers.
    public var headers: HTTPHeaders
    /// The client's IP address (no port), `""` when unknown.
    public var remoteIP: String
    /// The client's address with port, for messages.
    public var remoteAddress: String
    /// SHA-256 (upper-case hex) of the certificate the client showed over TLS, if it showed one.
    public var clientFingerprint: String?
    /// Completes when the connection closes: a route that waits long (a question to a person) gives up
    /// then, since nobody is left to answer.
    public var connectionClosed: EventLoopFuture<Void>?

    /// A request from its head.
    public init(head: HTTPRequestHead, remote: SocketAddress?, clientFingerprint: String? = nil) {
        method = head.method
        let (path, query) = Self.split(head.uri)
        self.path = path
        self.query = query
        headers = head.headers
        remoteIP = remote?.ipAddress ?? ""
        remoteAddress = remote.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
        self.clientFingerprint = clientFingerprint
    }

    /// The body's announced length, if the client gave one.
    public var contentLength: Int? { headers.first(name: "content-length").flatMap { Int($0) } }

    /// A URI's path and query parameters, both percent-decoded (`+` is a space in the query).
    static func split(_ uri: String) -> (String, [String: String]) {
        let parts = uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        var query: [String: String] = [:]
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let item = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                func decode(_ text: Substring) -> String {
                    let spaced = text.replacingOccurrences(of: "+", with: " ")
                    return spaced.removingPercentEncoding ?? spaced
                }
                query[decode(item[0])] = item.count > 1 ? decode(item[1]) : ""
            }
        }
        return (path, query)
    }
}

/// An answer to a request: status, headers and a body, given whole or written as a stream.
public struct HTTPResponse: Sendable {
    /// The status.
    public var status: HTTPResponseStatus
    /// The headers (`content-length` is added for a whole body).
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body

    /// What follows the head.
    public enum Body: Sendable {
        /// These bytes (possibly none).
        case bytes(ByteBuffer)
        /// Bytes the closure writes, `length` in all: it must write exactly that many (a file download).
        case stream(length: UInt64, @Sendable (HTTPBodyWriter) async throws -> Void)
    }

    /// A response.
    public init(status: HTTPResponseStatus, headers: HTTPHeaders = [:], body: Body = .bytes(ByteBuffer())) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// No body.
    public static func empty(_ status: HTTPResponseStatus = .ok) -> HTTPResponse { HTTPResponse(status: status) }

    /// A short plain-text body (an error's message, for people and logs).
    public static func text(_ status: HTTPResponseStatus, _ message: String, type: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: ["content-type": type], body: .bytes(ByteBuffer(string: message)))
    }

    /// A JSON body.
    public static func json(_ value: some Encodable, status: HTTPResponseStatus = .ok) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return .text(.internalServerError, "could not encode the answer") }
        return HTTPResponse(status: status, headers: ["content-type": "application/json"], body: .bytes(ByteBuffer(bytes: data)))
    }
}

/// A request refused with a status and a message saying why (sent as the body).
public struct HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status to answer.
    public var status: HTTPResponseStatus
    /// Why, for the client's user and logs.
    public var message: String

    /// An error.
    public init(_ status: HTTPResponseStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// `HTTP 413: …`.
    public var description: String { "HTTP \(status.code): \(message)" }
    /// The answer that says it.
    public var response: HTTPResponse { .text(status, message) }
}

/// Writes a streamed response body; each write waits while the client is slow to read (flow control).
public struct HTTPBodyWriter: Sendable {
    let write: @Sendable (ByteBuffer) async throws -> Void

    /// Sends bytes, waiting while the connection's buffer is full.
    public func write(_ bytes: ByteBuffer) async throws { try await write(bytes) }
}
