import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// `p2p receive --web`: a page over plain HTTP (browsers refuse self-signed certificates) from which any
/// browser uploads files with the PIN, through the LocalSend upload API of `receiver`: the same routes,
/// the same PIN guard, the same question, rules and events as a LocalSend app's offer.
public final class WebUploadServer: Sendable {
    private let receiver: LocalSendReceiver
    private let server: NIOLockedValueBox<HTTPServer?> = NIOLockedValueBox(nil)

    /// A page for `receiver`, which should have a PIN: anyone on the network can open the page.
    public init(receiver: LocalSendReceiver) {
        self.receiver = receiver
    }

    /// Listens on `hosts` at `port` (with `fallsBack`, any free port when it is taken); returns the port.
    public func start(hosts: [String] = ["0.0.0.0"], port: Int, fallsBack: Bool = true) async throws -> Int {
        var router = receiver.router()
        router.on(.GET, "/") { _, _ in
            HTTPResponse(status: .ok, headers: HTTPHeaders(WebUploadPage.headers), body: .bytes(ByteBuffer(string: WebUploadPage.html)))
        }
        var configuration = HTTPServer.Configuration(hosts: hosts, port: port)
        configuration.fallsBackToAnyPort = fallsBack
        configuration.idleTimeout = receiver.configuration.idleTimeout
        let server = HTTPServer(configuration: configuration, router: router)
        self.server.withLockedValue { $0 = server }
        return try await server.start()
    }

    /// Stops listening and closes every connection (the receiver ends a session under way when it stops).
    public func stop() async {
        await server.withLockedValue { $0 }?.stop()
    }

    /// The default port: the one after LocalSend's (53317 is its HTTPS server's).
    public static let defaultPort = LocalSendDeviceInfo.defaultPort + 1
}
