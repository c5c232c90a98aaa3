import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A small HTTP/1.1 server on SwiftNIO (`NIOHTTP1`, parsing by llhttp): plain HTTP, or HTTPS with a
/// self-signed certificate that asks clients for theirs. It routes each request to an `HTTPRouter`
/// handler in a task of its connection; a handler reads the body as a stream (`HTTPRequestBody`), with the
/// network waiting for it, so no body is ever held whole unless the handler collects it (under a limit).
/// Connections are limited in number and closed when idle or stalled (`HTTPIdleCloser`).
public final class HTTPServer: Sendable {
    /// Where and how to listen.
    public struct Configuration: Sendable {
        /// Local addresses to listen on (`0.0.0.0`: every IPv4 interface).
        public var hosts: [String] = ["0.0.0.0"]
        /// The port to try first; 0 for any.
        public var port: Int
        /// When `port` is taken, take any free port instead of failing.
        public var fallsBackToAnyPort = true
        /// HTTPS with this TLS context (its certificate; clients asked for theirs, see
        /// `TLSConfiguration.certificateVerification`); nil for plain HTTP.
        public var tls: NIOSSLContext?
        /// A connection that reads nothing for this long between requests or within one is closed.
        public var idleTimeout: Duration = .seconds(30)
        /// Connections open at once; more are closed at once.
        public var maxConnections = 64
        /// A request answered before its body was read (413, 401, 409, a refused upload) is answered at once
        /// with `connection: close`; then up to this many bytes of its body are read and dropped, so that
        /// the close does not reset the answer away before the client read it.
        public var discardLimit: UInt64 = 1 << 16

        /// A configuration.
        public init(hosts: [String] = ["0.0.0.0"], port: Int, tls: NIOSSLContext? = nil) {
            self.hosts = hosts
            self.port = port
            self.tls = tls
        }
    }

    /// What `start` could not do.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        /// Why, with the address.
        public let description: String
    }

    public let configuration: Configuration
    private let router: HTTPRouter
    private let group: any EventLoopGroup
    private let state = NIOLockedValueBox(State())

    private struct State {
        var port = 0
        var channels: [any Channel] = []
        var tasks: [Task<Void, Never>] = []
        var connections = 0
        /// The open connections, to quiesce.
        var open: [ObjectIdentifier: any Channel] = [:]
        var quiescing = false
    }

    /// A server; nothing listens before `start`.
    public init(configuration: Configuration, router: HTTPRouter, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.router = router
        self.group = group
    }

    /// The port listened on (0 before `start`).
    public var port: Int { state.withLockedValue { $0.port } }

    /// Listens on every configured host, on `port` or (when taken and allowed) on one free port for all;
    /// returns the port.
    @discardableResult
    public func start() async throws -> Int {
        let tls = configuration.tls
        var port = configuration.port
        for (index, host) in configuration.hosts.enumerated() {
            let server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
            do {
                server = try await bind(host: host, port: port, tls: tls)
            } catch let error as IOError where error.errnoCode == EADDRINUSE && configuration.fallsBackToAnyPort && index == 0 && port != 0 {
                port = 0
                server = try await bind(host: host, port: 0, tls: tls)
            } catch {
                await stop()
                throw StartError(description: "cannot listen on \(host):\(port): \(error)")
            }
            port = server.channel.localAddress?.port ?? port
            let task = Task { [self] in await accept(server) }
            state.withLockedValue {
                $0.port = port
                $0.channels.append(server.channel)
                $0.tasks.append(task)
            }
        }
        return port
    }

    /// Stops listening; a connection writing a response closes once its last byte is on the wire, an idle
    /// one at once (NIOHTTP1's quiescing). Returns when every connection is closed. (`p2p share --once`: the
    /// last download must arrive whole before the process ends.)
    public func quiesce() async {
        let (listeners, open, tasks) = state.withLockedValue { state in
            state.quiescing = true
            return (state.channels, Array(state.open.values), state.tasks)
        }
        for channel in listeners { try? await channel.close() }
        for channel in open { channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent()) }
        for task in tasks { await task.value }
        state.withLockedValue { $0.channels = []; $0.tasks = [] }
    }

    /// Stops listening and closes every connection.
    public func stop() async {
        let (channels, tasks) = state.withLockedValue { state in
            defer { state.channels = []; state.tasks = [] }
            return (state.channels, state.tasks)
        }
        for task in tasks { task.cancel() }
        for channel in channels { try? await channel.close() }
        for task in tasks { await task.value }
    }

    private func bind(host: String, port: Int, tls: NIOSSLContext?) async throws
        -> NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never> {
        let idle = TimeAmount.nanoseconds(Int64(configuration.idleTimeout.components.seconds) * 1_000_000_000
                                          + configuration.idleTimeout.components.attoseconds / 1_000_000_000)
        return try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        // Any client certificate is taken: it only tells who the client says it is.
                        try pipeline.addHandler(NIOSSLServerHandler(context: tls, customVerificationCallback: { _, promise in
                            promise.succeed(.certificateVerified)
                        }))
                        try pipeline.addHandler(PeerCertificateRecorder())
                    }
                    try pipeline.addHandler(IdleStateHandler(readTimeout: idle))
                    try pipeline.addHandler(HTTPFlushingCloser(limit: idle))
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: false)
                    try pipeline.addHandler(HTTPParserErrorCloser())
                    try pipeline.addHandler(HTTPIdleCloser())
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
                }
            }
    }

    private func accept(_ server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>) async {
        try? await server.executeThenClose { inbound in
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in inbound {
                    let admitted = state.withLockedValue { state -> Bool in
                        guard state.connections < configuration.maxConnections, !state.quiescing else { return false }
                        state.connections += 1
                        state.open[ObjectIdentifier(connection.channel)] = connection.channel
                        return true
                    }
                    guard admitted else {
                        connection.channel.close(promise: nil)
                        continue
                    }
                    group.addTask { [self] in
                        await serve(connection)
                        state.withLockedValue {
                            $0.connections -= 1
                            $0.open[ObjectIdentifier(connection.channel)] = nil
                        }
                    }
                }
            }
        }
    }

    /// Answers the requests of one connection, in order, until it closes or a request ends it.
    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        let channel = connection.channel
        let remote = channel.remoteAddress
        let tls = configuration.tls != nil
        let discardLimit = configuration.discardLimit
        try? await connection.executeThenClose { inbound, outbound in
            var iterator = inbound.makeAsyncIterator()
            var clientFingerprint: String?
            var firstRequest = true
            while let part = try await iterator.next() {
                guard case .head(let head) = part else { continue }
                if firstRequest && tls {
                    // The handshake is over once a request arrived; the recorder noted the certificate then.
                    clientFingerprint = try? await channel.pipeline.handler(type: PeerCertificateRecorder.self).get().fingerprint.withLockedValue { $0 }
                }
                firstRequest = false
                var request = HTTPRequest(head: head, remote: remote, clientFingerprint: clientFingerprint)
                request.connectionClosed = channel.closeFuture
                let body = HTTPRequestBody(iterator)
                var response: HTTPResponse
                do {
                    response = try await router.respond(to: request, body: body)
                } catch let error as HTTPError {
                    response = error.response
                } catch is CancellationError {
                    return
                } catch {
                    response = .text(.internalServerError, "\(error)")
                }
                // Answered before the whole body came (413 by its length, a PIN, busy, a refused upload): the
                // answer goes first (a client may wait for it before sending more), then what is on its way is
                // read and dropped, up to a limit, so that closing does not reset the answer away; the
                // connection then ends.
                let answeredEarly = !body.ended
                let keepAlive = head.isKeepAlive && !answeredEarly
                try await Self.write(response, keepAlive: keepAlive, to: outbound, on: channel.eventLoop)
                if answeredEarly { _ = await body.discard(upTo: discardLimit) }
                if !keepAlive { return }
                iterator = body.release()
            }
        }
    }

    private static func write(_ response: HTTPResponse, keepAlive: Bool, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
                              on eventLoop: any EventLoop) async throws {
        var headers = response.headers
        switch response.body {
        case .bytes(let bytes): headers.replaceOrAdd(name: "content-length", value: "\(bytes.readableBytes)")
        case .stream(let length, _): headers.replaceOrAdd(name: "content-length", value: "\(length)")
        }
        headers.replaceOrAdd(name: "connection", value: keepAlive ? "keep-alive" : "close")
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: response.status, headers: headers)))
        switch response.body {
        case .bytes(let bytes):
            if bytes.readableBytes > 0 { try await outbound.write(.body(.byteBuffer(bytes))) }
        case .stream(_, let produce):
            try await produce(HTTPBodyWriter(write: {
                try await outbound.write(.body(.byteBuffer($0)))
                // The writer hands each write to the event loop as a task, and learns that the socket is full
                // only once that task ran: wait for it, or a producer faster than a busy event loop queues
                // without bound (p2p share's 1 GiB download peaked at +150 MiB on a loaded machine).
                try await eventLoop.submit {}.get()
            }))
        }
        try await outbound.write(.end(nil))
    }
}
