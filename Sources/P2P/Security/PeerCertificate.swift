@preconcurrency import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// The self-signed TLS certificate of an identity, and the peer ID a certificate proves.
///
/// Nothing here is signed by anyone else: trust comes from the peer ID (a hash of the key),
/// which peers pin, pair on, and compare with what DNS-SD and HELLO claim.
enum PeerCertificate {
    /// A certificate for `identity`'s key, valid from an hour ago for 20 years.
    static func make(for identity: Identity, now: Date = Date()) throws -> (NIOSSLCertificate, NIOSSLPrivateKey) {
        let der = try selfSignedDER(for: identity, commonName: "p2p \(identity.peerID.hex)", validFrom: now.addingTimeInterval(-3600))
        return (
            try NIOSSLCertificate(bytes: der, format: .der),
            try NIOSSLPrivateKey(bytes: Array(identity.privateKey.derRepresentation), format: .der)
        )
    }

    /// A self-signed, non-CA certificate for `identity`'s key (ECDSA with SHA-256), valid from `validFrom`
    /// for 20 years, as DER.
    static func selfSignedDER(for identity: Identity, commonName: String, validFrom: Date) throws -> [UInt8] {
        let key = Certificate.PrivateKey(identity.privateKey)
        let name = try DistinguishedName { CommonName(commonName) }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.publicKey,
            notValidBefore: validFrom,
            notValidAfter: validFrom.addingTimeInterval(20 * 365 * 86400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) },
            issuerPrivateKey: key)
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The peer ID a certificate's key stands for; `nil` when the key is not P-256.
    static func peerID(of certificate: NIOSSLCertificate) -> PeerID? {
        guard let spki = try? certificate.extractPublicKey().toSPKIBytes(),
              (try? P256.Signing.PublicKey(derRepresentation: spki)) != nil
        else { return nil }
        return PeerID(publicKeyDER: spki)
    }
}

extension PeerID {
    /// The ID of a public key: the first 16 bytes of SHA-256 over its SubjectPublicKeyInfo DER.
    init(publicKeyDER: some DataProtocol) {
        self.init(bytes: Array(SHA256.hash(data: publicKeyDER).prefix(Self.byteCount)))
    }

    /// The ID in the form people compare: 6 groups of 4 characters (RFC 4648 base32, lowercase), e.g. `gr4m-pqnn-…`.
    public var fingerprint: String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var bits = 0, value = 0
        var characters: [Character] = []
        for byte in bytes {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                characters.append(alphabet[(value >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { characters.append(alphabet[(value << (5 - bits)) & 31]) }
        // 16 bytes are 26 characters; the first 24 in groups of 4 carry 120 of the 128 bits.
        return stride(from: 0, to: 24, by: 4).map { String(characters[$0..<$0 + 4]) }.joined(separator: "-")
    }
}
