import Foundation
import Testing
@testable import P2P

/// Issue 21, item 5: a name is never taken at face value for a key pinned under another name, nothing
/// is pinned over plaintext, and the dials a room makes by itself are capped.
@Suite struct TrustVerdictTests {
    let aliceKey = PeerID(hex: "0123456789abcdef0123456789abcdef")!
    let bobKey = PeerID(hex: "fedcba9876543210fedcba9876543210")!
    let strangerKey = PeerID(hex: "5555555555555555aaaaaaaaaaaaaaaa")!
    var alice: KnownPeer { KnownPeer(id: aliceKey, name: "alice", method: .firstUse, pinnedAt: Date(timeIntervalSince1970: 0)) }
    var bob: KnownPeer { KnownPeer(id: bobKey, name: "bob", method: .paired, pinnedAt: Date(timeIntervalSince1970: 0)) }
    var pins: [KnownPeer] { [alice, bob] }

    @Test func aPinnedKeyUnderItsOwnNameIsKnown() {
        #expect(TrustVerdict(id: aliceKey, name: "alice", pinned: pins) == .known(alice))
        #expect(TrustVerdict(id: aliceKey, name: "alice", pinned: pins).pinnedNameIfDifferent == nil)
    }

    @Test func aPinnedKeyUnderAnUnpinnedNameIsRenamedNotANewcomer() {
        let verdict = TrustVerdict(id: aliceKey, name: "carol", pinned: pins)
        #expect(verdict == .renamed(alice))
        #expect(verdict.pinnedNameIfDifferent == "alice")
        #expect(verdict.pinnedKey == alice)
        #expect(!verdict.isConflict)
    }

    @Test func aPinnedKeyUsingAnotherPinnedNameIsAConflict() {
        let verdict = TrustVerdict(id: aliceKey, name: "bob", pinned: pins)
        #expect(verdict == .conflictingName(pinnedAs: alice, nameOwner: bob))
        #expect(verdict.isConflict)
        #expect(verdict.pinnedNameIfDifferent == "alice")
    }

    @Test func aStrangerUsingAPinnedNameIsAConflictAndAnUnpinnedOneIsUnknown() {
        #expect(TrustVerdict(id: strangerKey, name: "bob", pinned: pins) == .conflict(pinned: bob))
        #expect(TrustVerdict(id: strangerKey, name: "bob", pinned: pins).pinnedKey == nil)
        #expect(TrustVerdict(id: strangerKey, name: "dave", pinned: pins) == .unknown)
        #expect(TrustVerdict(id: strangerKey, name: "bob", pinned: []) == .unknown)
    }

    /// The store gives the same verdicts as the pure rule, from what it has on disk.
    @Test func theStoreJudgesBothWays() throws {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-trust-\(UUID().uuidString)")
        let store = try TrustStore(file: directory.appendingPathComponent("known-peers.json"))
        try store.pin(aliceKey, name: "alice", method: .firstUse)
        try store.pin(bobKey, name: "bob", method: .paired)
        guard case .conflictingName(let pinnedAs, let owner) = store.verdict(for: aliceKey, name: "bob") else {
            Issue.record("alice's key calling itself bob: \(store.verdict(for: aliceKey, name: "bob"))")
            return
        }
        #expect(pinnedAs.id == aliceKey && pinnedAs.name == "alice")
        #expect(owner.id == bobKey)
        guard case .renamed(let pin) = store.verdict(for: bobKey, name: "robert") else {
            Issue.record("bob's key calling itself robert: \(store.verdict(for: bobKey, name: "robert"))")
            return
        }
        #expect(pin.name == "bob" && pin.method == .paired)
    }

    @Test func theHandshakeRefusesAPinnedKeyUsingAnotherPinnedName() {
        let policy = HandshakePolicy(ownID: strangerKey, sessionID: "chat")
        let hello = Hello(peerID: aliceKey, capabilities: .all, datagramPort: 0, datagramToken: 1, datagramKey: Array(repeating: 7, count: 32),
                          displayName: "bob", sessionID: "chat")
        let link = HandshakePolicy.LinkFacts(secure: true, provenPeer: aliceKey, expectedPeer: nil)
        let rejection = policy.check(hello, link: link, trust: .conflictingName(pinnedAs: alice, nameOwner: bob))
        #expect(rejection?.code == .untrustedIdentity)
        #expect(rejection?.failure == .untrustedIdentity(name: "bob", pinned: bobKey, presented: aliceKey))
        // A renamed key passes: it is the key the user pinned, shown with its pinned name.
        #expect(policy.check(hello, link: link, trust: .renamed(alice)) == nil)
    }
}

/// `--to` and `--from` against pins: a pinned key answers to its pinned name only.
@Suite struct PinnedNameMatchingTests {
    let aliceKey = PeerID(hex: "0123456789abcdef0123456789abcdef")!
    let bobKey = PeerID(hex: "fedcba9876543210fedcba9876543210")!
    let strangerKey = PeerID(hex: "5555555555555555aaaaaaaaaaaaaaaa")!
    var pins: [KnownPeer] {
        [KnownPeer(id: aliceKey, name: "alice", method: .firstUse, pinnedAt: Date()),
         KnownPeer(id: bobKey, name: "bob", method: .firstUse, pinnedAt: Date())]
    }

    @Test func aPinnedKeyAnnouncingAnotherNameAnswersToItsPinnedName() {
        let aliceAsCarol = PeerInfo(id: aliceKey, displayName: "carol", sessionID: "chat")
        #expect(PeerMatcher("carol").match(in: [aliceAsCarol], pinned: pins) == .none)
        #expect(PeerMatcher("alice").match(in: [aliceAsCarol], pinned: pins) == .one(aliceAsCarol))
        // Without pins the announced name is all there is.
        #expect(PeerMatcher("carol").match(in: [aliceAsCarol]) == .one(aliceAsCarol))
    }

    @Test func aForgedNamesakeDoesNotMakeThePinnedPeerAmbiguous() {
        let bob = PeerInfo(id: bobKey, displayName: "bob", sessionID: "chat")
        let fakeBob = PeerInfo(id: strangerKey, displayName: "bob", sessionID: "chat")
        let aliceAsBob = PeerInfo(id: aliceKey, displayName: "bob", sessionID: "chat")
        #expect(PeerMatcher("bob").match(in: [fakeBob, aliceAsBob, bob], pinned: pins) == .one(bob))
        #expect(PeerMatcher("bob").match(in: [fakeBob], pinned: pins) == .none)
        // The impostor is still reachable by what it cannot forge: its fingerprint.
        #expect(PeerMatcher(String(strangerKey.fingerprint.prefix(9))).match(in: [fakeBob, bob], pinned: pins) == .one(fakeBob))
    }

    @Test func fromNamesAPeerByItsVerdictExactly() {
        var aliceAsBob = PeerInfo(id: aliceKey, displayName: "bob", sessionID: "files")
        aliceAsBob.trust = .conflictingName(pinnedAs: pins[0], nameOwner: pins[1])
        #expect(!PeerMatcher("bob").names(aliceAsBob))
        #expect(PeerMatcher("alice").names(aliceAsBob))
        var aliceAsCarol = PeerInfo(id: aliceKey, displayName: "carol", sessionID: "files")
        aliceAsCarol.trust = .renamed(pins[0])
        #expect(!PeerMatcher("carol").names(aliceAsCarol), "--from carol must not trust alice's key by the name it chose")
        #expect(PeerMatcher("alice").names(aliceAsCarol))
        var stranger = PeerInfo(id: strangerKey, displayName: "bob", sessionID: "files")
        stranger.trust = .conflict(pinned: pins[1])
        #expect(!PeerMatcher("bob").names(stranger))
        #expect(!PeerMatcher("5555").names(stranger), "a 16-bit prefix names nothing: such a key is ground in seconds")
        #expect(PeerMatcher(strangerKey.hex).names(stranger), "the full ID names the key itself")
        var newcomer = PeerInfo(id: strangerKey, displayName: "dave", sessionID: "files")
        newcomer.trust = .unknown
        #expect(PeerMatcher("dave").names(newcomer))
        #expect(!PeerMatcher("Dave").names(newcomer), "a trust decision does not fold case")
        #expect(!PeerMatcher("dav").names(newcomer))
    }
}

/// The room's dial limiter, driven by a clock passed in: no sockets, no sleeps.
@Suite struct DialLimiterTests {
    let start = ContinuousClock.now
    func peer(_ n: Int) -> PeerID { PeerID(hex: String(format: "%032x", n))! }

    @Test func atMostNDialsAreUnderWayAtOnce() {
        var limiter = DialLimiter(limits: .init(concurrent: 2, concurrentNew: 2))
        #expect(limiter.request(peer(1), isNew: true, now: start) == .dial)
        #expect(limiter.request(peer(2), isNew: true, now: start) == .dial)
        #expect(limiter.request(peer(3), isNew: true, now: start) == .held(.tooManyAtOnce(limit: 2), report: true))
        limiter.finished(peer(1), failed: false, now: start)
        #expect(limiter.request(peer(3), isNew: true, now: start) == .dial)
        #expect(Set(limiter.inFlight.keys) == [peer(2), peer(3)])
    }

    /// New keys never take every slot: pinned and accepted keys (members coming back) always find one.
    @Test func newKeysLeaveSlotsForKnownKeys() {
        var limiter = DialLimiter(limits: .init(concurrent: 3, concurrentNew: 2))
        #expect(limiter.request(peer(1), isNew: true, now: start) == .dial)
        #expect(limiter.request(peer(2), isNew: true, now: start) == .dial)
        #expect(limiter.request(peer(3), isNew: true, now: start) == .held(.tooManyAtOnce(limit: 2), report: true))
        #expect(limiter.request(peer(4), isNew: false, now: start) == .dial)
        #expect(limiter.request(peer(5), isNew: false, now: start) == .held(.tooManyAtOnce(limit: 3), report: false))
    }

    /// A failed dial backs its peer off (doubling); failures in a row slow new keys to one at a time,
    /// never known keys; a dial that succeeds ends the slow-down.
    @Test func failedDialsBackOffAndSlowNewKeysDown() {
        var limiter = DialLimiter(limits: .init(concurrent: 8, concurrentNew: 6, failuresBeforeSlowing: 2, backOff: .seconds(2)))
        #expect(limiter.request(peer(1), isNew: true, now: start) == .dial)
        limiter.finished(peer(1), failed: true, now: start)
        #expect(limiter.request(peer(1), isNew: true, now: start + .seconds(1)) == .held(.backingOff(until: start + .seconds(2)), report: false))
        #expect(limiter.request(peer(1), isNew: true, now: start + .seconds(2)) == .dial)
        limiter.finished(peer(1), failed: true, now: start + .seconds(2))
        // Its second failure in a row: 4 s.
        #expect(limiter.request(peer(1), isNew: true, now: start + .seconds(5)) == .held(.backingOff(until: start + .seconds(6)), report: false))
        #expect(limiter.consecutiveFailures == 2)
        #expect(limiter.isSlowed)
        #expect(limiter.request(peer(2), isNew: true, now: start + .seconds(6)) == .dial)
        #expect(limiter.request(peer(3), isNew: true, now: start + .seconds(6)) == .held(.failingDials(failures: 2), report: true))
        #expect(limiter.request(peer(4), isNew: false, now: start + .seconds(6)) == .dial, "a known key is not slowed by a flood")
        limiter.finished(peer(4), failed: false, now: start + .seconds(7))
        #expect(!limiter.isSlowed)
        #expect(limiter.request(peer(3), isNew: true, now: start + .seconds(7)) == .dial)
    }

    /// An answer is not a failure (a person said no), and forgotten back-offs are bounded.
    @Test func answersDoNotCountAndRememberedFailuresAreBounded() {
        var limiter = DialLimiter(limits: .init(concurrent: 100, concurrentNew: 100, failuresBeforeSlowing: 1000, rememberedFailures: 10))
        #expect(limiter.request(peer(0), isNew: true, now: start) == .dial)
        limiter.finished(peer(0), failed: false, now: start)
        #expect(limiter.consecutiveFailures == 0)
        for n in 1...20 {
            #expect(limiter.request(peer(n), isNew: true, now: start + .seconds(n)) == .dial)
            limiter.finished(peer(n), failed: true, now: start + .seconds(n))
        }
        // Only the 10 latest back-offs are remembered: peer 1's (the first to end) was forgotten.
        #expect(limiter.request(peer(1), isNew: true, now: start + .seconds(21)) == .dial)
        if case .held(.backingOff, _) = limiter.request(peer(20), isNew: true, now: start + .seconds(21)) {} else {
            Issue.record("the latest failure must still back off")
        }
    }

    @Test func aFloodIsReportedOnceUntilAQuietSpell() {
        var limiter = DialLimiter(limits: .init(concurrent: 1, concurrentNew: 1, quietSpell: .seconds(60)))
        #expect(limiter.request(peer(0), isNew: true, now: start) == .dial)
        var reports = 0
        for n in 1...500 {
            if case .held(_, report: true) = limiter.request(peer(n), isNew: true, now: start + .milliseconds(n * 10)) { reports += 1 }
        }
        #expect(reports == 1)
        #expect(limiter.heldSinceReport == 500)
        // A new flood after a whole quiet minute is news again.
        if case .held(_, let report) = limiter.request(peer(9999), isNew: true, now: start + .seconds(5 + 61)) {
            #expect(report)
        } else {
            Issue.record("the slot is still taken: the request must be held")
        }
    }

    @Test func askingTwiceForAPeerUnderWayIsNeitherADialNorAReport() {
        var limiter = DialLimiter(limits: .init(concurrent: 4, concurrentNew: 4))
        #expect(limiter.request(peer(1), isNew: true, now: start) == .dial)
        #expect(limiter.request(peer(1), isNew: true, now: start) == .held(.tooManyAtOnce(limit: 4), report: false))
        #expect(limiter.inFlight.count == 1)
    }
}

/// The verdicts with real sessions: the same key under another name, and plaintext.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HostileIdentitySessionTests {
    private func temporaryStore() throws -> TrustStore {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-trust-\(UUID().uuidString)")
        return try TrustStore(file: directory.appendingPathComponent("known-peers.json"))
    }

    private func session(_ name: String, identity: Identity, configure: (inout SessionConfiguration) -> Void = { _ in }) async throws -> Session {
        var configuration = SessionConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.acceptsConnectionsByDefault = true
        configure(&configuration)
        let session = Session(sessionID: "test", displayName: name, identity: identity, configuration: configuration)
        try await session.start()
        return session
    }

    @Test func aPinnedKeyCallingItselfByAnotherPinnedNameIsRefusedAndReportedByItsPinnedName() async throws {
        let store = try temporaryStore()
        let me = try await session("me", identity: .ephemeral()) { $0.trustStore = store }
        let aliceIdentity = Identity.ephemeral()
        let alice = try await session("alice", identity: aliceIdentity)
        let bob = try await session("bob", identity: .ephemeral())
        try await me.connect(to: alice.endpoint)
        try await me.connect(to: bob.endpoint)
        #expect(Set(store.all.map(\.name)) == ["alice", "bob"])
        await alice.close()

        let events = EventRecorder(me)
        let aliceAsBob = try await session("bob", identity: aliceIdentity)
        await #expect(throws: SessionError.refusedAsUntrusted("the name \"bob\" is pinned to another key on this peer; pair again (p2p pair)")) {
            try await aliceAsBob.connect(to: me.endpoint)
        }
        let refused = try await events.waitFor("me refusing alice's key as bob") {
            if case .refused(let peer, _) = $0 { peer.id == aliceIdentity.peerID } else { false }
        }
        guard case .refused(let peer, .untrustedIdentity(let name, let pinned, let presented)) = refused else {
            Issue.record("unexpected refusal \(refused)")
            return
        }
        #expect(name == "bob" && pinned == bob.peerID && presented == aliceIdentity.peerID)
        #expect(peer.trust.pinnedNameIfDifferent == "alice", "the report knows the key is pinned as alice")
        #expect(!me.connectedPeers.contains { $0.id == aliceIdentity.peerID })
        #expect(Set(store.all.map(\.name)) == ["alice", "bob"], "no pin changed")
        await me.close(); await bob.close(); await aliceAsBob.close()
    }

    @Test func aPinnedKeyUnderANewNameConnectsAsRenamedAndKeepsItsPin() async throws {
        let store = try temporaryStore()
        let me = try await session("me", identity: .ephemeral()) { $0.trustStore = store }
        let aliceIdentity = Identity.ephemeral()
        let alice = try await session("alice", identity: aliceIdentity)
        try await me.connect(to: alice.endpoint)
        await alice.close()
        try await waitUntil("alice gone") { me.connectedPeers.isEmpty }

        let aliceAsCarol = try await session("carol", identity: aliceIdentity)
        let peer = try await me.connect(to: aliceAsCarol.endpoint)
        #expect(peer.displayName == "carol")
        guard case .renamed(let pin) = peer.trust else {
            Issue.record("alice's key as carol: \(peer.trust)")
            return
        }
        #expect(pin.name == "alice")
        #expect(store.all.map(\.name) == ["alice"], "the pin keeps its name; carol is pinned to nobody")
        await me.close(); await aliceAsCarol.close()
    }

    @Test func aPlaintextPeerIsUnauthenticatedAndNeverPinned() async throws {
        let store = try temporaryStore()
        let me = try await session("me", identity: .ephemeral()) {
            $0.trustStore = store
            $0.transportSecurity = .insecure
        }
        let other = try await session("bob", identity: .ephemeral()) { $0.transportSecurity = .insecure }
        let peer = try await me.connect(to: other.endpoint)
        #expect(peer.trust == .unauthenticated)
        #expect(me.connectedPeers.first?.trust == .unauthenticated)
        #expect(store.all.isEmpty)
        await me.close(); await other.close()
    }
}
