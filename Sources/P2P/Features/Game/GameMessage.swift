import NIOCore

/// GAME (`0x30`): one message of the tic-tac-toe protocol (`Protocol/GAME.md`). Every payload starts
/// with a kind byte and the round it belongs to; the rest depends on the kind.
///
/// Decoding checks only the layout. Whether a message makes sense (a square on the board, a move in
/// turn, a roll that matches its commitment) is for `GameProtocol` to judge, so a cheating peer is
/// refused with a reason instead of being cut off as a broken one.
public struct GameMessage: WireMessage, Equatable {
    /// GAME (`0x30`).
    public static let messageType = MessageType.game
    /// Bytes of a COMMIT: a SHA-256 hash.
    public static let commitmentSize = 32
    /// Bytes of the board hash in a MOVE (`Board.hash`).
    public static let boardHashSize = 8
    /// The longest REFUSE reason, in bytes of UTF-8.
    public static let maxReasonBytes = 1024

    /// The first payload byte: which message this is.
    public enum Kind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
        /// The kind bytes of `Protocol/GAME.md`: NEW_ROUND (1), COMMIT, REVEAL, MOVE, REFUSE and LEAVE (6).
        case newRound = 1, commit, reveal, move, refuse, leave

        /// The name `Protocol/GAME.md` uses.
        public var description: String {
            switch self {
            case .newRound: "NEW_ROUND"
            case .commit: "COMMIT"
            case .reveal: "REVEAL"
            case .move: "MOVE"
            case .refuse: "REFUSE"
            case .leave: "LEAVE"
            }
        }
    }

    /// What follows kind and round.
    public enum Body: Sendable, Equatable {
        /// The sender starts `round`: its board is empty, its COMMIT follows.
        case newRound
        /// SHA-256(roll ‖ nonce) of the sender's die roll (`DieRoll.commitment`).
        case commit([UInt8])
        /// The roll and nonce behind the commitment; sent only after the peer's COMMIT arrived.
        case reveal(roll: UInt32, nonce: [UInt8])
        /// The sender's `number`th move of the round (1–9) on `square` (1–9), and the hash of its
        /// board after the move (`Board.hash`).
        case move(number: UInt8, square: UInt8, boardHash: [UInt8])
        /// The sender refused the receiver's last message (a `GameViolation.Code`); the round is over.
        case refuse(code: UInt8, reason: String)
        /// The sender leaves the game; the connection closes next.
        case leave
    }

    /// The round the message belongs to, counted from 1.
    public var round: UInt32
    /// The fields that follow kind and round.
    public var body: Body

    /// A message of `round`.
    public init(round: UInt32, _ body: Body) {
        self.round = round
        self.body = body
    }

    /// The kind byte `body` is encoded with.
    public var kind: Kind {
        switch body {
        case .newRound: .newRound
        case .commit: .commit
        case .reveal: .reveal
        case .move: .move
        case .refuse: .refuse
        case .leave: .leave
        }
    }

    /// Decodes the layout of `Protocol/GAME.md`, and only the layout: whether the message makes sense is
    /// for `GameProtocol` to judge. Throws `malformedPayload` for an unknown kind or a wrong size.
    public init(payload: inout ByteBuffer) throws(WireError) {
        let rawKind: UInt8 = try payload.readRequired(.game, field: "kind")
        guard let kind = Kind(rawValue: rawKind) else { throw .malformedPayload(.game, "unknown kind \(rawKind)") }
        round = try payload.readRequired(.game, field: "round")
        switch kind {
        case .newRound:
            body = .newRound
        case .commit:
            body = .commit(try payload.readFixed(Self.commitmentSize, field: "commitment"))
        case .reveal:
            let roll: UInt32 = try payload.readRequired(.game, field: "roll")
            body = .reveal(roll: roll, nonce: try payload.readFixed(DieRoll.nonceSize, field: "nonce"))
        case .move:
            let number: UInt8 = try payload.readRequired(.game, field: "move number")
            let square: UInt8 = try payload.readRequired(.game, field: "square")
            body = .move(number: number, square: square, boardHash: try payload.readFixed(Self.boardHashSize, field: "board hash"))
        case .refuse:
            let code: UInt8 = try payload.readRequired(.game, field: "code")
            body = .refuse(code: code, reason: try payload.readShortString(.game, field: "reason", maxBytes: Self.maxReasonBytes))
        case .leave:
            body = .leave
        }
    }

    /// Writes kind, round and the body's fields.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(kind.rawValue)
        buffer.writeInteger(round)
        switch body {
        case .newRound, .leave:
            break
        case .commit(let commitment):
            buffer.writeBytes(commitment)
        case .reveal(let roll, let nonce):
            buffer.writeInteger(roll)
            buffer.writeBytes(nonce)
        case .move(let number, let square, let boardHash):
            buffer.writeInteger(number)
            buffer.writeInteger(square)
            buffer.writeBytes(boardHash)
        case .refuse(let code, let reason):
            buffer.writeInteger(code)
            buffer.writeShortString(reason.utf8Prefix(maxBytes: Self.maxReasonBytes))
        }
    }
}

extension ByteBuffer {
    fileprivate mutating func readFixed(_ count: Int, field: String) throws(WireError) -> [UInt8] {
        guard let bytes = readBytes(length: count) else { throw .malformedPayload(.game, "\(field): truncated") }
        return bytes
    }
}

extension MessageType {
    /// Tic-tac-toe (`Protocol/GAME.md`).
    public static let game = MessageType(rawValue: 0x30, name: "GAME")
}
