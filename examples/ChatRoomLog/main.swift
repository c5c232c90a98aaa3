// ChatRoomLog: a headless member of a chat room, built on ChatRoomRunner. It joins the room, lets
// peers in by a ConnectionPolicy, dials the peers of the room as `p2p chat` does, prints every line it
// gets with its sender, dials members that drop again, and says each line of its standard input to the
// room (held until someone joins): the runner does all of that; this file prints and reads.
//
//   swift run ChatRoomLog [ROOM] [NAME]        then, on another terminal or machine:   p2p chat --room ROOM
import Foundation
import P2P

/// Prints a line at once, also into a pipe.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

let arguments = CommandLine.arguments.dropFirst()
let roomName = arguments.first ?? "chat"
let name = arguments.dropFirst().first ?? "log"

// Every key is let in (pinned on first use by the trust store), since nobody is here to be asked.
// With `acceptsEveryone: false` only keys pinned before (`p2p pair`, `p2p trust`) get in.
let policy = ConnectionPolicy(acceptsEveryone: true, canAsk: false)

do {
    var configuration = SessionConfiguration()
    configuration.trustStore = try TrustStore.standard()
    let session = Session(sessionID: roomName, displayName: name, mode: .peer, identity: try Identity.loadOrCreate(), configuration: configuration)
    let runner = ChatRoomRunner(session: session, conversation: Conversation(session: session, history: try ChatHistory()), policy: policy)
    session.setConnectionRequestHandler { request in runner.decide(request) == .accept }
    let events = runner.events()
    runner.start()
    try await session.start()
    try await session.setAvailable(true)
    say("ChatRoomLog in room \"\(roomName)\" as \(name) on port \(session.localPort ?? 0)")
    // Standard input is read on a thread of its own: a blocking read never holds a task's thread.
    Thread { while let line = readLine() { runner.say(line) } }.start()

    for await event in events {
        switch event {
        case .joined(let peer): say("\(peer.displayName) joined")
        case .left(let peer): say("\(peer.displayName) left")
        // Peer text is hostile: PeerText prints it sanitized (no terminal escapes).
        case .lineReceived(let entry, let peer): say("\(peer.displayName)> \(PeerText(entry.text))")
        // Nobody answers questions here: a key the policy does not accept is not dialled.
        case .newKeyNotDialled(let peer), .dialQuestion(let peer): say("not dialling \(peer.displayName): its key is not pinned")
        case .refused(let peer, let reason): say("refused \(peer.displayName): \(reason)")
        case .refusedAgain(let peer, let tries): say("refused \(peer.displayName) again: \(tries) tries so far")
        // A peer that refused this side (our key, or a no), whichever side dialled: not dialled again.
        case .refusedBy(let peer, let refusal, _, _): say("\(peer.displayName) refused this side (\(refusal.rawValue)); not dialled again")
        case .dialsHeld: say("more peers announce the room than it dials at once; the others wait their turn")
        case .historyFailed(let error): say("history: \(error)")
        default: break
        }
    }
} catch {
    FileHandle.standardError.write(Data("ChatRoomLog: \(error)\n".utf8))
    exit(1)
}
