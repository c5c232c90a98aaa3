import Foundation
import Testing
@testable import P2P

/// The chat room carried out, not only decided: `ChatRoomRunner` over real sessions on loopback (no
/// terminal, no discovery), its events waited for as an app's screen would show them.
@Suite struct ChatRoomRunnerTests {
    /// What a runner reported, in order.
    final class Seen: Sendable {
        let box = NIOLockedValueBoxWrapper<[ChatRoomRunner.Event]>([])
        func append(_ event: ChatRoomRunner.Event) { box.mutate { $0.append(event) } }

        @discardableResult
        func wait(for what: String, sourceLocation: SourceLocation = #_sourceLocation,
                  _ predicate: @escaping @Sendable (ChatRoomRunner.Event) -> Bool) async throws -> ChatRoomRunner.Event {
            let events = try await box.wait(for: what, seconds: 10, sourceLocation: sourceLocation) { $0.contains(where: predicate) }
            return events.first(where: predicate)!
        }

        func count(_ predicate: (ChatRoomRunner.Event) -> Bool) -> Int { box.value.count(where: predicate) }
    }

    static func runner(_ session: Session, policy: ConnectionPolicy = ConnectionPolicy(acceptsEveryone: true, canAsk: false),
                       dialsRoomPeers: Bool = true, history path: String = ChatTests.temporaryPath()) throws -> (ChatRoomRunner, Seen) {
        let seen = Seen()
        let conversation = Conversation(session: session, history: try ChatHistory(path: path))
        let runner = ChatRoomRunner(session: session, conversation: conversation, policy: policy, dialsRoomPeers: dialsRoomPeers) { seen.append($0) }
        return (runner, seen)
    }

    /// A peer nobody has met, whose ID is above every real one: the local side is the one that dials it.
    static func stranger(_ name: String = "mallory", in room: String) -> PeerInfo {
        PeerInfo(id: PeerID(bytes: Array(repeating: 0xFF, count: 16)), displayName: name, sessionID: room)
    }

    @Test func aLineTypedWhileNobodyIsHereIsHeldThenDeliveredToWhoeverJoins() async throws {
        let alice = try await makeSession("alice", sessionID: "room")
        let bob = try await makeSession("bob", sessionID: "room")
        let (aliceRoom, aliceSeen) = try Self.runner(alice)
        let (bobRoom, bobSeen) = try Self.runner(bob)
        aliceRoom.start()
        bobRoom.start()

        aliceRoom.say("anyone?")
        try await aliceSeen.wait(for: "the line held") { if case .lineHeld("anyone?") = $0 { true } else { false } }
        #expect(aliceRoom.room.heldLines.map(\.text) == ["anyone?"])
        #expect(try aliceRoom.conversation.history.unaddressed(in: "room").map(\.text) == ["anyone?"], "kept across runs too")

        _ = try await bob.connect(to: alice.endpoint)
        try await aliceSeen.wait(for: "bob joined") { if case .joined(let peer) = $0 { peer.id == bob.peerID } else { false } }
        let received = try await bobSeen.wait(for: "the held line at bob") { if case .lineReceived = $0 { true } else { false } }
        if case .lineReceived(let entry, let from) = received {
            #expect(entry.text == "anyone?" && from.id == alice.peerID)
        }
        try await aliceSeen.wait(for: "the line delivered") {
            if case .lineDelivered(let entry, afterWaiting: false) = $0 { entry.text == "anyone?" } else { false }
        }
        #expect(aliceRoom.room.heldLines.isEmpty)
        #expect(!aliceRoom.awaitsAcknowledgement, "bob acknowledged everything")
        #expect(try aliceRoom.conversation.history.unaddressed(in: "room").isEmpty, "a held line that went out is forgotten")
        #expect(aliceRoom.room.members[bob.peerID] != nil)
        await alice.close()
        await bob.close()
    }

    @Test func aLineForAMemberThatLeftWaitsInTheOutboxAndIsDeliveredWhenItIsBack() async throws {
        let alice = try await makeSession("alice", sessionID: "chat")
        let bobIdentity = Identity.ephemeral()
        var bob = try await ChatTests.session("bob", identity: bobIdentity)
        let (aliceRoom, aliceSeen) = try Self.runner(alice)
        aliceRoom.start()
        _ = try await bob.connect(to: alice.endpoint)
        try await aliceSeen.wait(for: "bob joined") { if case .joined = $0 { true } else { false } }

        await bob.close()
        try await aliceSeen.wait(for: "bob left") { if case .left(let peer) = $0 { peer.id == bobIdentity.peerID } else { false } }
        aliceRoom.say("while you were out")
        try await aliceSeen.wait(for: "the line queued") { if case .lineQueued(let entry) = $0 { entry.text == "while you were out" } else { false } }
        #expect(aliceRoom.room.waitingLines(for: bobIdentity.peerID) == 1)

        bob = try await ChatTests.session("bob", identity: bobIdentity)
        let (bobRoom, bobSeen) = try Self.runner(bob)
        bobRoom.start()
        _ = try await bob.connect(to: alice.endpoint)
        try await bobSeen.wait(for: "the waiting line at bob") { if case .lineReceived(let entry, _) = $0 { entry.text == "while you were out" } else { false } }
        try await aliceSeen.wait(for: "its delivery, after waiting") {
            if case .lineDelivered(let entry, afterWaiting: true) = $0 { entry.text == "while you were out" } else { false }
        }
        #expect(try aliceRoom.conversation.pending().isEmpty)
        await alice.close()
        await bob.close()
    }

    /// A new key of the room is put to the person first; a yes dials it, and a dial that reaches nobody
    /// goes back to the room (reported as unasked, not a refusal).
    @Test func aNewKeyIsAskedAboutBeforeItIsDialled() async throws {
        let alice = try await makeSession("alice", sessionID: "room")
        let (aliceRoom, seen) = try Self.runner(alice, policy: ConnectionPolicy(acceptsEveryone: false, canAsk: true))
        let mallory = Self.stranger(in: "room")

        aliceRoom.handle(.peerChanged(mallory, .available, reason: nil))
        try await seen.wait(for: "the question") { if case .dialQuestion(let peer) = $0 { peer.id == mallory.id } else { false } }
        #expect(seen.count { if case .dialing = $0 { true } else { false } } == 0, "not dialled before the answer")
        #expect(aliceRoom.room.asking.contains(mallory.id))

        aliceRoom.answer(dialTo: mallory, yes: true)
        try await seen.wait(for: "the dial") { if case .dialing(let peer, announced: true) = $0 { peer.id == mallory.id } else { false } }
        try await seen.wait(for: "the failed dial") {
            if case .dialFailed(let peer, _, unasked: true, refused: false) = $0 { peer.id == mallory.id } else { false }
        }
        #expect(!aliceRoom.room.dialing.contains(mallory.id), "the room knows the dial ended")
        await alice.close()
    }

    /// Where nobody can be asked, the trust store decides: a name pinned to another key is not dialled.
    @Test func aKeyUsingANamePinnedToAnotherKeyIsNotDialledWhereNobodyCanBeAsked() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-runner-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try TrustStore(file: directory.appendingPathComponent("known-peers.json"))
        try store.pin(Identity.ephemeral().peerID, name: "mallory", method: .firstUse)
        let alice = try await makeSession("alice", sessionID: "room") { $0.trustStore = store }
        let (aliceRoom, seen) = try Self.runner(alice, policy: ConnectionPolicy(acceptsEveryone: false, canAsk: false))
        let mallory = Self.stranger(in: "room")

        #expect(aliceRoom.judged(mallory).trust.isConflict)
        aliceRoom.handle(.peerChanged(mallory, .available, reason: nil))
        aliceRoom.handle(.peerChanged(mallory, .available, reason: nil))
        try await seen.wait(for: "not dialled") { if case .newKeyNotDialled(let peer) = $0 { peer.trust.isConflict } else { false } }
        #expect(seen.count { if case .newKeyNotDialled = $0 { true } else { false } } == 1, "said once per peer")
        #expect(seen.count { if case .dialing = $0 { true } else { false } } == 0)
        await alice.close()
    }

    /// A stranger refused at every try is shown once in full; its later tries within the minute are only counted.
    @Test func aRefusedKeyIsShownOnceThenCounted() async throws {
        let alice = try await makeSession("alice", sessionID: "room")
        let (aliceRoom, seen) = try Self.runner(alice)
        let mallory = Self.stranger(in: "room")
        for _ in 0 ..< 3 { aliceRoom.handle(.refused(mallory, reason: .refusedAsUntrusted("the name \"mallory\" is pinned to another key"))) }
        aliceRoom.handle(.peerChanged(mallory, .available, reason: nil))
        aliceRoom.say("hello")
        // The line is the event this test waits for: everything before it was reported by then.
        try await seen.wait(for: "the line held") { if case .lineHeld = $0 { true } else { false } }
        #expect(seen.count { if case .refused = $0 { true } else { false } } == 1)
        #expect(seen.count { if case .refusedAgain = $0 { true } else { false } } == 0, "within the minute: counted, not said")
        #expect(seen.count { if case .dialing = $0 { true } else { false } } == 0, "a refused key is not dialled")
        await alice.close()
    }

    /// Mallory dials alice (as the room's rule may have her do): her refusal of alice's key reaches alice as the end
    /// of a link mallory opened, before it connected. Told once, with the lines it concerns, and mallory is
    /// not dialled again in this run; anything else ending such a link is no refusal.
    @Test func aPeerThatDialledUsAndRefusedOurKeyIsToldOnceAndNotDialled() async throws {
        let alice = try await makeSession("alice", sessionID: "room")
        let (aliceRoom, seen) = try Self.runner(alice)
        let mallory = Self.stranger(in: "room")
        aliceRoom.say("anyone?")
        try await seen.wait(for: "the line held") { if case .lineHeld = $0 { true } else { false } }

        let untrusted = SessionError.refusedAsUntrusted("the name \"alice\" is pinned to another key on this peer")
        aliceRoom.handle(.peerChanged(mallory, .disconnected, reason: untrusted))
        let told = try await seen.wait(for: "the refusal") { if case .refusedBy = $0 { true } else { false } }
        guard case .refusedBy(let peer, .keyChanged, let waiting, let heldLines) = told else { Issue.record("not told: \(told)"); return }
        #expect(peer.id == mallory.id && waiting == 0 && heldLines == 1, "the line held for whoever joins will not reach her")
        #expect(aliceRoom.room.noRedial.contains(mallory.id))
        #expect(seen.count { if case .left = $0 { true } else { false } } == 0, "she never joined, so she did not leave")

        aliceRoom.handle(.peerChanged(mallory, .disconnected, reason: untrusted))
        aliceRoom.handle(.peerChanged(mallory, .disconnected, reason: .refusedAsUnexpected("expected peer 0303…")))
        aliceRoom.handle(.peerChanged(mallory, .available, reason: nil))
        aliceRoom.say("still nobody?")
        // The line is the event this test waits for: everything before it was reported by then.
        try await seen.wait(for: "the second line held") { if case .lineHeld("still nobody?") = $0 { true } else { false } }
        #expect(seen.count { if case .refusedBy = $0 { true } else { false } } == 1, "once per peer, whatever the reason the next time")
        #expect(seen.count { if case .dialing = $0 { true } else { false } } == 0, "a peer that refused us is not dialled again in this run")
        await alice.close()
    }

    /// ERROR 17 (the peer was looking for another peer) is told with its own reason; a lost link, our own
    /// "no" to its request, or no reason at all is no refusal; and a chat with one peer hears of a refusal
    /// from its own dial (which ends it), not from a link the peer opened.
    @Test func onlyARefusalOfOurKeyEndingAnUnconnectedLinkIsToldAndOnlyInARoom() async throws {
        let alice = try await makeSession("alice", sessionID: "room")
        let mallory = Self.stranger(in: "room")
        let (other, otherSeen) = try Self.runner(alice)
        other.handle(.peerChanged(mallory, .disconnected, reason: .refusedAsUnexpected("expected peer 0303…")))
        #expect(otherSeen.count { if case .refusedBy(_, .notThePeerAsked, waiting: 0, heldLines: 0) = $0 { true } else { false } } == 1)

        let (quiet, quietSeen) = try Self.runner(alice)
        quiet.handle(.peerChanged(mallory, .disconnected, reason: .connectionLost))
        quiet.handle(.peerChanged(mallory, .disconnected, reason: .denied(by: "you")))
        quiet.handle(.peerChanged(mallory, .disconnected, reason: nil))
        #expect(quietSeen.count { if case .refusedBy = $0 { true } else { false } } == 0)
        #expect(!quiet.room.noRedial.contains(mallory.id))

        let (scripted, scriptedSeen) = try Self.runner(alice, dialsRoomPeers: false)
        scripted.handle(.peerChanged(mallory, .disconnected, reason: .refusedAsUntrusted("pinned")))
        #expect(scriptedSeen.count { if case .refusedBy = $0 { true } else { false } } == 0)
        await alice.close()
    }

    /// A chat with one named peer dials that peer when asked, and only that one.
    @Test func aChatWithOnePeerDialsOnlyWhomItIsAskedFor() async throws {
        let alice = try await makeSession("alice", sessionID: "room")
        let bob = try await makeSession("bob", sessionID: "room")
        let (aliceRoom, seen) = try Self.runner(alice, dialsRoomPeers: false)
        let (bobRoom, _) = try Self.runner(bob)  // bob's conversation acknowledges the line
        aliceRoom.start()
        let mallory = Self.stranger(in: "room")
        aliceRoom.handle(.peerChanged(mallory, .available, reason: nil))

        let bobInfo = try await alice.connect(to: bob.endpoint)
        try await seen.wait(for: "bob joined") { if case .joined = $0 { true } else { false } }
        aliceRoom.say("just you", to: bobInfo)
        try await seen.wait(for: "the private line delivered") { if case .lineDelivered(let entry, _) = $0 { entry.text == "just you" } else { false } }
        #expect(seen.count { if case .dialing = $0 { true } else { false } } == 0, "a peer of the room is not dialled by itself")

        aliceRoom.dial(mallory)
        try await seen.wait(for: "the asked dial failing") { if case .dialFailed(_, _, unasked: false, _) = $0 { true } else { false } }
        withExtendedLifetime(bobRoom) {}
        await alice.close()
        await bob.close()
    }
}
