import P2P

/// The lines that tell a person what a command is waiting for while it finds and connects a peer: on
/// stderr, so stdout stays the command's result; nothing in JSON mode, whose stdout is for events and
/// whose readers learn the same from them. The words are the library's (``ReachWording``).
struct ConnectProgress: Sendable {
    let json: Bool
    /// Lines true only until the next step ("waiting for bob to accept…") are drawn as a status line,
    /// which the transfer's progress replaces once the peer said yes (`p2p send` on a terminal).
    var transient = false

    func show(_ line: String) {
        if !json { Output.error(Terminal.paint(line, .dim)) }
    }

    /// A line true until the next step: a status line when `transient`, else a line like `show`'s.
    func showUntilNext(_ line: String) {
        guard transient, !json else { return show(line) }
        Output.status(Terminal.paint(line, .dim))
    }
}
