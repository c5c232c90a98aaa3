/// The PIN a browser must give before it sees a share's files.
public struct SharePIN: Sendable, Equatable, CustomStringConvertible {
    /// The digits or text the person types.
    public let value: String

    /// Longest PIN accepted (it travels in a URL query and is typed on a phone).
    public static let maxLength = 64

    /// A PIN the user chose: printable ASCII without spaces, 1…64 characters (a phone keyboard types it,
    /// a URL carries it percent-encoded).
    public init(_ value: String) throws(ShareError) {
        guard !value.isEmpty else { throw .unusablePIN("it is empty") }
        guard value.count <= Self.maxLength else { throw .unusablePIN("longer than \(Self.maxLength) characters") }
        guard value.unicodeScalars.allSatisfy({ (0x21..<0x7F).contains($0.value) }) else {
            throw .unusablePIN("use letters, digits and punctuation (ASCII, no spaces)")
        }
        self.value = value
    }

    /// Six random digits (one in a million per guess; guesses are limited per address).
    public static func random() -> SharePIN {
        var generator = SystemRandomNumberGenerator()
        let digits = (0..<6).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
        return try! SharePIN(digits)  // six digits always pass the checks
    }

    /// Whether `candidate` is this PIN, in time that does not depend on where they differ.
    public func matches(_ candidate: String?) -> Bool { PINGuessLimit.matches(value, candidate) }

    public var description: String { value }
}
