import ArgumentParser
import Foundation
import NIOCore
import P2P

/// `p2p chat`: a text chat with one or more peers.
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Chat with peers on the local network.",
        discussion: """
            Examples:
              p2p chat --name alice                   the room "chat", everyone in it
              p2p chat --room team --name alice       another room
              p2p chat --to bob                       bob only
              p2p chat --connect 192.168.1.20:24242   a peer mDNS does not show
              echo hello | p2p chat --to bob --yes    piped lines, then leave

            A chat is a room: everyone running `p2p chat` with the same --room (default "chat") is connected by itself, \
            so three people chat as a group without picking anyone. A peer whose key is pinned or paired is accepted \
            without asking (--ask: always ask); a new key is asked about once per run. --to or --connect talks to one peer instead.
            Type lines to send them to everyone; /msg NAME text to one person (marked [private] on both screens), /me text, \
            /image PATH, /file PATH (any file; the receiver is asked, as for an image, and it lands in --downloads), \
            /who or /names (who is here, with a count), /peers (everyone seen, with fingerprints), /help (the commands, one per line), /quit; \
            //text sends a line starting with /. The input line edits like a shell's (arrows, Up/Down history, Ctrl-A/E/W/U/K, Ctrl-L); \
            Tab completes a peer's name (after /msg, after @, at the start of a word) and a path after /image or /file.
            Your own lines carry your name; a line that mentions your name or is a /msg to you is highlighted and rings \
            the terminal bell (--no-bell: no bell). A peer that refuses your key (its copy of your name is pinned to another \
            key) is named once, with what to do. A key this chat refuses (its name is pinned here to another key) \
            is shown once in full (REFUSED …); its later tries are counted and said at most once a minute \
            ("(refused again: 13 tries from bob, key 3fa2…)"). When the mDNS daemon answers on loopback only \
            (scripts/setup.sh starts such a one where none runs), the chat's header says that only peers on \
            this machine can see you.
            Every line is kept in the history (p2p history); a line for a peer that is away waits in the outbox and goes out, \
            once and in order, when that peer is back (reconnecting is automatic); a line typed while nobody is here goes to \
            whoever joins.
            From a pipe: every line of stdin is sent (held until a peer is connected); EOF leaves and tells peers.
            --json prints one object per event per line (see README: "JSON events").
            """
    )

    @OptionGroup var network: NetworkOptions

    @Option(help: "Chat with this peer only (display name, or the start of its ID or fingerprint), as soon as it is found.")
    var to: String?

    @Option(help: "Connect directly to HOST:PORT, without discovery.")
    var connect: String?

    @Option(help: ArgumentHelp("A note sent with this chat's connection requests; the other side sees it before it accepts.",
                               discussion: "At most 1024 bytes of UTF-8. A peer whose p2p predates it refuses a request that carries one.",
                               valueName: "text"))
    var context: String?

    @Option(help: ArgumentHelp("The room to join (the same as --session-id).", valueName: "name"))
    var room: String?

    @Flag(help: "Accept connection requests (and images and files) without asking.")
    var yes = false

    @Flag(help: "Ask about every connection request, also from pinned or paired peers.")
    var ask = false

    @Flag(help: "One JSON object per event per line.")
    var json = false

    @Option(help: "Seconds to wait for the --to peer to appear.")
    var timeout: Double = 30

    @Option(help: "Where received images and files go (default: $P2P_DOWNLOADS, else ~/Downloads).")
    var downloads: String?

    @Flag(inversion: .prefixedNo,
          help: "Ring the terminal bell when a peer's line mentions your name or is private to you (/msg); --no-bell keeps quiet.")
    var bell = true

    func validate() throws {
        if let room, let sessionID = network.sessionID, room != sessionID {
            throw ValidationError("--room and --session-id name the same thing; give one (got \"\(room)\" and \"\(sessionID)\")")
        }
        if yes && ask { throw ValidationError("--yes and --ask contradict each other") }
        if let connect, Endpoint(connect) == nil { throw ValidationError(Endpoint.connectUsage(connect)) }
        if let context, context.utf8.count > ConnectionRequest.maxContextBytes {
            throw ValidationError("--context is \(context.utf8.count) bytes; at most \(ConnectionRequest.maxContextBytes)")
        }
    }

    func run() async throws {
        let session = try network.makeSession(defaultSessionID: room ?? "chat")
        var view = ChatView(json: json)
        view.ownName = session.displayName
        let chat = ChatLoop(session: session, view: view, options: self)
        let status = await chat.run()
        if status != .success { throw status }
    }
}
