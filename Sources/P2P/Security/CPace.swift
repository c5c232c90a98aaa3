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

    /// A = 486662, the Montgomery curve's coefficient: v² = u³ + A·u² + u.
    static let montgomeryA = FieldElement(486662)

    /// The generator: SHA-512 read as one 512-bit big-endian integer and reduced mod p, mapped to a
    /// curve point's u-coordinate with Elligator 2 (RFC 9380 §6.7.1, Z = 2), as 32 bytes
    /// little-endian. The code is secret, so the map runs in constant time (see `FieldElement`).
    static func generator(code: String, channelBinding: [UInt8]) -> [UInt8] {
        let digest = Array(SHA512.hash(data: domain + lengthPrefixed(Array(code.utf8)) + lengthPrefixed(channelBinding)))
        return elligator2(FieldElement(reducingWideBigEndian: digest)).canonicalBytes
    }

    /// Elligator 2 with Z = 2: x1 = -A / (1 + 2r²), with inv0 and the x1 = 0 fallback to -A; x1 if
    /// x1³ + A·x1² + x1 is a square, else x2 = -x1 - A. Both candidates are always computed and
    /// one is kept by a masked select, so the time says nothing about which branch r took.
    static func elligator2(_ r: FieldElement) -> FieldElement {
        let minusA = -montgomeryA
        let denominator = FieldElement.one + FieldElement(2) * r.squared
        // inv0(0) = 0 makes x1 = 0 when the denominator vanishes; RFC 9380 then takes -A.
        let quotient = minusA * denominator.inverted
        let x1 = FieldElement.select(quotient.isZero, minusA, else: quotient)
        let x2 = minusA - x1
        return FieldElement.select(curve(x1).isSquare, x1, else: x2)
    }

    /// u³ + A·u² + u, the Montgomery curve's right-hand side, as u·(u·(u + A) + 1).
    static func curve(_ u: FieldElement) -> FieldElement {
        u * (u * (u + montgomeryA) + .one)
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
