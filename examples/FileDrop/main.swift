// FileDrop: a folder peers drop files into, built on FileTransfers, ReceiveLedger and a ConnectionPolicy.
// It advertises itself in the "files" session (where `p2p send` looks), lets in only keys pinned before
// (nobody watches a drop, so no stranger fills its disk), takes every file and tree those peers send into
// FOLDER, and prints one line per sender when it leaves: what arrived, verified by SHA-256. With
// --everyone it lets in any key and pins it on first use, so that key is known on the next, stricter run.
// With --localsend-pin PIN it is also a LocalSend peer (LocalSendNode): phones and desktops with the LocalSend
// app see NAME and may drop files into the same folder, through the same rules and ledger, if they give PIN
// (a LocalSend device has no key to pin, so the PIN is what lets one in).
//
//   swift run FileDrop FOLDER [NAME] [--everyone] [--localsend-pin PIN]
//   then, on another machine:   p2p send --to NAME FILE-OR-FOLDER   (or a LocalSend app: NAME, the PIN)
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
var localSendPIN: String?
if let index = arguments.firstIndex(of: "--localsend-pin") {
    guard index + 1 < arguments.count, !arguments[index + 1].isEmpty else { fail("--localsend-pin needs a PIN") }
    localSendPIN = arguments[index + 1]
    arguments.removeSubrange(index ... index + 1)
}
guard let folderPath = arguments.first else { fail("usage: FileDrop FOLDER [NAME] [--everyone] [--localsend-pin PIN]") }
let folder = URL(fileURLWithPath: folderPath, isDirectory: true)
let name = arguments.dropFirst().first ?? "drop"

// Pinned keys get in; a new key is refused, since nobody is here to be asked (a name pinned to another key
// the session refuses by itself). --everyone lets every key in; the trust store pins each on first use.
let policy = ConnectionPolicy(acceptsEveryone: everyone, canAsk: false)

let session: Session
let identity: Identity
do {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var configuration = SessionConfiguration()
    configuration.trustStore = try TrustStore.standard()
    identity = try Identity.loadOrCreate()
    session = Session(sessionID: "files", displayName: name, mode: .server, identity: identity, configuration: configuration)
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

// Whoever got past the policy (a pinned key, or a LocalSend device that gave the PIN) may drop anything:
// files and trees, written into the folder. Hidden paths and execute bits stay out
// (FileTransfers.Configuration's defaults). LocalSend offers reach this same handler.
let transfers = FileTransfers(session: session, directory: folder)
transfers.setOfferHandler { _ in true }

let localSend: LocalSendNode?
if let localSendPIN {
    var configuration = LocalSendNode.Configuration(alias: name)
    configuration.pin = localSendPIN
    do {
        localSend = try LocalSendNode(transfers: transfers, identity: identity, configuration: configuration)
    } catch {
        fail("LocalSend: \(error)")
    }
} else {
    localSend = nil
}

/// Transfer, session and LocalSend events, in one stream: one loop owns the ledger, so nothing is shared.
enum Input: Sendable {
    case transfer(TransferEvent)
    case session(SessionEvent)
    case localSend(LocalSendEvent)
}
let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
let transferEvents = transfers.events(), sessionEvents = session.events()
Task { for await event in transferEvents { feed.yield(.transfer(event)) } }
Task { for await event in sessionEvents { feed.yield(.session(event)) } }
if let localSendEvents = localSend?.devices.events() {
    Task { for await event in localSendEvents { feed.yield(.localSend(event)) } }
}

/// LocalSend senders seen: their files are checked by size, and by SHA-256 only when the sender gave one
/// (LocalSend's is optional), so their summary does not say "verified".
var localSendSenders: Set<PeerID> = []

/// One sender's batch in one line. Its name is peer text: printed through PeerText, sanitized.
@MainActor func summary(of peer: PeerID, _ sender: ReceiveLedger.Sender) -> String {
    let counts = sender.counts
    let check = localSendSenders.contains(peer) ? "(LocalSend) checked by size, and by SHA-256 when the sender gave one" : "verified by SHA-256"
    var line = "\(PeerText(sender.name)): \(counts.files) file\(counts.files == 1 ? "" : "s") (\(ByteCount.describe(counts.bytes))) "
        + "into \(folder.path), \(check)"
    if counts.alreadyThere > 0 { line += "; \(counts.alreadyThere) already there" }
    if counts.skipped > 0 { line += "; \(counts.skipped) skipped (hidden paths)" }
    if counts.failed > 0 { line += "; \(counts.failed) failed" }
    if counts.cancelled > 0 { line += "; \(counts.cancelled) cancelled" }
    return line
}

var ledger = ReceiveLedger()

/// The sender left: its summary now, or (transfers still running) once they end.
@MainActor func senderLeft(_ peer: PeerID) {
    if let sender = ledger.senderLeft(peer), !sender.counts.isEmpty { say(summary(of: peer, sender)) }
}

do {
    try await session.start()
    try await session.setAvailable(true)
} catch {
    // An app says what went wrong and exits non-zero; a top-level `try` would crash instead.
    fail("\(error)")
}
say("FileDrop \(name) listening on port \(session.localPort ?? 0): files go into \(folder.path); letting in \(everyone ? "every key" : "pinned keys only")")
if let localSend {
    do {
        let port = try await localSend.start()
        say("LocalSend: \(name) on HTTPS port \(port), fingerprint \(localSend.certificate.fingerprint.prefix(16))…; senders give the PIN")
    } catch {
        fail("LocalSend: \(error)")
    }
}

for await input in inputs {
    switch input {
    case .transfer(let event):
        if let peer = event.info?.peer, peer.kind == .localSend { localSendSenders.insert(peer.id) }
        for effect in ledger.record(event) {
            switch effect {
            case .summaryDue(let peer, let sender) where !sender.counts.isEmpty:
                say(summary(of: peer, sender))
            case .waitingForResume(let info):
                say("\(info.peer.displayName) vanished while sending \(info.name): the same send again resumes it")
            case .summaryDue, .progress:
                break
            }
        }
        // The two streams are not ordered with each other: a sender may be gone before its transfer's end
        // comes through here. Then this end is its last. (A LocalSend sender is never a connected peer: its
        // upload session's end says when it is done.)
        if event.isEnd, let peer = event.info?.peer, peer.kind == .p2p, !session.connectedPeers.contains(where: { $0.id == peer.id }) {
            senderLeft(peer.id)
        }
    case .localSend(.sessionEnded(let peer)):
        senderLeft(peer.id)
    case .localSend:
        break
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
