import BigInt
@preconcurrency import Crypto
import Foundation

/// CPace (draft-irtf-cfrg-cpace) over X25519: a balanced PAKE. Both sides know a short code; each
/// learns a shared key only if the other typed the same code, and an attacker in the middle gets one
/// guess per run — a transcript cannot be tested against codes offline.
///
/// The generator is `Elligator2(SHA-512(DSI ‖ code ‖ channel binding))`, so it never has a known
/// logarithm; the channel binding holds both TLS key fingerprints as each side sees them, so a relay
/// with its own TLS keys makes the two sides derive different keys and fail.
struct CPace {
    static let domain = Array("p2p-CPace255-v1".utf8)

    private let scalar: Curve25519.KeyAgreement.PrivateKey
    /// This side's public share `scalar · G`, 32 bytes little-endian.
    let share: [UInt8]
    private let binding: [UInt8]

    init(code: String, channelBinding: [UInt8]) throws(PairingError) {
        let generator = Self.generator(code: code, channelBinding: channelBinding)
        scalar = Curve25519.KeyAgreement.PrivateKey()
        share = try Self.multiply(scalar, generator)
        binding = channelBinding
    }

    /// The intermediate session key, from the peer's share; both shares are ordered by peer ID so
    /// both sides hash the same transcript.
    func sessionKey(peerShare: [UInt8], ownID: PeerID, peerID: PeerID) throws(PairingError) -> SymmetricKey {
        guard peerShare.count == 32 else { throw .malformed("share of \(peerShare.count) bytes") }
        let secret = try Self.multiply(scalar, peerShare)
        let (first, second) = ownID < peerID ? (share, peerShare) : (peerShare, share)
        var transcript = Self.domain + Array("-isk".utf8)
        for part in [binding, secret, first, second] { transcript += lengthPrefixed(part) }
        return SymmetricKey(data: SHA512.hash(data: transcript))
    }

    /// The confirmation tag a side sends to prove it holds the session key.
    static func confirmation(key: SymmetricKey, senderID: PeerID, senderShare: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array("p2p-pair-confirm".utf8) + senderID.bytes + senderShare, using: key))
    }

    /// X25519 of `scalar` with any u-coordinate; a low-order input (all-zero result) is refused.
    private static func multiply(_ scalar: Curve25519.KeyAgreement.PrivateKey, _ u: [UInt8]) throws(PairingError) -> [UInt8] {
        do {
            let point = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: u)
            let product = try scalar.sharedSecretFromKeyAgreement(with: point).withUnsafeBytes { Array($0) }
            guard product.contains(where: { $0 != 0 }) else { throw PairingError.malformed("low-order point") }
            return product
        } catch {
            throw .malformed("invalid share: \(error)")
        }
    }

    // MARK: - Hash to curve

    /// p = 2^255 - 19
    static let p = (BigUInt(1) << 255) - 19
    static let montgomeryA = BigUInt(486662)

    /// The generator: a field element from SHA-512 (reduced mod p) mapped to a curve point's
    /// u-coordinate with Elligator 2 (RFC 9380 §6.7.1, Z = 2), as 32 bytes little-endian.
    static func generator(code: String, channelBinding: [UInt8]) -> [UInt8] {
        let digest = Array(SHA512.hash(data: domain + lengthPrefixed(Array(code.utf8)) + lengthPrefixed(channelBinding)))
        let field = BigUInt(Data(digest)) % p
        return littleEndian(elligator2(field))
    }

    static func elligator2(_ r: BigUInt) -> BigUInt {
        let z = BigUInt(2)
        let denominator = (1 + z * r.power(2, modulus: p)) % p
        // inv0(0) = 0, so x1 falls back to -A when the denominator vanishes.
        var x1 = denominator == 0 ? p - montgomeryA : (p - montgomeryA) * inverse(denominator) % p
        if x1 == 0 { x1 = p - montgomeryA }
        let gx1 = curve(x1)
        if isSquare(gx1) { return x1 }
        return (2 * p - x1 - montgomeryA) % p
    }

    /// u³ + A·u² + u, the Montgomery curve's right-hand side.
    static func curve(_ u: BigUInt) -> BigUInt {
        (u.power(3, modulus: p) + montgomeryA * u.power(2, modulus: p) + u) % p
    }

    static func isSquare(_ value: BigUInt) -> Bool {
        let legendre = value.power((p - 1) / 2, modulus: p)
        return legendre == 0 || legendre == 1
    }

    static func inverse(_ value: BigUInt) -> BigUInt { value.power(p - 2, modulus: p) }

    static func littleEndian(_ value: BigUInt) -> [UInt8] {
        let bigEndian = Array(value.serialize())
        return Array((Array(repeating: 0, count: 32 - bigEndian.count) + bigEndian).reversed())
    }
}

private func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] {
    var out = [UInt8(truncatingIfNeeded: bytes.count >> 8), UInt8(truncatingIfNeeded: bytes.count)]
    out += bytes
    return out
}

/// Why pairing failed. Nothing is pinned in any of these cases.
public enum PairingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The codes differ — or someone in the middle tried to guess.
    case wrongCode
    /// The peer sent a message that breaks the pairing protocol (a bad share, the wrong kind).
    case malformed(String)
    /// The peer is not connected, or disconnected during the run.
    case notConnected
    /// The peer did not send its next step in time (30 s by default); it may not have typed the code.
    case timedOut
    /// Pairing needs TLS-proven IDs; it cannot run on an `--insecure` session.
    case insecureSession

    /// What went wrong, for people; says that nothing was pinned.
    public var description: String {
        switch self {
        case .wrongCode: "pairing failed: the codes do not match (or someone in the middle tried to guess); nothing was pinned"
        case .malformed(let what): "pairing failed: \(what)"
        case .notConnected: "pairing failed: the peer disconnected"
        case .timedOut: "pairing failed: the peer did not answer in time"
        case .insecureSession: "pairing needs TLS; it cannot run on an --insecure session"
        }
    }
}
