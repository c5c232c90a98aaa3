// ChatRoomLog: a headless member of a chat room, built on ChatRoom and Conversation. It joins the
// room, lets peers in by a ConnectionPolicy, dials the peers of the room as `p2p chat` does, prints
// every line it gets with its sender, and dials members that drop again.
//
//   swift run ChatRoomLog [ROOM] [NAME]        then, on another terminal or machine:   p2p chat --room ROOM
import Foundation
import P2P

/// Prints a line at once, also into a pipe.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("ChatRoomLog: \(text)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
let roomName = arguments.first ?? "chat"
let name = arguments.dropFirst().first ?? "log"

// Every key is let in (pinned on first use by the trust store), since nobody is here to be asked.
// With `acceptsEveryone: false` only keys pinned before (`p2p pair`, `p2p trust`) get in.
let policy = ConnectionPolicy(acceptsEveryone: true, canAsk: false)

var configuration = SessionConfiguration()
let session: Session
let conversation: Conversation
do {
    configuration.trustStore = try TrustStore.standard()
    session = Session(sessionID: roomName, displayName: name, mode: .peer, identity: try Identity.loadOrCreate(), configuration: configuration)
    conversation = Conversation(session: session, history: try ChatHistory())
} catch {
    fail("\(error)")
}
session.setConnectionRequestHandler { request in policy.decide(request.peer.id, trust: request.trust) == .accept }

/// Everything the room reacts to, in one stream: one loop owns the `ChatRoom`, so nothing is shared.
enum Input: Sendable {
    case session(SessionEvent)
    case chat(ConversationEvent)
    case dialFailed(PeerInfo, refusal: PeerRefusal?)
    case tick
}
let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
let sessionEvents = session.events(), chatEvents = conversation.events()
Task { for await event in sessionEvents { feed.yield(.session(event)) } }
Task { for await event in chatEvents { feed.yield(.chat(event)) } }
Task {
    // Links can die without a word: members still announced are dialled again on each tick.
    while true {
        try? await Task.sleep(for: .seconds(2))
        feed.yield(.tick)
    }
}

/// The peer as the trust store judges its announcement: the room's policy dials a key nobody asked for
/// by name only if it may (here every key may; with `acceptsEveryone: false`, pinned keys only).
func judged(_ peer: PeerInfo) -> PeerInfo {
    var judged = peer
    if let store = session.configuration.trustStore { judged.trust = store.verdict(for: peer.id, name: peer.displayName.raw) }
    return judged
}

var room = ChatRoom(name: roomName, localPeer: session.peerID, dialsRoomPeers: true, policy: policy)

/// Does what the room asks for. This log types nothing, so it never holds or sends lines of its own.
func execute(_ effects: [ChatRoom.Effect]) {
    for effect in effects {
        switch effect {
        case .dial(let peer, _, _):
            Task {
                do {
                    _ = try await session.connect(to: peer.id)
                } catch {
                    // A refusal (our key, or a no) is an answer: the room does not dial that peer again.
                    feed.yield(.dialFailed(peer, refusal: (error as? SessionError)?.refusal))
                }
            }
        case .send(let lines, let peers):
            for line in lines { _ = try? conversation.send(line, to: peers) }
        case .newKeyNotDialled(let peer), .askToDial(let peer):
            // Nobody answers questions here: a key the policy does not accept is not dialled.
            say("not dialling \(peer.displayName): its key is not pinned")
        case .showRefusal(let peer, let reason):
            say("refused \(peer.displayName): \(reason)")
        case .refusedBy(let peer, let refusal, _):
            say("\(peer.displayName) refused this side (\(refusal.rawValue)); not dialled again")
        case .refusedAgain(let peer, let tries):
            say("refused \(peer.displayName) again: \(tries) tries so far")
        case .dialsHeld:
            say("more peers announce the room than it dials at once; the others wait their turn")
        case .hold, .release, .queued, .delivered:
            break
        }
    }
}

try await session.start()
do {
    try session.setAvailable(true)
} catch {
    fail("\(error)")
}
say("ChatRoomLog in room \"\(roomName)\" as \(name)")

for await input in inputs {
    switch input {
    case .session(.peerChanged(let peer, let state, let reason)):
        switch state {
        case .available:
            execute(room.handle(.peerAvailable(judged(peer), now: .now)))
        case .connected:
            say("\(peer.displayName) joined")
            execute(room.handle(.peerConnected(peer)))
        case .disconnected:
            // A peer that dialled us and refused our key ends its link before it connected: that is how we hear.
            if let refusal = reason?.keyRefusal { execute(room.handle(.refusedBy(peer, refusal))) } else { say("\(peer.displayName) left") }
            let pathLost = if case .pathLost = reason { true } else { false }
            execute(room.handle(.peerDisconnected(peer, pathLost: pathLost, now: .now)))
        case .connecting, .unavailable:
            break
        }
    case .session:
        break
    case .chat(.received(let entry, let peer)):
        // Peer text is hostile: PeerText prints it sanitized (no terminal escapes).
        say("\(peer.displayName)> \(PeerText(entry.text))")
    case .chat(.storageFailed(let error)):
        say("history: \(error)")
    case .chat:
        break
    case .dialFailed(let peer, let refusal):
        execute(room.handle(.dialFailed(peer.id, refused: refusal != nil, now: .now)))
        if let refusal { execute(room.handle(.refusedBy(peer, refusal))) }
    case .tick:
        for peer in room.redialCandidates(among: session.availablePeers) {
            execute(room.handle(.peerAvailable(judged(peer), now: .now)))
        }
    }
}
