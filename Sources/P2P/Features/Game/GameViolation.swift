/// A message from the opponent that breaks the game's rules. The receiver refuses it (REFUSE with
/// `code` and `reason`), tells its player, and the round ends without a score.
public struct GameViolation: Error, Sendable, Equatable, CustomStringConvertible {
    /// The REFUSE code byte (`Protocol/GAME.md`, "Refusal codes"); unknown codes read as `.unexpected`.
    public enum Code: UInt8, Sendable {
        /// A message the state does not allow (wrong round, REVEAL before COMMIT, …).
        case unexpected = 1
        /// A move when it was not the sender's turn, or before the dice decided.
        case outOfTurn
        /// A move on a square that already has a mark.
        case occupied
        /// A move on a square that is not 1–9.
        case outOfRange
        /// A move after the round was won or drawn.
        case roundOver
        /// A move whose number is not the next one.
        case moveNumber
        /// The board hash in a move differs from the receiver's board after that move.
        case boardMismatch
        /// A revealed roll that is no face of the die or does not match its commitment.
        case badReveal

        /// Short name for JSON output and logs.
        public var name: String {
            switch self {
            case .unexpected: "unexpected"
            case .outOfTurn: "out-of-turn"
            case .occupied: "occupied"
            case .outOfRange: "out-of-range"
            case .roundOver: "round-over"
            case .moveNumber: "move-number"
            case .boardMismatch: "board-mismatch"
            case .badReveal: "bad-reveal"
            }
        }
    }

    /// What kind of rule was broken; travels in the REFUSE.
    public var code: Code
    /// What happened, for people; travels in the REFUSE.
    public var reason: String

    /// A violation with its code and a reason for people.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A refusal as it arrived in a REFUSE message.
    init(rawCode: UInt8, reason: String) {
        self.init(Code(rawValue: rawCode) ?? .unexpected, reason)
    }

    /// The violation an illegal opponent move amounts to.
    init(_ error: MoveError) {
        let code: Code = switch error {
        case .notStarted, .interrupted, .outOfTurn: .outOfTurn
        case .roundOver: .roundOver
        case .outOfRange: .outOfRange
        case .occupied: .occupied
        }
        self.init(code, "move refused: \(error)")
    }

    /// The reason.
    public var description: String { reason }
}
