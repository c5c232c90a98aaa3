import NIOConcurrencyHelpers

/// The LocalSend side of a receiver of files (`p2p receive --localsend`, `--web`), started and stopped
/// together: the LocalSend peer (`announces`: its HTTPS server and its discovery, which announces it and
/// answers scans) and the browser upload page (`servesPage`: plain HTTP on ``WebUploadServer/defaultPort``,
/// any free port when taken, served with the peer's upload API). Their offers reach the session's
/// ``FileTransfers``, so a ``FileReceiver`` asks about them as about any other; ``events()`` tells of the
/// devices heard and of each sender's session over (the receiver's to sum up).
public final class LocalSendReception: Sendable {
    /// What could not be started, and why (in words that name the option: `LocalSend: …`, `--web: …`).
    public enum Failure: Error, Sendable, CustomStringConvertible {
        /// The LocalSend peer's server or discovery.
        case localSend(String)
        /// The upload page's server.
        case page(String)

        public var description: String {
            switch self {
            case .localSend(let why): "LocalSend: \(why)"
            case .page(let why): "--web: \(why)"
            }
        }
    }

    /// The LocalSend peer whose upload API both serve.
    public let node: LocalSendNode
    /// Whether the peer announces itself and takes LocalSend apps' uploads; whether the page is served.
    public let announces: Bool, servesPage: Bool
    private let page = NIOLockedValueBox<WebUploadServer?>(nil)

    /// The reception of `node`: the LocalSend peer when `announces`, the page when `servesPage`.
    public init(node: LocalSendNode, announces: Bool, servesPage: Bool) {
        (self.node, self.announces, self.servesPage) = (node, announces, servesPage)
    }

    /// The reception of a LocalSend peer made here, receiving into `transfers` as `alias` with `identity`'s
    /// certificate, on `interfaces` (nil: every one in use). Senders give `pin`; the page always asks
    /// for one (it is plain HTTP for anyone on the network): a random one when none is given.
    public convenience init(transfers: FileTransfers, identity: Identity, alias: String, pin: String?, interfaces: [String]?,
                            announces: Bool, servesPage: Bool) throws(Failure) {
        var configuration = LocalSendNode.Configuration(alias: alias)
        configuration.pin = pin ?? (servesPage ? SharePIN.random().value : nil)
        configuration.interfaces = interfaces
        let node: LocalSendNode
        do {
            node = try LocalSendNode(transfers: transfers, identity: identity, configuration: configuration)
        } catch {
            throw .localSend("\(error)")
        }
        self.init(node: node, announces: announces, servesPage: servesPage)
    }

    /// The devices heard of and the senders' sessions over (``LocalSendEvent``).
    public func events() -> AsyncStream<LocalSendEvent> { node.devices.events() }

    /// Starts the LocalSend peer, then the page; returns the ports they listen on (nil: not started).
    public func start() async throws(Failure) -> (localSend: Int?, page: Int?) {
        var ports: (localSend: Int?, page: Int?) = (nil, nil)
        if announces {
            do { ports.localSend = try await node.start() } catch { throw .localSend("\(error)") }
        }
        if servesPage {
            let server = WebUploadServer(receiver: node.receiver)
            do { ports.page = try await server.start(port: WebUploadServer.defaultPort) } catch { throw .page("\(error)") }
            // Only a page that listens is stopped.
            page.withLockedValue { $0 = server }
        }
        return ports
    }

    /// Stops the page and the LocalSend peer (a session under way ends as cancelled).
    public func stop() async {
        await page.withLockedValue { $0 }?.stop()
        await node.stop()
    }

    /// The `localsend-listening` event (README): alias, HTTPS port, certificate fingerprint, whether a
    /// PIN is asked, protocol version.
    public func listeningEvent(port: Int) -> [String: Any] {
        ["event": "localsend-listening", "alias": node.configuration.alias, "port": port, "fingerprint": node.certificate.fingerprint,
         "pin": node.configuration.pin != nil, "version": LocalSendDeviceInfo.protocolVersion]
    }

    /// "LocalSend: receiving as ALIAS on HTTPS port P, PIN required, fingerprint 0123…".
    public func listeningLine(port: Int) -> String {
        let pin = node.configuration.pin == nil ? "" : ", PIN required"
        return "LocalSend: receiving as \(PeerText.sanitized(node.configuration.alias)) on HTTPS port \(port)\(pin), "
            + "fingerprint \(node.certificate.fingerprint.prefix(16))…"
    }

    /// The `web-listening` event (README): the page's port, its URLs and its PIN.
    public func pageEvent(port: Int, urls: [String]) -> [String: Any] {
        ["event": "web-listening", "port": port, "urls": urls, "pin": node.configuration.pin ?? ""]
    }
}

extension LocalSendDeviceList.Entry {
    /// The `localsend-device` event of a receiver that heard of this device (README).
    public var heardJSON: [String: Any] {
        ["event": "localsend-device", "alias": info.alias, "deviceModel": info.deviceModel ?? "", "deviceType": info.kind,
         "fingerprint": info.fingerprint, "address": address, "port": info.effectivePort, "version": info.version]
    }

    /// "* LocalSend device Pixel 7 "anna" (LocalSend, not verified by key) at ADDRESS:PORT", sanitized.
    public var heardLine: String {
        "* LocalSend device \(LocalSendPeer.label(of: peer)) at \(address):\(info.effectivePort)"
    }
}
