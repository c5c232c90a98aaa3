import NIOHTTP1

/// Routes a request by method and exact path to its handler; 404 for an unknown path, 405 for a known
/// path with another method.
public struct HTTPRouter: Sendable {
    /// Answers one request. The body is the request's, to read (or not) before answering; an `HTTPError`
    /// thrown becomes its status and message.
    public typealias Handler = @Sendable (HTTPRequest, HTTPRequestBody) async throws -> HTTPResponse

    private var routes: [String: [String: Handler]] = [:]

    /// An empty router.
    public init() {}

    /// Adds (or replaces) the handler of `method` at `path` (exact, without the query).
    public mutating func on(_ method: HTTPMethod, _ path: String, _ handler: @escaping Handler) {
        routes[path, default: [:]][method.rawValue] = handler
    }

    /// The answer of the route `request` goes to.
    func respond(to request: HTTPRequest, body: HTTPRequestBody) async throws -> HTTPResponse {
        guard let methods = routes[request.path] else { throw HTTPError(.notFound, "no such path: \(request.path)") }
        guard let handler = methods[request.method.rawValue] else {
            throw HTTPError(.methodNotAllowed, "\(request.path) takes \(methods.keys.sorted().joined(separator: ", "))")
        }
        return try await handler(request, body)
    }
}
