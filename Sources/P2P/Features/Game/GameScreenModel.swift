/// What a game screen shows, from the lobby as it stands and the keypad: the opponent, this player's
/// mark, the board with the square under the cursor (on this player's turn) and the winning line,
/// the round and the score, the status line; or, between games, the opponents to pick from.
public struct GameScreenModel: Sendable {
    /// The opponent of the game on; nil between games (then ``peers`` are listed).
    public var opponent: PeerInfo?
    public var mark: Mark?
    public var board = Board()
    /// The square Enter plays; shown only on this player's turn.
    public var cursor: Int?
    /// The squares of the line that won the round just over.
    public var winningLine: [Int] = []
    public var round: UInt32 = 0
    public var score: GameProtocol.Score?
    public var status: GameStatus
    /// Discovered opponents and the one Enter invites, when there is no opponent.
    public var peers: [PeerInfo] = []
    public var selection = 0

    /// The screen of `lobby`; the keypad's selection is fitted to the opponents listed.
    public init(_ lobby: GameLobby, keypad: inout GameKeypad) {
        status = GameStatus(lobby)
        guard let opponent = lobby.opponent, let game = lobby.shown else {
            peers = lobby.pickList
            selection = keypad.fitSelection(to: peers.count)
            return
        }
        self.opponent = opponent
        mark = game.game.myMark
        board = game.game.board
        round = game.round
        score = game.score
        if game.game.state == .myTurn { cursor = keypad.cursor }
        if case .done(.won(_, let line)) = game.game.state { winningLine = line }
    }
}
