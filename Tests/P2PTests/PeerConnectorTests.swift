import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import P2P

/// `PeerConnector` and its words (`ReachWording`, `ReachError`): what a person reads when the peer asked
/// for is ambiguous, pinned to another key, known only by its last address, not found, or refuses.
/// The words are driven from the library's typed outcomes, without sockets; the dial by address over TLS
/// on loopback, where the handshake and the answer matter.
@Suite struct PeerConnectorTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "files")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")

    @Test func severalFittingIsAmbiguousListingThemByID() {
        let otherBob = PeerInfo(id: PeerID(hex: "aaaa0000000000000000000000000000")!, displayName: "Bob", sessionID: "files")
        let error = ReachError(.ambiguous(query: "bob", peers: [otherBob, bob]))
        #expect(error.jsonCode == "ambiguous")
        #expect(error.description == "2 peers fit --to bob: bob (\(bob.fingerprint)), Bob (\(otherBob.fingerprint)); "
            + "name one by its fingerprint (e.g. --to \(bob.fingerprint.prefix(19)))")
    }

    /// Issue 34, row 6: a short prefix of a key that is not pinned is refused, with what to do instead.
    @Test func aShortPrefixOfAKeyThatIsNotPinnedIsRefusedWithWhatToDo() {
        let refusal = ReachError(.shortPrefixOfUnpinnedKey(query: "fedcba", peer: alice))
        #expect(refusal == .refused("--to fedcba fits alice (\(alice.fingerprint)) only by the start of its ID or fingerprint, and that key is not pinned: "
            + "anyone can make a key that starts that way, so a short prefix names only a pinned peer; "
            + "give its full fingerprint (--to \(alice.fingerprint)) after comparing it with the peer's p2p id, or pin it first (p2p pair)"))
        #expect(refusal.jsonCode == "refused")
    }

    /// The name asked for is pinned, and only another key announces it: the warning with both fingerprints.
    @Test func aPinnedNameUsedByAnotherKeyIsRefusedWithBothFingerprints() throws {
        let pin = KnownPeer(id: bob.id, name: "bob", method: .paired, pinnedAt: .now)
        let conflict = try #require(PeerMatcher("bob").nameConflict(in: [PeerInfo(id: alice.id, displayName: "bob", sessionID: "files")], pinned: [pin]))
        let error = ReachError(.pinnedToAnotherKey(conflict))
        #expect(error == .refused(conflict.refusal.description))
        #expect(error.description.contains(bob.fingerprint) && error.description.contains(alice.fingerprint))
    }

    /// Multicast lost: the pinned peer is dialled where it was last reached, and the line says where.
    @Test func aPinnedPeerNotAnnouncedIsTriedAtItsLastAddressesAndSaysSo() throws {
        let known = KnownPeer(id: bob.id, name: "bob", method: .paired, pinnedAt: .now, lastAddresses: ["10.0.0.2:24242"])
        let words = ReachWording()
        #expect(words.line(for: .tryingLastAddresses(known, known.lastEndpoints), query: "bob", timeout: 10)
            == "bob is not announced here; trying where it was last reached: 10.0.0.2:24242")
        let added = try #require(Endpoint("10.0.0.3:24242"))
        #expect(words.line(for: .tryingAddedAddresses(query: "carol", [added]), query: "carol", timeout: 10)
            == "carol is not announced here; trying the addresses added by hand: 10.0.0.3:24242")
        #expect(words.line(for: .notTheNamedPeer(added, got: PeerText("dave")), query: "carol", timeout: 10) == "10.0.0.3:24242 is dave, not carol")
    }

    @Test func notFoundNamesWhoWasSeenOnceAndTheNearestName() {
        let error = ReachWording().notFound("bobb", seen: [bob, alice, bob], within: 10)
        #expect(error == .notFound("no receiver called bobb appeared within 10 s; seen: bob (\(bob.fingerprint)), alice (\(alice.fingerprint)); did you mean --to bob?"))
        #expect(ReachError(.notFound(PeerNotFound(query: "carol", seen: [bob], waited: .seconds(10))), wording: ReachWording(role: "peer"))
            == .notFound("no peer called carol appeared within 10 s; seen: bob (\(bob.fingerprint))"))
    }

    /// Nobody seen: the causes in order, the command to run over there, and the daemon blamed only on evidence.
    @Test func nobodySeenListsTheCausesInOrderAndBlamesTheDaemonOnlyOnEvidence() {
        let chat = ReachWording(role: "peer", counterpart: "p2p chat")
        let silent = chat.notFound("bob", seen: [], within: 2.5, seesItself: true).description
        #expect(silent.hasPrefix("no peer called bob appeared within 2.5 s; no peers were seen at all (the mDNS daemon works: it shows this machine's own announcement); "))
        let nobody = silent.range(of: "nobody runs `p2p chat` with this session ID on the network (start it on the other machine)")
        let multicast = silent.range(of: "multicast does not get through")
        let firewall = silent.range(of: "a firewall drops mDNS (UDP port 5353)")
        if let nobody, let multicast, let firewall {
            #expect(nobody.lowerBound < multicast.lowerBound && multicast.lowerBound < firewall.lowerBound, "most likely first")
        } else {
            Issue.record("a cause is missing: \(silent)")
        }
        #expect(silent.hasSuffix("--connect HOST:PORT skips discovery (the other side's `p2p chat` prints it), and a peer reached once is then found by name. `p2p doctor` checks each step"))
        let daemon = chat.notFound("bob", seen: [], within: 5, seesItself: false).description
        #expect(daemon.contains("did not show even this machine's own announcement: is avahi-daemon running") && !daemon.contains("multicast"))
        #expect(!ReachWording.causes(counterpart: nil, evidence: .peerReachable).contains("nobody"))
    }

    /// Refusals and silence, each its own case: a denial, a key warning, this machine's key refused over there.
    @Test func aRefusalSaysWhoRefusedWhatAndWhatToDo() {
        let words = ReachWording(localName: "alice")
        #expect(words.connectFailure(.timedOut(seconds: 10), to: "bob") == .failed("bob did not answer within 10 s"))
        #expect(words.connectFailure(.notAnswered(seconds: 30), to: "bob") == .denied("bob did not accept the connection within 30 s; nothing was sent"))
        #expect(words.connectFailure(.denied(by: "bob"), to: "bob") == .denied(SessionError.denied(by: "bob").description))
        let warning = SessionError.untrustedIdentity(name: "bob", pinned: bob.id, presented: alice.id)
        #expect(words.connectFailure(warning, to: "bob") == .refused(warning.description))
        let theyRefusedUs = words.connectFailure(.refusedAsUntrusted("the name \"alice\" is pinned to another key on this peer\u{1b}[2J"),
                                                 to: "bob", at: "10.0.0.2:24242")
        #expect(theyRefusedUs.description == "bob (10.0.0.2:24242) refused this machine's key: this machine's name is pinned to another key there; "
            + "ask bob to run `p2p trust remove alice` if this machine really has a new key, or pair again with `p2p pair`; nothing was sent "
            + "(bob says: the name \"alice\" is pinned to another key on this peer\u{FFFD}[2J)")
        guard case .keyRefused(let refusal) = theyRefusedUs else { Issue.record("not a key refusal: \(theyRefusedUs)"); return }
        #expect(refusal.json["reason"] as? String == "key-changed" && refusal.json["address"] as? String == "10.0.0.2:24242")
        #expect(theyRefusedUs.jsonCode == "refused-by-peer")
        let byAddress = ReachWording().connectFailure(.refusedAsUnexpected("expected peer 0011…"), to: "10.0.0.2:24242", at: "10.0.0.2:24242")
        #expect(byAddress.description.hasPrefix("the peer at 10.0.0.2:24242 refused this machine's key: it was looking for another peer at that address"))
        #expect(byAddress.description.hasSuffix("(it says: expected peer 0011…)"))
        #expect(ReachError(.connectFailed(target: "bob", address: nil, .timedOut(seconds: 10))) == .failed("bob did not answer within 10 s"))
    }

    @Test func progressLinesNameWhoIsAwaitedAndPeerTextIsSanitized() {
        #expect(ReachWording().waiting(named: "bob") == "waiting for a receiver named bob…")
        #expect(ReachWording(role: "opponent").waiting(named: nil) == "waiting for an opponent…")
        #expect(ReachWording().line(for: .waiting(for: nil), query: nil, timeout: 10, all: true) == "waiting for receivers…")
        #expect(ReachWording.connecting(to: "bo\u{1B}[2Jb") == "connecting to bo\u{FFFD}[2Jb…")
        #expect(ReachWording.awaitingAnswer(from: "bob") == "waiting for bob to accept…")
        var renamed = bob
        renamed.displayName = "bob #2"
        #expect(ReachWording().line(for: .nearMiss(renamed, query: "bob #3"), query: "bob #3", timeout: 2.5)
            == "bob #2 (\(bob.fingerprint)) is here: did you mean --to \"bob #2\"? Still waiting for bob #3 (up to 2.5 s)…")
        #expect(ReachWording.renamed(to: "bob #2", from: "bob")
            == "Now advertised as \"bob #2\": another peer already uses \"bob\" (senders reach this one with --to \"bob #2\")")
    }

    @Test func aNameWithSpacesIsQuotedForAShell() {
        #expect(ReachWording.shellWord("root@vm-xyof") == "root@vm-xyof")
        #expect(ReachWording.shellWord("bob (2)") == "\"bob (2)\"")
        #expect(ReachWording.shellWord("it's $HOME") == "'it'\\''s $HOME'")
        #expect(ReachWording.duration(10) == "10 s" && ReachWording.duration(2.5) == "2.5 s")
    }

    /// An address that is not HOST:PORT is refused before anything is dialled.
    @Test func anAddressThatIsNotHostPortIsAUsageError() {
        let session = Session(sessionID: "files", displayName: "alice", identity: .ephemeral())
        #expect(throws: ReachError.badEndpoint(Endpoint.connectUsage("bob"))) { try PeerConnector(session: session, address: "bob").locator(all: false) }
    }

    /// Over TLS on loopback: the peer at an address is connected, each step said; one that declines is
    /// `denied`, in the words a person reads.
    @Test func anAddressIsDialledAndADenialIsSaid() async throws {
        var accepting = SessionConfiguration()
        accepting.acceptsConnectionsByDefault = true
        let bob = Session(sessionID: "files", displayName: "bob", identity: .ephemeral(), configuration: accepting)
        let carol = Session(sessionID: "files", displayName: "carol", identity: .ephemeral())
        let alice = Session(sessionID: "files", displayName: "alice", identity: .ephemeral())
        carol.setConnectionRequestHandler { _ in false }
        try await bob.start()
        try await carol.start()
        try await alice.start()
        let lines = NIOLockedValueBox<[String]>([])
        let address = "127.0.0.1:\(try #require(bob.localPort))"
        let found = try await PeerConnector(session: alice, address: address) { _, line in lines.withLockedValue { $0.append(line) } }.connect()
        #expect(found.id == bob.peerID && alice.connectedPeer(bob.peerID) != nil)
        #expect(lines.withLockedValue { $0 }.first == "connecting to \(address)…")
        let carolAt = "127.0.0.1:\(try #require(carol.localPort))"
        await #expect(throws: ReachError.denied(SessionError.denied(by: "carol").description)) {
            try await PeerConnector(session: alice, address: carolAt).connect()
        }
        await alice.close()
        await bob.close()
        await carol.close()
    }
}
