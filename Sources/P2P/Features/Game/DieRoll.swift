import Crypto

/// A die roll neither player can choose after seeing the other's (commit, then reveal, then check).
///
/// The GameKit original sent its roll in the clear, so whoever received first could answer with a
/// higher one. Here each side first sends `commitment`, SHA-256(roll ‖ nonce), and reveals roll and
/// nonce only once it holds the other's commitment; the 32 random nonce bytes keep the roll from
/// being guessed from its commitment (there are only a million rolls to try).
public struct DieRoll: Sendable, Equatable {
    /// The faces of the die: as in the original, large so that ties (re-rolls) are rare.
    public static let faces: ClosedRange<UInt32> = 0...999_999
    /// Bytes of the random nonce that hides a roll in its commitment.
    public static let nonceSize = 32

    /// The roll: a face of the die, the higher roll plays X.
    public let value: UInt32
    /// The random bytes the commitment covers besides the roll.
    public let nonce: [UInt8]

    /// A fresh roll with a fresh nonce from the system's cryptographic generator.
    public init() {
        var generator = SystemRandomNumberGenerator()
        value = UInt32.random(in: Self.faces, using: &generator)
        nonce = (0..<Self.nonceSize).map { _ in UInt8.random(in: 0 ... .max, using: &generator) }
    }

    /// A given roll (tests, vectors); `nonce` must be `nonceSize` bytes.
    public init(value: UInt32, nonce: [UInt8]) {
        precondition(nonce.count == Self.nonceSize, "a die roll nonce is \(Self.nonceSize) bytes")
        self.value = value
        self.nonce = nonce
    }

    /// SHA-256 over the roll (u32, big-endian) followed by the nonce: 32 bytes.
    public var commitment: [UInt8] { Self.commitment(value: value, nonce: nonce) }

    static func commitment(value: UInt32, nonce: [UInt8]) -> [UInt8] {
        let bytes = withUnsafeBytes(of: value.bigEndian, Array.init) + nonce
        return Array(SHA256.hash(data: bytes))
    }

    /// A revealed roll, accepted only if it is a face of the die and matches the commitment sent before it.
    public init(revealing value: UInt32, nonce: [UInt8], committedTo commitment: [UInt8]) throws(DieRollError) {
        guard Self.faces.contains(value) else { throw .outOfRange(value) }
        guard nonce.count == Self.nonceSize else { throw .badNonce(count: nonce.count) }
        guard Self.commitment(value: value, nonce: nonce) == commitment else { throw .mismatch(value) }
        self.init(value: value, nonce: nonce)
    }
}

/// Why a revealed die roll is refused.
public enum DieRollError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The revealed roll is not a face of the die (0–999999).
    case outOfRange(UInt32)
    /// The revealed nonce is not `DieRoll.nonceSize` bytes.
    case badNonce(count: Int)
    /// Roll and nonce do not hash to the commitment: the peer changed its roll after committing.
    case mismatch(UInt32)

    /// What was wrong with the reveal, for people.
    public var description: String {
        switch self {
        case .outOfRange(let value): "revealed roll \(value) is not a face of the die (0–999999)"
        case .badNonce(let count): "revealed nonce has \(count) bytes, not \(DieRoll.nonceSize)"
        case .mismatch(let value): "revealed roll \(value) does not match the commitment sent before it"
        }
    }
}
