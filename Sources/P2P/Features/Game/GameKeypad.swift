/// What a key press means on a game screen: between games, digits and ↑/↓ with Enter pick an opponent
/// to invite and q quits; in a game, digits and the arrows with Enter play a square, y/Enter or n answer
/// "Another round?", and q leaves the opponent. It keeps the square under the cursor and the opponent
/// selected; the decisions the keys lead to are ``GameLobby``'s.
public struct GameKeypad: Sendable {
    /// A key, as a terminal reads it.
    public enum Key: Sendable, Equatable {
        case character(Character)
        case up, down, left, right, enter
        /// The input ended (Ctrl-D).
        case endOfInput
    }

    /// What the key asks for.
    public enum Action: Sendable {
        /// Quit the program (no opponent to leave).
        case quit
        /// Feed this event to the lobby (``GameLobbyRunner/handle(_:)``).
        case lobby(GameLobby.Event)
        /// Play this square (``GameLobbyRunner/play(_:)``).
        case play(Int)
    }

    /// The square Enter plays (1–9); the centre when a game starts.
    public private(set) var cursor = 5
    /// The opponent Enter invites, an index into ``GameLobby/pickList``.
    public private(set) var selection = 0

    public init() {}

    /// What `key` means in `lobby`; nil: nothing (or only the cursor or selection moved).
    public mutating func press(_ key: Key, in lobby: GameLobby) -> Action? {
        if lobby.opponent != nil { return pressInGame(key, in: lobby) }
        let count = lobby.pickList.count
        switch key {
        case .character("q"), .character("Q"), .endOfInput:
            return .quit
        case .character(let c) where c.isNumber:
            guard let number = c.wholeNumberValue, lobby.pickList.indices.contains(number - 1) else { return nil }
            selection = number - 1
            return .lobby(.pick(selection))
        case .up, .down:
            guard count > 0 else { return nil }
            selection = (selection + (key == .up ? count - 1 : 1)) % count
        case .enter:
            return .lobby(.pick(selection))
        default:
            break
        }
        return nil
    }

    /// A game starts: the cursor goes back to the centre.
    public mutating func gameStarted() { cursor = 5 }

    /// The selection as it fits the list of `count` opponents now.
    public mutating func fitSelection(to count: Int) -> Int {
        selection = min(selection, max(count - 1, 0))
        return selection
    }

    private mutating func pressInGame(_ key: Key, in lobby: GameLobby) -> Action? {
        if lobby.asksRematch, let yes = Self.rematchAnswer(key) { return .lobby(.rematchAnswered(yes)) }
        switch key {
        case .character("q"), .character("Q"), .endOfInput: return .lobby(.leave)
        case .character(let c) where c.isNumber: return c.wholeNumberValue.map { .play($0) }
        case .up: cursor = cursor > 3 ? cursor - 3 : cursor + 6
        case .down: cursor = cursor < 7 ? cursor + 3 : cursor - 6
        case .left: cursor = (cursor - 1) % 3 == 0 ? cursor + 2 : cursor - 1
        case .right: cursor = cursor % 3 == 0 ? cursor - 2 : cursor + 1
        case .enter: return .play(cursor)
        default: break
        }
        return nil
    }

    /// y or Enter: another round; n: leave. Other keys are no answer.
    static func rematchAnswer(_ key: Key) -> Bool? {
        switch key {
        case .character("y"), .character("Y"), .enter: true
        case .character("n"), .character("N"): false
        default: nil
        }
    }
}
