import Foundation
import P2P
import Testing
@testable import P2PCLI

/// `--to` on the command line: which peer it means, and what the user reads when none or several fit.
@Suite struct PeerTargetTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "files")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")

    @Test func aNameAnIDPrefixOrAFingerprintPrefixFindsThePeer() throws {
        let pins = [KnownPeer(id: alice.id, name: "alice", method: .paired, pinnedAt: .now)]
        #expect(try PeerTarget.resolve("Bob", among: [bob, alice]) == bob)
        #expect(try PeerTarget.resolve("fedcba", among: [bob, alice], pinned: pins) == alice)
        let fingerprint = alice.fingerprint
        #expect(try PeerTarget.resolve(String(fingerprint.prefix(9)), among: [bob, alice], pinned: pins) == alice)
        #expect(try PeerTarget.resolve(fingerprint.replacingOccurrences(of: "-", with: ""), among: [bob, alice]) == alice)
        #expect(try PeerTarget.resolve(String(fingerprint.prefix(19)), among: [bob, alice]) == alice)
    }

    /// Issue 34, row 6: `--to 3fa2` while the pinned peer is away, and a stranger announces a key ground
    /// to start with 3fa2: not dialled (that would pin it unasked), refused with what to do instead.
    @Test func aShortPrefixNeverPicksAKeyThatIsNotPinned() throws {
        let shortPrefix = String(alice.fingerprint.prefix(4))
        #expect(throws: ReachError.refused(PeerTarget.shortPrefixRefusal(shortPrefix, alice, pinned: [])!.description)) {
            try PeerTarget.resolve(shortPrefix, among: [bob, alice])
        }
        let refusal = PeerTarget.shortPrefixRefusal("fedcba", alice, pinned: [])
        #expect(refusal?.description == "--to fedcba fits alice (\(alice.fingerprint)) only by the start of its ID or fingerprint, and that key is not pinned: "
            + "anyone can make a key that starts that way, so a short prefix names only a pinned peer; "
            + "give its full fingerprint (--to \(alice.fingerprint)) after comparing it with the peer's p2p id, or pin it first (p2p pair)")
        #expect(refusal?.exitCode(denial: ExitStatus.denied) == ExitStatus.connectionFailed)
        // The pinned key is another one: the stranger is still refused.
        let otherPin = [KnownPeer(id: bob.id, name: "bob", method: .paired, pinnedAt: .now)]
        #expect(PeerTarget.shortPrefixRefusal("fedcba", alice, pinned: otherPin) != nil)
        // Where a code proves the key (`p2p pair`), a short prefix may pick it.
        #expect(try PeerTarget.resolve("fedcba", among: [bob, alice], anyKeyByShortPrefix: true) == alice)
        // A name is a name: `--to alice` for a new key is the usual first contact (its fingerprint is shown).
        #expect(PeerTarget.shortPrefixRefusal("alice", alice, pinned: []) == nil)
    }

    @Test func nobodyFittingIsNotAnErrorYet() throws {
        #expect(try PeerTarget.resolve("carol", among: [bob, alice]) == nil)
    }

    @Test func severalFittingIsAnErrorListingThemWithTheirFingerprints() {
        let otherBob = PeerInfo(id: PeerID(hex: "aaaa0000000000000000000000000000")!, displayName: "Bob", sessionID: "files")
        #expect(throws: ReachError.self) { try PeerTarget.resolve("BOB", among: [bob, alice, otherBob]) }
        let error = PeerTarget.ambiguous("bob", [otherBob, bob])
        #expect(error.jsonCode == "ambiguous")
        #expect(error.exitCode(denial: ExitStatus.denied) == ExitStatus.peerNotFound)
        // Sorted by ID, so the listing is the same on every run.
        #expect(error.description == "2 peers fit --to bob: bob (\(bob.fingerprint)), Bob (\(otherBob.fingerprint)); "
            + "name one by its fingerprint (e.g. --to \(bob.fingerprint.prefix(19)))")
    }

    @Test func notFoundListsThePeersThatWereSeenOnce() {
        let error = PeerTarget.notFound("carol", role: "receiver", seen: [bob, alice, bob], within: 10)
        #expect(error.description == "no receiver called carol appeared within 10 s; seen: bob (\(bob.fingerprint)), alice (\(alice.fingerprint))")
        #expect(error.exitCode(denial: ExitStatus.denied) == ExitStatus.peerNotFound)
    }

    @Test func notFoundSaysWhenNobodyWasSeen() {
        let error = PeerTarget.notFound(nil, role: "receiver", seen: [], within: 2.5)
        #expect(error.description.hasPrefix("no receiver appeared within 2.5 s; no peers were seen"))
    }

    /// Nobody seen at all: a daemon that does not show this machine's own announcement is named; otherwise
    /// silence proves nothing about the network, so the causes are listed in order, nobody running p2p first.
    @Test func nobodySeenListsTheLikelyCausesInOrderAndBlamesTheDaemonOnlyOnEvidence() {
        let silent = PeerTarget.notFound("bob", role: "receiver", seen: [], within: 5, seesItself: true).description
        #expect(!silent.contains("multicast is not getting through"), "no proof that multicast is blocked")
        #expect(silent.contains("the mDNS daemon works: it shows this machine's own announcement"))
        let nobody = silent.range(of: "nobody runs `p2p receive` with this session ID")
        let multicast = silent.range(of: "multicast does not get through")
        let firewall = silent.range(of: "a firewall drops mDNS (UDP port 5353)")
        #expect(nobody != nil && multicast != nil && firewall != nil, "\(silent)")
        if let nobody, let multicast, let firewall {
            #expect(nobody.lowerBound < multicast.lowerBound && multicast.lowerBound < firewall.lowerBound, "most likely first")
        }
        #expect(silent.contains("--connect HOST:PORT") && silent.contains("p2p doctor"))
        let daemon = PeerTarget.notFound("bob", role: "receiver", seen: [], within: 5, seesItself: false).description
        #expect(daemon.contains("did not show even this machine's own announcement: is avahi-daemon running"))
        #expect(!daemon.contains("multicast"), "the daemon is the suspect, on evidence")
    }

    /// A peer that takes a connection where it was last reached runs: only its announcements are lost.
    @Test func aReachablePeerLeavesOnlyTheNetworkCauses() {
        let causes = PeerTarget.causes(counterpart: nil, evidence: .peerReachable)
        #expect(!causes.contains("nobody runs"))
        #expect(causes.contains("multicast does not get through") && causes.contains("a firewall drops mDNS (UDP port 5353)"))
        #expect(PeerTarget.causes(counterpart: nil, evidence: .none).contains("nobody else runs p2p on this network"))
    }

    /// `/msg zed`: who is here is listed as here; a member who left is not shown as present.
    @Test func msgToNobodyListsWhoIsHereApartFromWhoLeft() {
        let text = PrivateLineTarget.nobodyCalled("zed", connected: [bob], away: [alice])
        #expect(text == "nobody called zed is in this chat; here: \(PeerTarget.label(bob)); "
                + "away (a /msg waits for them): \(PeerTarget.label(alice)); nothing was sent")
        #expect(PrivateLineTarget.nobodyCalled("zed", connected: [], away: [alice]).hasPrefix("nobody called zed is in this chat; nobody is here now; away"))
    }

    /// The library's typed errors (`PeerFindError`) read as the lines and exit codes `--to` always had.
    @Test func theLibrarysErrorsReadAsTheCommandsLines() {
        let notFound = ReachError(.notFound(PeerNotFound(query: "carol", seen: [bob, alice], waited: .seconds(10))), role: "peer", counterpart: "p2p chat")
        #expect(notFound == PeerTarget.notFound("carol", role: "peer", seen: [bob, alice], within: 10, counterpart: "p2p chat"))
        #expect(notFound.exitCode(denial: ExitStatus.denied) == ExitStatus.peerNotFound)
        let ambiguous = ReachError(.ambiguous(query: "bob", peers: [bob, alice]))
        #expect(ambiguous == PeerTarget.ambiguous("bob", [bob, alice]))
        #expect(ambiguous.exitCode(denial: ExitStatus.denied) == ExitStatus.peerNotFound)
        #expect(ReachError(.shortPrefixOfUnpinnedKey(query: "fedcba", peer: alice)) == PeerTarget.shortPrefixRefusal("fedcba", alice, pinned: []))
        let pin = KnownPeer(id: bob.id, name: "bob", method: .paired, pinnedAt: .now)
        let conflict = PeerMatcher("bob").nameConflict(in: [PeerInfo(id: alice.id, displayName: "bob", sessionID: "files")], pinned: [pin])!
        #expect(ReachError(.pinnedToAnotherKey(conflict)) == .refused(conflict.refusal.description))
        #expect(ReachError(.connectFailed(target: "bob", address: nil, .timedOut(seconds: 10))) == .failed("bob did not answer within 10 s"))
        #expect(ReachError(.notFound(PeerNotFound(query: nil, seen: [], waited: .milliseconds(2500)))).description
            .hasPrefix("no receiver appeared within 2.5 s; no peers were seen"))
    }

    @Test func aTimeoutNamesWhoDidNotAnswer() {
        #expect(PeerTarget.connectFailure(.timedOut(seconds: 10), to: "bob") == .failed("bob did not answer within 10 s"))
        #expect(PeerTarget.connectFailure(.denied(by: "bob"), to: "bob").exitCode(denial: ExitStatus.denied) == ExitStatus.denied)
    }

    @Test func peerTextIsSanitised() {
        let sneaky = PeerInfo(id: bob.id, displayName: "bo\u{1B}[2Jb", sessionID: "files")
        #expect(!PeerTarget.label(sneaky).contains("\u{1B}"))
    }

    @Test func progressLinesNameWhoIsAwaited() {
        #expect(ConnectProgress.waiting(for: "receiver", named: "bob") == "waiting for a receiver named bob…")
        #expect(ConnectProgress.waiting(for: "receiver", named: nil) == "waiting for a receiver…")
        #expect(ConnectProgress.waiting(for: "opponent", named: "bob") == "waiting for an opponent named bob…")
        #expect(ConnectProgress.connecting(to: "bob") == "connecting to bob…")
        #expect(ConnectProgress.awaitingAnswer(from: "bob") == "waiting for bob to accept…")
    }
}

/// Messages of `send` and `pair` that depend on what happened.
@Suite struct CommandMessageTests {
    @Test func pairingInstructionsNameRealAddresses() {
        let line = PairCommand.instructions(name: "root@vm-v6om", fingerprint: "v6om-2htw-aaaa-bbbb-cccc-dddd",
                                            addresses: ["10.0.0.5", "192.168.1.9"], port: 39111)
        #expect(line.contains("--connect 10.0.0.5:39111 or --connect 192.168.1.9:39111"))
        #expect(line.contains("--to v6om-2htw"))
        #expect(!line.contains("THIS-HOST"))
    }

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

/// Names that resolve (issue 25): a refused key is one answer; a renamed receiver says how to reach it.
@Suite struct NameAnswerTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "files")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")

    /// Issue 25: a key refused for a pinned name is one answer (exit 4, `refused`), never retried, never
    /// "declined".
    @Test func aRefusedKeyIsOneAnswer() {
        let warning = SessionError.untrustedIdentity(name: "bob", pinned: bob.id, presented: alice.id)
        let refused = PeerTarget.connectFailure(warning, to: "bob")
        #expect(refused == .refused(warning.description))
        #expect(refused.description.contains(bob.fingerprint) && refused.description.contains(alice.fingerprint))
        #expect(refused.jsonCode == "refused")
        #expect(refused.exitCode(denial: ExitStatus.denied) == ExitStatus.connectionFailed)
        // The peer refused this machine's key: its own exit status (10), the peer and its address named, the
        // remedy over there with this side's name, and the peer's own words last, sanitized.
        let theyRefusedUs = PeerTarget.connectFailure(.refusedAsUntrusted("the name \"alice\" is pinned to another key on this peer\u{1b}[2J"),
                                                      to: "bob", at: "10.0.0.2:24242", localName: "alice")
        #expect(theyRefusedUs.description == ("bob (10.0.0.2:24242) refused this machine's key: this machine's name is pinned to another key there; "
            + "ask bob to run `p2p trust remove alice` if this machine really has a new key, or pair again with `p2p pair`; nothing was sent "
            + "(bob says: the name \"alice\" is pinned to another key on this peer\u{FFFD}[2J)"))
        guard case .keyRefused(let refusal) = theyRefusedUs else { Issue.record("not a key refusal: \(theyRefusedUs)"); return }
        #expect(refusal.refusal == .keyChanged && refusal.json["reason"] as? String == "key-changed" && refusal.json["address"] as? String == "10.0.0.2:24242")
        #expect(theyRefusedUs.exitCode(denial: ExitStatus.denied) == ExitStatus.keyRefused && ExitStatus.keyRefused.rawValue == 10)
        #expect(theyRefusedUs.jsonCode == "refused-by-peer")
        let byAddress = PeerTarget.connectFailure(.refusedAsUnexpected("expected peer 0011…"), to: "10.0.0.2:24242", at: "10.0.0.2:24242")
        #expect(byAddress.description.hasPrefix("the peer at 10.0.0.2:24242 refused this machine's key: it was looking for another peer at that address"))
        #expect(byAddress.description.hasSuffix("(it says: expected peer 0011…)"))
        #expect(byAddress.exitCode(denial: ExitStatus.denied) == ExitStatus.keyRefused)

        // Which failures are retried is the library's rule (PeerLookupTests).
    }

    @Test func aNameWithSpacesIsQuotedInEveryHint() {
        #expect(PeerTarget.shellWord("bob") == "bob")
        #expect(PeerTarget.shellWord("root@vm-xyof") == "root@vm-xyof")
        #expect(PeerTarget.shellWord("bob #2") == "\"bob #2\"")
        #expect(PeerTarget.shellWord("bob (2)") == "\"bob (2)\"")
        #expect(PeerTarget.shellWord("it's $HOME") == "'it'\\''s $HOME'")
        var renamed = bob
        renamed.displayName = "bob #2"
        #expect(PeerTarget.fromName(renamed) == "\"bob #2\"")
        let error = PeerTarget.notFound("bob #3", role: "receiver", seen: [renamed], within: 10)
        #expect(error.description.contains("did you mean --to \"bob #2\"?"))
    }

    @Test func theHintNamesTheCommandToRunOverThere() {
        #expect(PeerTarget.notFound("carol", role: "peer", seen: [], within: 10, counterpart: "p2p chat").description
            .contains("nobody runs `p2p chat` with this session ID on the network (start it on the other machine)"))
        #expect(PeerTarget.notFound("bob", role: "receiver", seen: [], within: 10).description.contains("nobody runs `p2p receive`"))
    }

    @Test func aRenamedReceiverSaysHowToReachIt() {
        #expect(ConnectProgress.renamed(to: "bob #2", from: "bob")
            == "Now advertised as \"bob #2\": another peer already uses \"bob\" (senders reach this one with --to \"bob #2\")")
    }
}
