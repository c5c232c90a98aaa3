import P2P

/// Tells the player what happens: JSON lines (`--json`), plain lines (a pipe), or notes under the
/// board (the interactive screen, which shows board, score and status itself).
final class GameView {
    let json: Bool
    let interactive: Bool
    /// What each step of the game says (the library's words).
    let narrator: GameNarrator
    private let chat: ChatView
    /// The latest notes for the interactive screen.
    private(set) var notes: [String] = []
    /// The last error shown on the interactive screen, repeated on stderr when it ends the program.
    private(set) var lastError: String?

    init(json: Bool, interactive: Bool, verbose: Bool) {
        self.json = json
        self.interactive = interactive
        narrator = GameNarrator(json: json, interactive: interactive)
        chat = ChatView(json: json, verbose: verbose)
    }

    func note(_ text: String) {
        if interactive {
            notes.append(text)
            if notes.count > GameScreen.maxNotes { notes.removeFirst(notes.count - GameScreen.maxNotes) }
        } else {
            chat.note(text)
        }
    }

    /// What the game waits for while it finds and invites its opponent: under the board on the screen,
    /// on stderr from a pipe (stdout is the game's record), nothing with --json.
    func progress(_ text: String) {
        if interactive { note(text) } else { ConnectProgress(json: json).show(text) }
    }

    func listening(_ session: Session) {
        if interactive { note("You are \(session.displayName) (\(session.peerID.short)), port \(session.localPort ?? 0).") } else { chat.listening(session) }
    }

    func advertising(as name: String, requested: String) {
        if interactive {
            if name != requested { note("The name \"\(requested)\" is taken here; peers see you as \"\(Terminal.sanitize(name))\".") }
        } else {
            chat.advertising(as: name, requested: requested)
        }
    }

    func peerChanged(_ peer: PeerInfo, _ state: PeerState, reason: SessionError?) {
        guard interactive else { return chat.peerChanged(peer, state, reason: reason) }
        if state == .connected {
            note("\(peer.shownName) connected — \(peer.trust.note(fingerprint: peer.fingerprint)).")
        }
    }

    func warning(_ code: String, _ message: String) {
        if interactive { note("p2p: \(message)") } else { chat.warning(code, message) }
    }

    func error(_ code: String, _ message: String) {
        if interactive {
            lastError = message
            note("p2p: \(message)")
        } else {
            chat.error(code, message)
        }
    }

    /// Says what the library worded: notes, record lines, errors and JSON events.
    func show(_ notices: [GameNotice]) {
        for notice in notices {
            switch notice {
            case .note(let text): note(text)
            case .record(let line): Output.line(line)
            case .error(let code, let message): error(code, message)
            case .json(let object): Output.json(object)
            }
        }
    }
}
