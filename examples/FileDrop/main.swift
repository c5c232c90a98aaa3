// FileDrop: a folder peers drop files into, built on FileTransfers, ReceiveLedger and a ConnectionPolicy.
// It advertises itself in the "files" session (where `p2p send` looks), lets in only keys pinned before
// (nobody watches a drop, so no stranger fills its disk), takes every file and tree those peers send into
// FOLDER, and prints one line per sender when it leaves: what arrived, verified by SHA-256. With
// --everyone it lets in any key and pins it on first use, so that key is known on the next, stricter run.
//
//   swift run FileDrop FOLDER [NAME] [--everyone]     then, on another machine:   p2p send --to NAME FILE-OR-FOLDER
import Foundation
import P2P

/// Prints a line at once, also into a pipe.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("FileDrop: \(text)\n".utf8))
    exit(1)
}

var arguments = Array(CommandLine.arguments.dropFirst())
let everyone = arguments.contains("--everyone")
arguments.removeAll { $0 == "--everyone" }
guard let folderPath = arguments.first else { fail("usage: FileDrop FOLDER [NAME] [--everyone]") }
let folder = URL(fileURLWithPath: folderPath, isDirectory: true)
let name = arguments.dropFirst().first ?? "drop"

// Pinned keys get in; a new key is refused, since nobody is here to be asked (a name pinned to another key
// the session refuses by itself). --everyone lets every key in; the trust store pins each on first use.
let policy = ConnectionPolicy(acceptsEveryone: everyone, canAsk: false)

let session: Session
do {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var configuration = SessionConfiguration()
    configuration.trustStore = try TrustStore.standard()
    session = Session(sessionID: "files", displayName: name, mode: .server, identity: try Identity.loadOrCreate(), configuration: configuration)
} catch {
    fail("\(error)")
}
session.setConnectionRequestHandler { request in
    let decision = policy.decide(request.peer.id, trust: request.trust)
    if decision != .accept {
        say("refused \(request.peer.displayName) (\(request.peer.fingerprint)): its key is not pinned (FileDrop --everyone lets new keys in)")
    }
    return decision == .accept
}

// Whoever got past the policy may drop anything: files and trees, written into the folder. Hidden paths
// and execute bits stay out (FileTransfers.Configuration's defaults).
let transfers = FileTransfers(session: session, directory: folder)
transfers.setOfferHandler { _ in true }

/// Transfer and session events, in one stream: one loop owns the ledger, so nothing is shared.
enum Input: Sendable {
    case transfer(TransferEvent)
    case session(SessionEvent)
}
let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
let transferEvents = transfers.events(), sessionEvents = session.events()
Task { for await event in transferEvents { feed.yield(.transfer(event)) } }
Task { for await event in sessionEvents { feed.yield(.session(event)) } }

/// One sender's batch in one line. Its name is peer text: printed through PeerText, sanitized.
func summary(of sender: ReceiveLedger.Sender) -> String {
    let counts = sender.counts
    var line = "\(PeerText(sender.name)): \(counts.files) file\(counts.files == 1 ? "" : "s") (\(ByteCount.describe(counts.bytes))) "
        + "into \(folder.path), verified by SHA-256"
    if counts.alreadyThere > 0 { line += "; \(counts.alreadyThere) already there" }
    if counts.skipped > 0 { line += "; \(counts.skipped) skipped (hidden paths)" }
    if counts.failed > 0 { line += "; \(counts.failed) failed" }
    if counts.cancelled > 0 { line += "; \(counts.cancelled) cancelled" }
    return line
}

var ledger = ReceiveLedger()

/// The sender left: its summary now, or (transfers still running) once they end.
@MainActor func senderLeft(_ peer: PeerID) {
    if let sender = ledger.senderLeft(peer), !sender.counts.isEmpty { say(summary(of: sender)) }
}

try await session.start()
do {
    try session.setAvailable(true)
} catch {
    fail("\(error)")
}
say("FileDrop \(name): files go into \(folder.path); letting in \(everyone ? "every key" : "pinned keys only")")

for await input in inputs {
    switch input {
    case .transfer(let event):
        for effect in ledger.record(event) {
            switch effect {
            case .summaryDue(_, let sender) where !sender.counts.isEmpty:
                say(summary(of: sender))
            case .waitingForResume(let info):
                say("\(info.peer.displayName) vanished while sending \(info.name): the same send again resumes it")
            case .summaryDue, .progress:
                break
            }
        }
        // The two streams are not ordered with each other: a sender may be gone before its transfer's end
        // comes through here. Then this end is its last.
        if event.isEnd, let peer = event.info?.peer.id, !session.connectedPeers.contains(where: { $0.id == peer }) {
            senderLeft(peer)
        }
    case .session(.peerChanged(let peer, .disconnected, _)):
        senderLeft(peer.id)
    case .session(.advertising(let advertised)):
        say("advertised as \(advertised)")
    case .session(.refused(let peer, let reason)):
        say("refused \(peer.displayName) (\(peer.fingerprint)): \(reason)")
    case .session:
        break
    }
}
