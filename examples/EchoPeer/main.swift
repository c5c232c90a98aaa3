// EchoPeer: the smallest useful p2p app. It advertises itself in the "chat" session,
// accepts everyone, and sends every chat line back to whoever wrote it.
//
//   swift run EchoPeer [NAME]        then, on another terminal or machine:   p2p chat --to NAME
import Foundation
import P2P

/// Prints a line at once, also into a pipe.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

let name = CommandLine.arguments.dropFirst().first ?? "echo"
let identity: Identity
do {
    identity = try Identity.loadOrCreate()
} catch {
    FileHandle.standardError.write(Data("EchoPeer: \(error)\n".utf8))
    exit(1)
}

var configuration = SessionConfiguration()
configuration.acceptsConnectionsByDefault = true
let session = Session(sessionID: "chat", displayName: name, mode: .server, identity: identity, configuration: configuration)

session.onMessage(TextMessage.self) { message, peer, _ in
    say("\(peer.displayName)> \(message.text)")
    // Acknowledge, or `p2p chat` keeps the line in its outbox and sends it again on every reconnect.
    try? session.send(TextAck(messageID: message.id), to: [peer.id])
    try? session.send(TextMessage(text: "echo: \(message.text)"), to: [peer.id])
}

let events = session.events()
do {
    try await session.start()
} catch {
    // An app says what went wrong and exits non-zero; a top-level `try` would crash instead.
    FileHandle.standardError.write(Data("EchoPeer: \(error)\n".utf8))
    exit(1)
}
do {
    try await session.setAvailable(true)
} catch {
    // Not advertised (no mDNS daemon, say), yet listening: `p2p chat --connect HOST:PORT` still reaches it.
    FileHandle.standardError.write(Data("EchoPeer: \(error)\n".utf8))
}
say("EchoPeer listening on port \(session.localPort ?? 0) as \(session.displayName)")

for await event in events {
    switch event {
    case .advertising(let advertised):
        say("advertised as \(advertised)")
    case .peerChanged(let peer, let state, let reason):
        say("\(peer.displayName) (\(peer.id.short)): \(state)\(reason.map { " — \($0)" } ?? "")")
    case .refused(let peer, let reason):
        say("refused \(peer.displayName): \(reason)")
    case .discoveryFailed(let error):
        say("discovery: \(error)")
    case .eventsDropped(let count):
        say("missed \(count) events")
    }
}
