import Foundation
import Testing
@testable import P2P

/// How a chat (`p2p chat`) ends, fed events without a terminal or sockets: piped input and the wait for
/// acknowledgements after it, a failed dial, the wait for a `--to` peer, Ctrl-C.
@Suite struct ChatEndingTests {
    let me = PeerID(bytes: Array(repeating: 1, count: 16))
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "room")

    func model(scripted: Bool = false, verbose: Bool = false) -> ChatEnding {
        ChatEnding(scripted: scripted, verbose: verbose)
    }

    func room() -> ChatRoom {
        var room = ChatRoom(name: "room", localPeer: me, localName: "me", dialsRoomPeers: true, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false))
        _ = room.handle(.inputEnded)
        return room
    }

    @Test func pipedInputIsDoneWhenItEndedAndConnectedPeersAcknowledgedOrTenSecondsPassed() {
        var chat = model()
        let open = ChatRoom(name: "room", localPeer: me, localName: "me", dialsRoomPeers: true, policy: ConnectionPolicy(acceptsEveryone: true, canAsk: false))
        #expect(!chat.isDone(room: open, awaitingAcknowledgement: false), "the input has not ended")
        #expect(chat.handle(.inputEnded) == [.waitForAcknowledgements])
        #expect(chat.isDone(room: room(), awaitingAcknowledgement: false))
        #expect(!chat.isDone(room: room(), awaitingAcknowledgement: true), "a connected peer has not acknowledged a line yet")
        #expect(chat.handle(.acknowledgementsOverdue) == [])
        #expect(chat.isDone(room: room(), awaitingAcknowledgement: true), "no longer waited for: the line stays in the outbox")
    }

    @Test func aLineHeldForWhoeverJoinsKeepsAPipedChatOpen() {
        var chat = model()
        var room = room()
        _ = room.handle(.linesHeld([UnaddressedLine(sequence: 1, room: "room", typedAt: Date(), text: "anyone?")]))
        _ = chat.handle(.inputEnded)
        _ = chat.handle(.acknowledgementsOverdue)
        #expect(!chat.isDone(room: room, awaitingAcknowledgement: false))
    }

    @Test func ctrlCEndsTheChatWithZero() {
        var chat = model()
        #expect(chat.handle(.interrupted) == [.exit(.success)])
    }

    @Test func aFailedDialOfTheNamedPeerEndsAScriptedChatWithFour() {
        var chat = model(scripted: true)
        let effects = chat.handle(.dialFailed(target: "bob", SessionError.denied(by: "bob"), unasked: nil))
        #expect(effects == [.reportDialFailure(.init(target: "bob", error: SessionError.denied(by: "bob"))), .exit(.connectionFailed)])
        var room = model(scripted: false)
        #expect(room.handle(.dialFailed(target: "bob", SessionError.timedOut(seconds: 5), unasked: nil)).count == 1, "a room goes on")
    }

    @Test func aMemberThatCouldNotBeRedialledIsReportedOnlyWithVerboseAndItsRefusalByTheRunner() {
        var chat = model()
        #expect(chat.handle(.dialFailed(target: "bob", SessionError.timedOut(seconds: 5), unasked: bob.id)).isEmpty)
        // The peer said no: the runner reports it once (`ChatRoomRunner.Event.refusedBy`), not the model at every try.
        #expect(chat.handle(.dialFailed(target: "bob", SessionError.denied(by: "bob"), unasked: bob.id)).isEmpty)
        #expect(chat.handle(.dialFailed(target: "bob", SessionError.refusedAsUntrusted("pinned"), unasked: bob.id)).isEmpty)
        var verbose = model(verbose: true)
        #expect(verbose.handle(.dialFailed(target: "bob", SessionError.timedOut(seconds: 5), unasked: bob.id)).count == 1)
    }

    /// The line a room shows for `ChatRoomRunner.Event.refusedBy`: why, what to do, and what becomes of the lines.
    @Test func aPeerThatRefusedOurKeyIsNamedWithWhatToDoAndWhatBecomesOfTheLines() {
        let text = RefusalNotice(refusal: .keyChanged).message(by: "bob", localName: "carol", heldLines: 1, waiting: 0)
        #expect(text.hasPrefix("bob refused this key"))
        #expect(text.contains("p2p trust remove carol"))
        #expect(text.contains("not dialled again in this run"))
        #expect(text.contains("1 line typed while nobody was here will not reach bob"))
        #expect(!text.contains("outbox"), "no line waits for bob")
        #expect(RefusalNotice(refusal: .keyChanged).message(by: "bob", localName: "", heldLines: 0, waiting: 0).contains("p2p trust remove YOUR-NAME"))
        let declined = RefusalNotice(refusal: .declined).message(by: "bob", localName: "carol", heldLines: 0, waiting: 2)
        #expect(declined.hasPrefix("bob declined the connection"))
        #expect(declined.contains("2 lines for bob will not be delivered now (they stay in the outbox)"))
        let notAsked = RefusalNotice(refusal: .notThePeerAsked).message(by: "bob", localName: "carol", heldLines: 0, waiting: 0)
        #expect(notAsked.contains("looking for another peer") && notAsked.contains("nothing is wrong with your key"))
        #expect(!RefusalNotice(refusal: .keyChanged).message(by: "bob", localName: "\u{1B}[2Jcarol", heldLines: 0, waiting: 0).contains("\u{1B}"),
                "our own name reaches the terminal sanitized")
    }

    @Test func theWaitForANamedPeerEndsWithThreeOnlyWhenNobodyJoined() {
        var alone = model(scripted: true)
        #expect(alone.handle(.waitExpired(found: false)) == [.reportNotFound, .exit(.peerNotFound)])
        var joined = model(scripted: true)
        #expect(joined.handle(.waitExpired(found: true)) == [])
    }
}
