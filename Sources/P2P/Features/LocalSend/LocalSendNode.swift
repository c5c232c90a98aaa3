import Foundation
import NIOCore

/// p2p as a LocalSend peer: the upload API server (`LocalSendReceiver`) and the multicast discovery
/// (`LocalSendDiscovery`) over one certificate and one device list. Offers from LocalSend senders reach
/// `transfers`' offer handler and event stream like any peer's; `devices` lists the LocalSend devices heard.
///
/// ```swift
/// let transfers = FileTransfers(session: session, directory: downloads)
/// transfers.setOfferHandler { offer in offer.info.size < 1 << 30 }
/// let localSend = try LocalSendNode(transfers: transfers, identity: identity, configuration: .init(alias: "laptop"))
/// let port = try await localSend.start()
/// for await event in transfers.events() { … }   // p2p and LocalSend senders alike
/// ```
public final class LocalSendNode: Sendable {
    /// How the node presents itself and where it listens.
    public struct Configuration: Sendable {
        /// The alias LocalSend devices show.
        public var alias: String
        /// `headless` or `desktop`.
        public var deviceType = "headless"
        /// The model shown under the alias.
        public var deviceModel: String? = "p2p"
        /// The PIN senders must give; nil: none.
        public var pin: String?
        /// Interfaces to announce on and listen on (names); nil: every IPv4 interface in use, listening on all.
        public var interfaces: [String]?
        /// The port to try first; any free one when it is taken (the announcements carry the one in use).
        public var port = LocalSendDeviceInfo.defaultPort
        /// Announce and answer announcements (multicast); false: only the server, found by the legacy HTTP scan.
        public var multicast = true

        /// A configuration for `alias`.
        public init(alias: String) { self.alias = alias }
    }

    public let configuration: Configuration
    /// The certificate whose fingerprint names this node.
    public let certificate: LocalSendCertificate
    /// The LocalSend devices heard of.
    public let devices: LocalSendDevices
    /// The upload API.
    public let receiver: LocalSendReceiver
    /// Announcements.
    public let discovery: LocalSendDiscovery
    /// Requests to other devices, showing this node's certificate.
    public let client: HTTPClient

    /// A node for `identity` (its stored LocalSend certificate, made on first use), receiving into `transfers`.
    public init(transfers: FileTransfers, identity: Identity, configuration: Configuration,
                certificateDirectory: URL = Identity.configDirectory()) throws {
        self.configuration = configuration
        certificate = try LocalSendCertificate.load(for: identity, in: certificateDirectory)
        devices = LocalSendDevices(ownFingerprint: certificate.fingerprint)
        var receiving = LocalSendReceiver.Configuration(alias: configuration.alias)
        receiving.deviceType = configuration.deviceType
        receiving.deviceModel = configuration.deviceModel
        receiving.pin = configuration.pin
        receiving.port = configuration.port
        if let names = configuration.interfaces {
            receiving.hosts = try LocalSendDiscovery.devices(named: names).map(\.address)
            guard !receiving.hosts.isEmpty else { throw HTTPClient.Failure(description: "no IPv4 address on \(names.joined(separator: ", "))") }
        }
        let receiver = LocalSendReceiver(transfers: transfers, certificate: certificate, configuration: receiving, devices: devices)
        self.receiver = receiver
        client = HTTPClient(tls: try certificate.clientContext())
        discovery = LocalSendDiscovery(devices: devices, interfaces: configuration.interfaces, client: client) { receiver.deviceInfo }
    }

    /// Starts the server, then discovery; returns the port in use.
    @discardableResult
    public func start() async throws -> Int {
        let port = try await receiver.start()
        if configuration.multicast {
            do {
                try await discovery.start()
            } catch {
                await receiver.stop()
                throw error
            }
        }
        return port
    }

    /// Stops discovery and the server (a session under way ends as cancelled).
    public func stop() async {
        await discovery.stop()
        await receiver.stop()
    }
}
