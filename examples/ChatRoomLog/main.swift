// ChatRoomLog: a headless member of a chat room, built on RunningChat (the library's ChatRun, run by
// itself). It joins the room, lets peers in by a ConnectionPolicy, dials the peers of the room as
// `p2p chat` does, prints every line it gets with its sender, dials members that drop again, and says
// each line of its standard input to the room (held until someone joins): the chat does all of that;
// this file prints and reads.
//
//   swift run ChatRoomLog [ROOM] [NAME]        then, on another terminal or machine:   p2p chat --room ROOM
import Foundation
import P2P

/// Prints a line at once, also into a pipe.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

/// Something went wrong: said on standard error.
func complain(_ text: String) { FileHandle.standardError.write(Data("ChatRoomLog: \(text)\n".utf8)) }

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
    session.setConnectionRequestHandler { request in policy.decide(request.peer.id, trust: request.trust) == .accept }
    // Nobody answers questions here: a new key is not dialled, and images and files are declined.
    let options = ChatRun.Options(policy: policy, downloads: FileManager.default.temporaryDirectory)
    let chat = try RunningChat(session: session, options: options)
    // Standard input is read on a thread of its own: a blocking read never holds a task's thread.
    Thread { while let line = readLine() { chat.type(line) } }.start()

    for await event in chat.events {
        switch event {
        case .listening: say("ChatRoomLog in room \"\(roomName)\" as \(name) on port \(session.localPort ?? 0)")
        case .peerChanged(let peer, .connected, _, _): say("\(peer.displayName) joined")
        case .peerChanged(let peer, .disconnected, _, wasConnected: true): say("\(peer.displayName) left")
        // Peer text is hostile: PeerText prints it sanitized (no terminal escapes).
        case .lineReceived(let entry, let peer, _): say("\(peer.displayName)> \(PeerText(entry.text))")
        case .refusedBy(_, _, let message): say(message)
        // What else the chat tells a person in words: keys not dialled, refusals, what failed.
        case .notice(let notice) where notice.level == .warning: say(notice.text)
        case .notice(let notice) where notice.level == .error: complain(notice.text)
        case .refusedAgain(let peer, let tries): say("refused \(peer.displayName) again: \(tries) tries so far")
        case .ended(let status) where status != .success: exit(1)
        default: break
        }
    }
} catch {
    complain("\(error)")
    exit(1)
}
