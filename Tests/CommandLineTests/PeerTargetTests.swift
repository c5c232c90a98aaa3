import Foundation
import P2P
import Testing
@testable import P2PCLI

/// `--to` on the command line: the library's words (`ReachWording`, tested in PeerConnectorTests) with
/// the exit codes the commands document.
@Suite struct PeerTargetTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "files")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")

    @Test func eachFailureHasItsDocumentedExitCode() {
        #expect(ReachError(.ambiguous(query: "bob", peers: [bob, alice])).exitCode(denial: ExitStatus.denied) == ExitStatus.peerNotFound)
        #expect(PeerTarget.notFound("carol", role: "peer", seen: [bob], within: 10).exitCode(denial: ExitStatus.denied) == ExitStatus.peerNotFound)
        #expect(PeerTarget.shortPrefixRefusal("fedcba", alice).exitCode(denial: ExitStatus.denied) == ExitStatus.connectionFailed)
        #expect(PeerTarget.connectFailure(.timedOut(seconds: 10), to: "bob").exitCode(denial: ExitStatus.denied) == ExitStatus.connectionFailed)
        #expect(PeerTarget.connectFailure(.denied(by: "bob"), to: "bob").exitCode(denial: ExitStatus.denied) == ExitStatus.denied)
        let refused = PeerTarget.connectFailure(.refusedAsUntrusted("no"), to: "bob", at: "10.0.0.2:24242", localName: "alice")
        #expect(refused.exitCode(denial: ExitStatus.denied) == ExitStatus.keyRefused && ExitStatus.keyRefused.rawValue == 10)
        #expect(ReachError.badEndpoint("x").exitCode(denial: ExitStatus.denied) == ExitStatus.failure)
    }

    /// `/msg zed`: who is here is listed as here; a member who left is not shown as present.
    @Test func msgToNobodyListsWhoIsHereApartFromWhoLeft() {
        let text = PrivateLineTarget.nobodyCalled("zed", connected: [bob], away: [alice])
        #expect(text == "nobody called zed is in this chat; here: \(PeerTarget.label(bob)); "
                + "away (a /msg waits for them): \(PeerTarget.label(alice)); nothing was sent")
        #expect(PrivateLineTarget.nobodyCalled("zed", connected: [], away: [alice]).hasPrefix("nobody called zed is in this chat; nobody is here now; away"))
    }

    /// The lines a command shows are the library's, word for word.
    @Test func theCommandsLinesAreTheLibrarys() {
        #expect(ConnectProgress.waiting(for: "opponent", named: "bob") == "waiting for an opponent named bob…")
        #expect(PeerTarget.notFound("bob", role: "receiver", seen: [], within: 10).description.contains("nobody runs `p2p receive`"))
        var renamed = bob
        renamed.displayName = "bob #2"
        #expect(PeerTarget.fromName(renamed) == "\"bob #2\"")
        #expect(PeerTarget.notFound("bob #3", role: "receiver", seen: [renamed], within: 10).description.contains("did you mean --to \"bob #2\"?"))
    }
}

/// Messages of `send` that depend on what happened.
@Suite struct CommandMessageTests {
    @Test func aMissingDirectoryIsSaidToBeMissing() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-missing-\(UUID().uuidString)").path
        #expect(WritableDirectory.problem(at: missing)?.contains("does not exist") == true)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-file-\(UUID().uuidString)").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(WritableDirectory.problem(at: file)?.contains("not a directory") == true)
        #expect(WritableDirectory.problem(at: FileManager.default.temporaryDirectory.path) == nil)
    }
}
