import Foundation
import Logging

/// Why a session of this installation could not be made: its key, or its pins, could not be read or
/// written (the description is the underlying error's, which names the file and what to do).
public enum InstallationError: Error, Sendable, CustomStringConvertible {
    /// The identity (`Identity.loadOrCreate()`) could not be loaded or made.
    case identity(IdentityError)
    /// The trust store could not be read, or cannot be written.
    case trustStore(TrustStoreError)

    public var description: String {
        switch self {
        case .identity(let error): error.description
        case .trustStore(let error): error.description
        }
    }
}

extension Session {
    /// A session as the `p2p` commands make one: with this installation's identity (made on first use),
    /// named `name` or the identity's default name (`user@host-xxxx`); unless `pinning` is false, with the
    /// installation's trust store, checked to be writable first (a pin that cannot be kept would be asked
    /// about again at every contact). `port` nil: the standard port, or any free port when another p2p has
    /// it. `bulk`: frames up to 1 MiB, so files travel in large chunks (`Capabilities.largeFrames`).
    /// `answerWait`: how long a connection request waits for an answer, either way (nil: the default).
    /// `insecure`: no TLS, for debugging only. `directory`: where the installation keeps its key and pins.
    public static func ofInstallation(sessionID: String, name: String?, port: Int?, discoveryInfo: [String: String] = [:],
                                      insecure: Bool = false, pinning: Bool = true, bulk: Bool = false, answerWait: Duration? = nil,
                                      logger: Logger? = nil, directory: URL = Identity.configDirectory()) throws(InstallationError) -> Session {
        var configuration = SessionConfiguration()
        if let answerWait { configuration.requestDecisionTimeout = answerWait }
        configuration.port = port ?? SessionConfiguration.standardPort
        configuration.fallsBackToAnyPort = port == nil
        if bulk { configuration.maxPayload = WireFormat.absoluteMaxPayload }
        if let logger { configuration.logger = logger }
        configuration.discoveryInfo = discoveryInfo
        if insecure { configuration.transportSecurity = .insecure }
        if pinning {
            do throws(TrustStoreError) {
                let store = try TrustStore(file: directory.appendingPathComponent("known-peers.json"))
                try store.checkWritable()
                configuration.trustStore = store
            } catch {
                throw .trustStore(error)
            }
        }
        let identity: Identity
        do throws(IdentityError) {
            identity = try Identity.loadOrCreate(in: directory)
        } catch {
            throw .identity(error)
        }
        return Session(sessionID: sessionID, displayName: name ?? identity.defaultDisplayName, mode: .peer, identity: identity,
                       configuration: configuration)
    }
}
