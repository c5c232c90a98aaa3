@preconcurrency import Crypto
import Foundation
import NIOSSL

/// The SHA-256 of a certificate's DER, upper-case hex: how LocalSend (and people comparing by eye) name a
/// self-signed certificate.
public enum CertificateFingerprint {
    /// SHA-256 of DER bytes, upper-case hex.
    public static func sha256(der: some DataProtocol) -> String {
        SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined()
    }

    /// SHA-256 of a certificate as NIOSSL holds it; nil if it cannot be serialized.
    public static func sha256(of certificate: NIOSSLCertificate) -> String? {
        (try? certificate.toDERBytes()).map { sha256(der: $0) }
    }
}
