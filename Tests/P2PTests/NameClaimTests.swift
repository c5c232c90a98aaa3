import Testing
@testable import P2P

/// `NameClaim`, the advertiser's decisions, without a daemon: one registration per name, the shared claim
/// TXT record replaced once the name is won, each name reported once (issue 35, item 1).
struct NameClaimTests {
    @Test func registersTheBaseNameOnceAndPublishesItsOwnTXTWhenTheNameIsWon() {
        var claim = NameClaim(baseName: "bob")
        #expect(claim.start() == [.register(name: "bob")])
        #expect(claim.registered(as: "bob") == [.publishTXT, .report(name: "bob")])
    }

    @Test func aRenameByAvahiIsReportedNeverAnsweredWithANewRegistration() {
        var claim = NameClaim(baseName: "bob")
        _ = claim.start()
        // Another host won "bob": avahi registered this one as "bob #2" on its own.
        let effects = claim.registered(as: "bob #2")
        #expect(effects == [.publishTXT, .report(name: "bob #2")])
        #expect(!effects.contains { if case .register = $0 { true } else { false } })
        // avahi says "established" again for the same name (the group re-probed after a conflict it
        // won): nothing to do, nothing to say.
        #expect(claim.registered(as: "bob #2") == [])
        // A later rename (two announced bobs met): said once, and the TXT record is not sent again.
        #expect(claim.registered(as: "bob #3") == [.report(name: "bob #3")])
    }

    @Test func aNameTakenOnThisHostTriesTheNextCandidateUpToTheLimit() {
        var claim = NameClaim(baseName: "bob")
        _ = claim.start()
        #expect(claim.refused() == [.register(name: "bob (2)")])
        #expect(claim.refused() == [.register(name: "bob (3)")])
        #expect(claim.registered(as: "bob (3)") == [.publishTXT, .report(name: "bob (3)")])
        var full = NameClaim(baseName: "bob")
        _ = full.start()
        for attempt in 2...NameClaim.maxAttempts { #expect(full.refused() == [.register(name: "bob (\(attempt))")]) }
        #expect(full.refused() == [.fail(.nameConflict(name: "bob"))])
    }

    @Test func afterTheDaemonCameBackTheClaimStartsOverAndReportsAgain() {
        var claim = NameClaim(baseName: "bob")
        _ = claim.start()
        _ = claim.refused()
        _ = claim.registered(as: "bob (2)")
        // The registration died with the daemon: the base name again, with the claim TXT record again.
        #expect(claim.start() == [.register(name: "bob")])
        #expect(claim.registered(as: "bob") == [.publishTXT, .report(name: "bob")])
    }

    @Test func theClaimRecordIsTheSameForEveryPeerAndTellsItselfApart() {
        let own = ServiceAnnouncement.txtRecord(peerID: PeerID(hex: "0123456789abcdef0123456789abcdef")!, sessionID: "s")
        #expect(ServiceAnnouncement.isClaim(ServiceAnnouncement.claimTXTRecord))
        #expect(ServiceAnnouncement.isClaim(TXTRecord(bytes: ServiceAnnouncement.claimTXTRecord.bytes)))
        #expect(!ServiceAnnouncement.isClaim(own))
        #expect(ServiceAnnouncement.claimTXTRecord.bytes == Array("\u{9}txtvers=1".utf8))
    }
}
