import Foundation
import Testing
@testable import P2P

/// The rules `--to` finds a peer by, as the library decides them from the peers seen, the pins and the
/// typed name: no sockets.
@Suite struct PeerLookupTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "files")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")
    let otherBob = PeerInfo(id: PeerID(hex: "aaaa0000000000000000000000000000")!, displayName: "bob #2", sessionID: "files")
    var everyone: [PeerInfo] { [bob, alice] }

    func pin(_ peer: PeerInfo, as name: String, at addresses: [String]? = nil) -> KnownPeer {
        KnownPeer(id: peer.id, name: name, method: .paired, pinnedAt: .now, lastAddresses: addresses)
    }

    @Test func anExactNameInAnyCaseFindsThePeer() throws {
        #expect(PeerLookup("bob", pins: []).decide(among: everyone) == .found(bob))
        #expect(PeerLookup("ALICE", pins: []).decide(among: everyone) == .found(alice))
        #expect(try PeerLookup("bob", pins: []).resolve(among: everyone) == bob)
    }

    @Test func aNameNobodyHasIsNotAnErrorButNamesTheNearestPeer() throws {
        #expect(PeerLookup("bobb", pins: []).decide(among: everyone) == .nobody(nearest: bob))
        #expect(PeerLookup("carol", pins: []).decide(among: everyone) == .nobody(nearest: nil))
        #expect(try PeerLookup("carol", pins: []).resolve(among: everyone) == nil)
    }

    /// Two peers called bob (DNS-SD renamed the second "bob #2"): `bob` fits both, and a guess could reach
    /// the wrong one. The outcome lists them by ID, so every run says the same.
    @Test func severalPeersWithTheNameAreAmbiguousListedByID() {
        let outcome = PeerLookup("bob", pins: []).decide(among: [bob, alice, otherBob])
        #expect(outcome == .ambiguous([bob, otherBob].sorted { $0.id < $1.id }))
        #expect(throws: PeerFindError.ambiguous(query: "bob", peers: [bob, otherBob])) {
            try PeerLookup("bob", pins: []).resolve(among: [bob, alice, otherBob])
        }
        // The renamed one in full names one.
        #expect(PeerLookup("bob #2", pins: []).decide(among: [bob, otherBob]) == .found(otherBob))
    }

    /// A pinned key answers to its pinned name only, whatever it calls itself now.
    @Test func aPinnedKeyAnswersToItsPinnedNameOnly() {
        let pins = [pin(bob, as: "robert")]
        #expect(PeerLookup("robert", pins: pins).decide(among: everyone) == .found(bob))
        #expect(PeerLookup("bob", pins: pins).decide(among: everyone) == .nobody(nearest: nil))
    }

    /// `bob` is pinned, and only another key announces "bob": it would be refused, so the lookup says so
    /// at once instead of waiting or dialling.
    @Test func aPinnedNameAnnouncedByAnotherKeyIsSaidAtOnce() throws {
        let pins = [pin(bob, as: "bob")]
        let impostor = PeerInfo(id: alice.id, displayName: "bob", sessionID: "files")
        let outcome = PeerLookup("bob", pins: pins).decide(among: [impostor])
        #expect(outcome == .pinnedToAnotherKey(PeerMatcher.NameConflict(pinned: pins[0], offered: impostor)))
        // Over plaintext keys prove nothing, so nothing is refused for a name.
        #expect(PeerLookup("bob", pins: pins, insecure: true).decide(among: [impostor]) == .nobody(nearest: nil))
        // The pinned key back: found, the impostor ignored.
        #expect(PeerLookup("bob", pins: pins).decide(among: [impostor, bob]) == .found(bob))
    }

    /// Issue 34, row 6: a prefix authorizes nothing. A short prefix picks a pinned key only; a key that
    /// is not pinned needs 80 bits of its fingerprint, or a pairing code that proves it.
    @Test func aShortPrefixPicksOnlyAPinnedKey() {
        let short = String(alice.fingerprint.prefix(4))
        #expect(PeerLookup(short, pins: []).decide(among: everyone) == .shortPrefixOfUnpinnedKey(alice))
        #expect(PeerLookup("fedcba", pins: []).decide(among: everyone) == .shortPrefixOfUnpinnedKey(alice))
        #expect(throws: PeerFindError.shortPrefixOfUnpinnedKey(query: short, peer: alice)) {
            try PeerLookup(short, pins: []).resolve(among: everyone)
        }
        // Pinned: the prefix picks it.
        #expect(PeerLookup(short, pins: [pin(alice, as: "alice")]).decide(among: everyone) == .found(alice))
        // Another key pinned: the stranger is still refused.
        #expect(PeerLookup(short, pins: [pin(bob, as: "bob")]).decide(among: everyone) == .shortPrefixOfUnpinnedKey(alice))
        // Enough of the fingerprint identifies the key.
        #expect(PeerLookup(String(alice.fingerprint.prefix(19)), pins: []).decide(among: everyone) == .found(alice))
        #expect(PeerLookup(alice.id.hex, pins: []).decide(among: everyone) == .found(alice))
        // A pairing code proves the key; plaintext proves nothing either way.
        #expect(PeerLookup(short, pins: [], anyKeyByShortPrefix: true).decide(among: everyone) == .found(alice))
        #expect(PeerLookup(short, pins: [], insecure: true).decide(among: everyone) == .found(alice))
        // A name is a name: the usual first contact.
        #expect(!PeerLookup("alice", pins: []).isShortPrefixOfUnpinnedKey(alice))
    }

    /// A pinned peer the browse does not show is dialled where it was last reached: the lookup finds it
    /// among the pins by its pinned name or a prefix, and says when a prefix fits several pins.
    @Test func thePinnedPeerToDialAtItsKnownAddresses() throws {
        let pins = [pin(bob, as: "bob", at: ["10.0.0.2:4242"]), pin(alice, as: "alice")]
        #expect(try PeerLookup("bob", pins: pins).pinnedPeer()?.lastEndpoints == [Endpoint(host: "10.0.0.2", port: 4242)])
        #expect(try PeerLookup(String(alice.fingerprint.prefix(4)), pins: pins).pinnedPeer()?.id == alice.id)
        #expect(try PeerLookup("carol", pins: pins).pinnedPeer() == nil)
        let twins = [pin(bob, as: "x"), pin(PeerInfo(id: PeerID(hex: "0123000000000000000000000000000f")!, displayName: "y", sessionID: ""), as: "y")]
        #expect(throws: PeerFindError.self) { try PeerLookup("0123", pins: twins).pinnedPeer() }
        #expect(try PeerLookup("bob", pins: []).pinnedPeer() == nil)
    }

    /// Nobody fitting: the peers seen once each, the nearest name, and, when nobody at all was seen, the
    /// likely causes in order (the daemon alone when it did not show this machine's own announcement).
    @Test func notFoundCarriesWhoWasSeenAndTheLikelyCauses() {
        let seen = PeerNotFound(query: "bobb", seen: [bob, alice, bob], waited: .seconds(10))
        #expect(seen.seen == [bob, alice])
        #expect(seen.nearest == bob)
        #expect(seen.likelyCauses.isEmpty)
        let silent = PeerNotFound(query: "bob", seen: [], waited: .seconds(5), seesItself: true)
        #expect(silent.likelyCauses == [.nobodyRuns, .multicastBlocked, .firewallDropsMDNS])
        #expect(PeerNotFound(query: nil, seen: [], waited: .seconds(5), seesItself: false).likelyCauses == [.daemonNotWorking])
        #expect(NobodySeen.causes(evidence: .peerReachable) == [.multicastBlocked, .firewallDropsMDNS])
        #expect(PeerFindError.notFound(silent).description.contains("multicast does not get through"))
    }

    /// Issue 25: only a stale record (refused at every address, another key at the old address) is
    /// retried; a key refused or a denial is the peer's answer, which asking again only repeats.
    @Test func onlyAStaleRecordIsRetriedAndAnAnswerIsFinal() {
        let warning = SessionError.untrustedIdentity(name: "bob", pinned: bob.id, presented: alice.id)
        #expect(!PeerLocator.looksLikeAStaleRecord(warning))
        #expect(!PeerLocator.looksLikeAStaleRecord(.denied(by: "bob")))
        #expect(!PeerLocator.looksLikeAStaleRecord(.timedOut(seconds: 10)))
        let refusedEverywhere = [ConnectAttempt(address: "10.0.0.2:4242", failure: .refused), ConnectAttempt(address: "10.0.0.3:4242", failure: .refused)]
        #expect(PeerLocator.looksLikeAStaleRecord(.connectFailed(peer: "bob", attempts: refusedEverywhere)))
        #expect(PeerLocator.looksLikeAStaleRecord(.unexpectedPeer(expected: bob.id, got: alice.id)))
        #expect(PeerFindError.connectFailed(target: "bob", address: nil, warning).isAnswer)
        #expect(PeerFindError.connectFailed(target: "bob", address: nil, .denied(by: "bob")).isAnswer)
        #expect(!PeerFindError.connectFailed(target: "bob", address: nil, .timedOut(seconds: 10)).isAnswer)
    }
}
