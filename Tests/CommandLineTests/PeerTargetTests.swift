import Foundation
import P2P
import Testing
@testable import P2PCLI

/// `--to` on the command line: the library's words (`ReachWording`, tested in PeerConnectorTests) with
/// the exit codes the commands document (the library's `CommandExitCode`).
@Suite struct PeerTargetTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "files")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")

    /// The CLI's `ExitCode` is the library's `CommandExitCode` (tested in ReachExitCodeTests).
    @Test func aFailureExitsWithTheLibrarysCode() {
        #expect(ReachError(.ambiguous(query: "bob", peers: [bob, alice])).exitCode(denial: ExitStatus.denied) == ExitStatus.peerNotFound)
        #expect(ReachWording().connectFailure(.denied(by: "bob"), to: "bob").exitCode(denial: ExitStatus.denied) == ExitStatus.denied)
        #expect(ReachError.denied("no").exitCode(denial: ExitStatus.connectionFailed) == ExitStatus.connectionFailed)
    }

    /// `/msg zed`: who is here is listed as here; a member who left is not shown as present.
    @Test func msgToNobodyListsWhoIsHereApartFromWhoLeft() {
        let text = PrivateLineTarget.nobodyCalled("zed", connected: [bob], away: [alice])
        #expect(text == "nobody called zed is in this chat; here: \(bob.shownLabel); "
                + "away (a /msg waits for them): \(alice.shownLabel); nothing was sent")
        #expect(PrivateLineTarget.nobodyCalled("zed", connected: [], away: [alice]).hasPrefix("nobody called zed is in this chat; nobody is here now; away"))
    }

    /// The lines a command shows are the library's, word for word.
    @Test func theCommandsLinesAreTheLibrarys() {
        #expect(ReachWording(role: "opponent").waiting(named: "bob") == "waiting for an opponent named bob…")
        #expect(ReachWording().notFound("bob", seen: [], within: 10).description.contains("nobody runs `p2p receive`"))
        var renamed = bob
        renamed.displayName = "bob #2"
        #expect(ReachWording.fromName(renamed) == "\"bob #2\"")
        #expect(ReachWording().notFound("bob #3", seen: [renamed], within: 10).description.contains("did you mean --to \"bob #2\"?"))
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
