import ArgumentParser
import P2P

/// `p2p game`: tic-tac-toe against a peer, in its own session ("game") so chat peers are never offered.
struct GameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "game",
        abstract: "Play tic-tac-toe with a peer on the local network.",
        discussion: """
            On a terminal without --to: pick an opponent by number (or arrows and Enter), or wait to be invited \
            and answer y/n. A die roll (commit, then reveal) decides who is X and goes first. Play with keys 1–9, \
            or arrows and Enter. After each round: "Another round? [y/n]"; it begins when both said yes; n or q \
            leaves the opponent, q again quits, and the final scores stay on the terminal.
            From a pipe: stdin lines are moves (numbers 1–9), held until it is your turn; moves left over when a \
            round ends are dropped, and the next round is wanted 3 s later. At EOF the game leaves once it needs a move it does not have, or at the end \
            of the round. Without --to or --connect, a piped game invites the first opponent it finds. \
            It ends when the opponent leaves (exit 0). When the connection is lost it waits for that opponent \
            to come back and plays on, score kept; it exits 4 if stdin has ended by then.
            --to takes the opponent's display name (any case), or the start of its peer ID or fingerprint.
            --json prints one object per event per line (see README: "JSON events").
            Exit codes: 0 left normally, 1 error, 2 no mDNS daemon (and no --connect or --port), 3 the --to peer \
            did not appear (or several fit it), 4 connection failed (or a piped game lost its opponent after EOF), 10 the opponent refused this machine's key, \
            130 Ctrl-C.
            """
    )

    @OptionGroup var network: NetworkOptions

    @Option(help: "Play this peer as soon as it is found: display name, or the start of its ID or fingerprint.")
    var to: String?

    @Option(help: "Connect directly to HOST:PORT, without discovery.")
    var connect: String?

    @Flag(help: "Accept invitations without asking (while not already playing).")
    var yes = false

    @Flag(help: "One JSON object per event per line.")
    var json = false

    @Option(help: "Seconds to wait for the --to peer to appear.")
    var timeout: Double = 30

    func validate() throws {
        if let connect, Endpoint(connect) == nil { throw ValidationError(Endpoint.connectUsage(connect)) }
    }

    func run() async throws {
        let session = try network.makeSession(defaultSessionID: "game")
        let status = await GameLoop(session: session, options: self).run()
        if status != .success { throw status }
    }
}
