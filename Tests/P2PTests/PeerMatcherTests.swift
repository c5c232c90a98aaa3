import Foundation
import Testing
@testable import P2P

/// `--to` as people type it: names in any case, ID and fingerprint prefixes, and what is too vague.
@Suite struct PeerMatcherTests {
    let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "Bob", sessionID: "files")
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")
    let otherAlice = PeerInfo(id: PeerID(hex: "fe00000000000000000000000000000f")!, displayName: "Alice", sessionID: "files")
    var everyone: [PeerInfo] { [bob, alice] }

    @Test func aDisplayNameMatchesInAnyCase() {
        #expect(PeerMatcher("bob").match(in: everyone) == .one(bob))
        #expect(PeerMatcher("BOB").match(in: everyone) == .one(bob))
        #expect(PeerMatcher("  alice ").match(in: everyone) == .one(alice))
    }

    @Test func aNearNameIsSuggestedWhenNothingFits() {
        #expect(PeerMatcher("bobb").match(in: everyone) == .none)
        #expect(PeerMatcher("bobb").suggestion(among: everyone) == bob)
        #expect(PeerMatcher("alcie").suggestion(among: everyone) == alice)  // two letters swapped: two changes
        #expect(PeerMatcher("alice-laptop").suggestion(among: everyone) == alice)  // it starts with her name
        #expect(PeerMatcher("carol").suggestion(among: everyone) == nil)
        // Equally near to two peers: no guess.
        #expect(PeerMatcher("alicf").suggestion(among: [alice, otherAlice]) == nil)
        // A pinned key is suggested by its pinned name only.
        let pinnedAsRobert = KnownPeer(id: bob.id, name: "robert", method: .paired, pinnedAt: .now)
        #expect(PeerMatcher("bobb").suggestion(among: everyone, pinned: [pinnedAsRobert]) == nil)
        #expect(PeerMatcher("robret").suggestion(among: everyone, pinned: [pinnedAsRobert]) == bob)
    }

    @Test func aPeerIDPrefixMatchesFromFourDigits() {
        #expect(PeerMatcher("0123").match(in: everyone) == .one(bob))
        #expect(PeerMatcher("FEDCBA98").match(in: everyone) == .one(alice))
        #expect(PeerMatcher(bob.id.hex).match(in: everyone) == .one(bob))
        #expect(PeerMatcher("012").match(in: everyone) == .none)
    }

    @Test func aFingerprintPrefixMatchesWithOrWithoutDashes() {
        let fingerprint = alice.fingerprint  // groups of four: "xxxx-yyyy-…"
        let twoGroups = String(fingerprint.prefix(9))
        #expect(twoGroups.contains("-"))
        #expect(PeerMatcher(twoGroups).match(in: everyone) == .one(alice))
        #expect(PeerMatcher(twoGroups.replacingOccurrences(of: "-", with: "")).match(in: everyone) == .one(alice))
        #expect(PeerMatcher(fingerprint.uppercased()).match(in: everyone) == .one(alice))
        #expect(PeerMatcher(String(fingerprint.prefix(6))).match(in: everyone) == .one(alice))  // "xxxx-y"
    }

    /// Issue 34, row 6: a stranger grinds a key whose ID or fingerprint starts with the 4 characters a
    /// person typed in seconds, so `--from` takes a prefix only from 80 bits on (20 hex digits, 16
    /// fingerprint characters); shorter ones still pick among peers present (`--to`), as a short prefix.
    @Test func aPrefixShorterThan80BitsAuthorizesNothing() {
        let fingerprint = alice.fingerprint.replacingOccurrences(of: "-", with: "")
        #expect(!PeerMatcher("fedc").names(alice))
        #expect(!PeerMatcher(String(alice.id.hex.prefix(19))).names(alice))
        #expect(PeerMatcher(String(alice.id.hex.prefix(20))).names(alice))
        #expect(!PeerMatcher(String(alice.fingerprint.prefix(9))).names(alice))
        #expect(!PeerMatcher(String(fingerprint.prefix(15))).names(alice))
        #expect(PeerMatcher(String(fingerprint.prefix(16))).names(alice))
        #expect(PeerMatcher(String(alice.fingerprint.prefix(19))).names(alice))  // four groups, with dashes
        #expect(PeerMatcher(alice.fingerprint).names(alice))
        #expect(PeerMatcher(alice.id.hex).names(alice))
        #expect(!PeerMatcher(String(bob.id.hex.prefix(20))).names(alice))
        // How each query fits, for `--to`: a short prefix is told apart from a name and an identifier.
        #expect(PeerMatcher("fedc").fit(alice) == .shortPrefix)
        #expect(PeerMatcher("ALICE").fit(alice) == .name)
        #expect(PeerMatcher(alice.fingerprint).fit(alice) == .identifier)
        #expect(PeerMatcher("0123").fit(alice) == nil)
    }

    @Test func twoPeersWithOneNameAreAmbiguous() {
        let twin = PeerInfo(id: PeerID(hex: "aaaa0000000000000000000000000000")!, displayName: "bob", sessionID: "files")
        let both = PeerMatcher("BoB").match(in: [bob, alice, twin])
        #expect(both == .ambiguous([bob, twin]))
    }

    @Test func namesThatDifferOnlyInCaseAreAmbiguous() {
        #expect(PeerMatcher("Alice").match(in: [alice, otherAlice]) == .ambiguous([alice, otherAlice]))
    }

    @Test func aNameRenamedByDNSSDStillFitsTheNameItAskedFor() {
        var renamed = otherAlice
        renamed.displayName = "alice (2)"
        #expect(PeerMatcher("alice").match(in: [alice, renamed]) == .ambiguous([alice, renamed]))
        #expect(PeerMatcher("Alice (2)").match(in: [alice, renamed]) == .one(renamed))
        #expect(PeerMatcher("alice").match(in: [bob, renamed]) == .one(renamed))  // the first alice has gone
        #expect(PeerMatcher.withoutConflictSuffix("bob (12)") == "bob")
        #expect(PeerMatcher.withoutConflictSuffix("bob (x)") == "bob (x)")
        #expect(PeerMatcher.withoutConflictSuffix("bob ()") == "bob ()")
        #expect(PeerMatcher.withoutConflictSuffix("(2)") == "(2)")
    }

    /// avahi renames the second "bob" on the network "bob #2" (p2p's own retry on one host is "bob (2)").
    @Test func avahisRenameFitsTheNameItAskedForToo() {
        var renamed = otherAlice
        renamed.displayName = "alice #2"
        #expect(PeerMatcher("alice").match(in: [alice, renamed]) == .ambiguous([alice, renamed]))
        #expect(PeerMatcher("ALICE #2").match(in: [alice, renamed]) == .one(renamed))
        #expect(PeerMatcher("alice #2").match(in: [alice]) == .none)
        #expect(PeerMatcher.withoutConflictSuffix("bob #12") == "bob")
        #expect(PeerMatcher.withoutConflictSuffix("bob #") == "bob #")
        #expect(PeerMatcher.withoutConflictSuffix("bob #two") == "bob #two")
        #expect(PeerMatcher.withoutConflictSuffix("#2") == "#2")
        #expect(PeerMatcher.withoutConflictSuffix(" #2") == " #2")
        // Only the exact name is pinned: the stricter `--from` takes no suffix.
        #expect(!PeerMatcher("alice").names(renamed))
    }

    /// The conflict decision: `--to bob` while bob is pinned and only another key announces "bob".
    @Test func aPinnedNameAnnouncedWithAnotherKeyIsAConflictNotAMatch() {
        let impostor = PeerInfo(id: PeerID(hex: "bbbb0000000000000000000000000000")!, displayName: "Bob", sessionID: "files")
        let pin = KnownPeer(id: bob.id, name: "Bob", method: .firstUse, pinnedAt: .now)
        // The impostor answers to no name, and is the conflict the person hears about at once.
        #expect(PeerMatcher("bob").match(in: [impostor, alice], pinned: [pin]) == .none)
        let conflict = PeerMatcher("bob").nameConflict(in: [alice, impostor], pinned: [pin])
        #expect(conflict == PeerMatcher.NameConflict(pinned: pin, offered: impostor))
        #expect(conflict?.refusal == .untrustedIdentity(name: "Bob", pinned: bob.id, presented: impostor.id))
        #expect(conflict?.refusal.description.contains(bob.fingerprint) == true)
        #expect(conflict?.refusal.description.contains(impostor.fingerprint) == true)
        // The pinned bob there too: the match wins (the finder asks for a conflict only when nothing fits).
        #expect(PeerMatcher("bob").match(in: [impostor, bob], pinned: [pin]) == .one(bob))
        // A key pinned as alice calling itself Bob is a conflict on "Bob" as well.
        let alicePin = KnownPeer(id: alice.id, name: "alice", method: .firstUse, pinnedAt: .now)
        var aliceAsBob = alice
        aliceAsBob.displayName = "Bob"
        #expect(PeerMatcher("BOB").nameConflict(in: [aliceAsBob], pinned: [pin, alicePin])?.offered == aliceAsBob)
        // No conflict: the query names no pin, the pinned key itself, a rename, nothing pinned.
        #expect(PeerMatcher("alice").nameConflict(in: [impostor], pinned: [pin]) == nil)
        #expect(PeerMatcher("bob").nameConflict(in: [bob], pinned: [pin]) == nil)
        var renamedImpostor = impostor
        renamedImpostor.displayName = "Bob #2"
        #expect(PeerMatcher("bob").nameConflict(in: [renamedImpostor], pinned: [pin]) == nil)
        // ... nor does it fit `--to bob`, which means the pinned key; it fits its own full name.
        #expect(PeerMatcher("bob").match(in: [renamedImpostor], pinned: [pin]) == .none)
        #expect(PeerMatcher("bob #2").match(in: [renamedImpostor], pinned: [pin]) == .one(renamedImpostor))
        #expect(PeerMatcher("bob").suggestion(among: [renamedImpostor], pinned: [pin]) == renamedImpostor)
        // The pinned bob renamed by DNS-SD still answers to bob.
        var renamedBob = bob
        renamedBob.displayName = "Bob #2"
        #expect(PeerMatcher("bob").match(in: [renamedBob, renamedImpostor], pinned: [pin]) == .one(renamedBob))
        #expect(PeerMatcher("bob").nameConflict(in: [impostor], pinned: []) == nil)
        // By a fingerprint prefix the person named a key, not a name: no conflict to report.
        #expect(PeerMatcher(String(bob.fingerprint.prefix(9))).nameConflict(in: [impostor], pinned: [pin]) == nil)
    }

    @Test func aPrefixSharedByTwoPeersIsAmbiguous() {
        #expect(PeerMatcher("fe00").match(in: [alice, otherAlice]) == .one(otherAlice))
        #expect(PeerMatcher("fedc").match(in: [alice, otherAlice]) == .one(alice))
        #expect(PeerMatcher("f").match(in: [alice, otherAlice]) == .none)  // too short to be read as a prefix
        let sharedHex = PeerInfo(id: PeerID(hex: "fedc0000000000000000000000000000")!, displayName: "carol", sessionID: "files")
        #expect(PeerMatcher("fedc").match(in: [alice, sharedHex]) == .ambiguous([alice, sharedHex]))
    }

    @Test func aNameWinsOverAPrefix() {
        let cafe = PeerInfo(id: PeerID(hex: "11110000000000000000000000000000")!, displayName: "0123", sessionID: "files")
        #expect(PeerMatcher("0123").match(in: [bob, cafe]) == .one(cafe))
    }

    @Test func onePeerSeenTwiceIsOneMatch() {
        var onAnotherInterface = bob
        onAnotherInterface.addresses = [IPAddress("10.0.0.2")!]
        #expect(PeerMatcher("bob").match(in: [bob, onAnotherInterface, alice]) == .one(bob))
    }

    @Test func nobodyMatchesAnUnknownName() {
        #expect(PeerMatcher("carol").match(in: everyone) == .none)
        #expect(PeerMatcher("carol").match(in: []) == .none)
    }
}
