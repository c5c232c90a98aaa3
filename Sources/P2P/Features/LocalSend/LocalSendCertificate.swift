@preconcurrency import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The self-signed certificate p2p shows LocalSend devices, and its fingerprint.
///
/// LocalSend names a device by the SHA-256 of its certificate's DER (upper-case hex), so the certificate
/// must stay the same from run to run: it is made once for the identity's key and kept beside it
/// (`localsend-certificate.der`), and made again only when it is missing, unreadable, or for another key.
public struct LocalSendCertificate: Sendable {
    /// The certificate, DER.
    public let der: [UInt8]
    /// SHA-256 of `der`, upper-case hex: the LocalSend fingerprint.
    public let fingerprint: String
    let certificate: NIOSSLCertificate
    let privateKey: NIOSSLPrivateKey

    /// The file name beside `identity.pem`.
    public static let fileName = "localsend-certificate.der"

    /// The stored certificate for `identity`'s key in `directory`, made and stored when there is none that
    /// fits; `store: false` makes one in memory only (tests).
    public static func load(for identity: Identity, in directory: URL = Identity.configDirectory(), store: Bool = true) throws -> LocalSendCertificate {
        let file = directory.appendingPathComponent(fileName)
        if store, let data = try? Data(contentsOf: file), let stored = try? LocalSendCertificate(der: Array(data), identity: identity) {
            return stored
        }
        let made = try LocalSendCertificate(der: make(for: identity), identity: identity)
        if store {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(made.der).write(to: file, options: .atomic)
        }
        return made
    }

    /// A certificate from its DER, if it is for `identity`'s key.
    init(der: [UInt8], identity: Identity) throws {
        let parsed = try Certificate(derEncoded: der)
        guard parsed.publicKey == Certificate.PublicKey(identity.publicKey) else { throw NIOSSLError.failedToLoadCertificate }
        self.der = der
        fingerprint = CertificateFingerprint.sha256(der: der)
        certificate = try NIOSSLCertificate(bytes: der, format: .der)
        privateKey = try NIOSSLPrivateKey(bytes: Array(identity.privateKey.derRepresentation), format: .der)
    }

    /// A new self-signed certificate for the identity's key, valid from a day ago for 20 years.
    private static func make(for identity: Identity, now: Date = Date()) throws -> [UInt8] {
        try PeerCertificate.selfSignedDER(for: identity, commonName: "p2p LocalSend", validFrom: now.addingTimeInterval(-86400))
    }

    /// A TLS server context presenting this certificate, asking for (not requiring) a client certificate,
    /// so a v2.2 sender can show its own.
    public func serverContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(privateKey))
        configuration.certificateVerification = .optionalVerification
        configuration.trustRoots = .certificates([])
        return try NIOSSLContext(configuration: configuration)
    }

    /// A TLS client context presenting this certificate and accepting any server certificate (LocalSend's are
    /// self-signed; the caller compares the fingerprint).
    public func clientContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        configuration.certificateChain = [.certificate(certificate)]
        configuration.privateKey = .privateKey(privateKey)
        return try NIOSSLContext(configuration: configuration)
    }
}
