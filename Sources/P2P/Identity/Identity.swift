@preconcurrency import Crypto
import Foundation

/// This installation's key pair; the peer ID is derived from its public key.
public struct Identity: Sendable {
    /// The signing key. Whoever holds it is this peer to everyone who trusts it: never send it anywhere.
    public let privateKey: P256.Signing.PrivateKey
    /// The public key peers see in this identity's TLS certificate.
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }
    /// The peer ID of `publicKey`, which every peer derives from the certificate itself.
    public let peerID: PeerID

    /// An identity for an existing key, for example one kept in a keychain of the app's own.
    public init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
        peerID = PeerID(publicKeyDER: privateKey.publicKey.derRepresentation)
    }

    /// A new random identity that lives only in memory (tests, throwaway peers).
    public static func ephemeral() -> Identity { Identity(privateKey: P256.Signing.PrivateKey()) }

    /// The config directory: `$P2P_HOME`, else `$XDG_CONFIG_HOME/p2p`, else `~/.config/p2p`.
    public static func configDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let home = environment["P2P_HOME"], !home.isEmpty { return URL(fileURLWithPath: home) }
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("p2p")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".config/p2p")
    }

    /// Loads `identity.pem` from `directory`, creating it (mode 0600, directory 0700) on first run.
    public static func loadOrCreate(in directory: URL = configDirectory()) throws(IdentityError) -> Identity {
        let file = directory.appendingPathComponent("identity.pem")
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: file.path) {
            do {
                let pem = try String(contentsOf: file, encoding: .utf8)
                return Identity(privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
            } catch {
                throw .unreadable(path: file.path, reason: readableReason(error))
            }
        }
        let identity = Identity(privateKey: P256.Signing.PrivateKey())
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: directory.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw .unwritable(path: file.path, reason: "\(directory.path) is not a directory")
        }
        do {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .unwritable(path: file.path, reason: readableReason(error))
        }
        // Created 0600 from the start so the key is never readable by others, not even briefly; open(2)
        // rather than FileManager so a failure says why (read-only, full, no permission).
        let pem = Data(identity.privateKey.pemRepresentation.utf8)
        let fd = open(file.path, O_CREAT | O_EXCL | O_WRONLY, 0o600)
        guard fd >= 0 else { throw .unwritable(path: file.path, reason: errnoReason()) }
        let written = pem.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let failure = written == pem.count ? nil : (written < 0 ? errnoReason() : "short write")
        close(fd)
        if let failure {
            // Half a key would be unreadable on every later run: leave nothing.
            unlink(file.path)
            throw .unwritable(path: file.path, reason: failure)
        }
        return identity
    }
}

/// Why the identity key could not be loaded or stored.
public enum IdentityError: Error, Sendable, CustomStringConvertible {
    /// `identity.pem` exists but cannot be read or parsed; moving it away makes a new identity (and a
    /// new peer ID that peers will not recognise).
    case unreadable(path: String, reason: String)
    /// A new key could not be stored (read-only or full disk, no permission, a file where the directory
    /// should be).
    case unwritable(path: String, reason: String)

    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read identity key \(path): \(reason) (move it away to make a new identity)"
        case .unwritable(let path, let reason): "cannot store identity key at \(path): \(reason) (set P2P_HOME to a writable directory)"
        }
    }
}
