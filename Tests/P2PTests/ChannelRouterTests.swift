import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import P2P

/// The one reader of CHANNEL frames (`ChannelRouter`; issue 36): each message goes to the handler of its
/// purpose and to no other, and a purpose nobody takes gets the answers `Protocol/TRANSFER.md` names
/// ("A purpose nobody takes"). Driven in memory: what the router would send and whom it would
/// disconnect are recorded. A channel a handler does not know (a step of an unknown channel of a
/// purpose it takes) is the handler's to answer: `ChannelDirectionTests`, `StreamTests` and the
/// `channel-*-nobody-accepted` vectors cover those over TLS.
struct ChannelRouterTests {
    /// A handler that keeps what it got.
    final class Recorder: ChannelPurposeHandler {
        let got = NIOLockedValueBox<[ChannelMessage]>([])
        func receive(_ message: ChannelMessage, from peer: PeerInfo) { got.withLockedValue { $0.append(message) } }
        var messages: [ChannelMessage] { got.withLockedValue { $0 } }
    }

    /// A router whose answers and disconnects are recorded.
    final class Wire: Sendable {
        let sent = NIOLockedValueBox<[(ChannelMessage, PeerID)]>([])
        let disconnected = NIOLockedValueBox<[PeerID]>([])
        var replies: [ChannelMessage] { sent.withLockedValue { $0.map(\.0) } }
        var cut: [PeerID] { disconnected.withLockedValue { $0 } }

        func router() -> ChannelRouter {
            ChannelRouter(reply: { message, peer in self.sent.withLockedValue { $0.append((message, peer)) } },
                          disconnect: { peer in self.disconnected.withLockedValue { $0.append(peer) } })
        }
    }

    let peer = PeerInfo(id: PeerID(bytes: Array(repeating: 9, count: 16)), displayName: "mallory", sessionID: "files")

    @Test func eachPurposeGoesToItsHandlerOnly() {
        let wire = Wire()
        let router = wire.router()
        let transfers = Recorder(), streams = Recorder()
        router.register(transfers, for: [.file, .tree])
        router.register(streams, for: [.stream])
        let file = ChannelMessage(.file, channelID: 7, .open(.file(path: "a.txt", size: 3, mediaType: "text/plain")))
        let tree = ChannelMessage(.tree, channelID: 7, .treeEnd)
        let stream = ChannelMessage(.stream, channelID: 7, .data(offset: 0, bytes: ByteBuffer(string: "abc")))
        for message in [file, tree, stream] { router.route(message, from: peer) }
        #expect(transfers.messages == [file, tree])
        #expect(streams.messages == [stream])
        #expect(wire.replies.isEmpty)
        #expect(wire.cut.isEmpty)
    }

    @Test func anOpenOfAPurposeNobodyTakesIsDenied() {
        let wire = Wire()
        let router = wire.router()
        let transfers = Recorder()
        router.register(transfers, for: [.file, .tree])
        router.route(ChannelMessage(.stream, channelID: 5, .open(.stream(name: "dump", mediaType: "text/plain"))), from: peer)
        #expect(transfers.messages.isEmpty)
        #expect(wire.replies == [ChannelMessage(.stream, channelID: 5, .deny(reason: "this peer does not take byte streams"))])
        #expect(wire.cut.isEmpty)
    }

    @Test func bytesOfAPurposeNobodyTakesEndTheConnection() {
        let wire = Wire()
        let router = wire.router()
        let streams = Recorder()
        router.register(streams, for: [.stream])
        router.route(ChannelMessage(.file, channelID: 9, .data(offset: 0, bytes: ByteBuffer(string: "x"))), from: peer)
        #expect(streams.messages.isEmpty)
        #expect(wire.replies == [ChannelMessage(.file, channelID: 9, .cancel(reason: "no accepted transfer 9"))])
        #expect(wire.cut == [peer.id])
    }

    @Test func lateStepsOfAPurposeNobodyTakesAreIgnored() {
        let wire = Wire()
        let router = wire.router()
        for body: ChannelMessage.Body in [.ack(10), .cancel(reason: "late"), .result(verified: true, sha256: Array(repeating: 0, count: 32)),
                                          .deny(reason: "no")] {
            router.route(ChannelMessage(.stream, channelID: 3, body), from: peer)
        }
        #expect(wire.replies.isEmpty)
        #expect(wire.cut.isEmpty)
    }

    /// A tree sends its manifest right behind its OPEN: the ENTRIES of a tree denied for want of a
    /// handler are dropped, while ENTRIES of any other channel are bytes nobody accepted.
    @Test func theManifestOfADeniedTreeIsDroppedQuietly() {
        let wire = Wire()
        let router = wire.router()
        let entries = ChannelMessage.Body.entries(first: 0, [TreeEntry(path: "a", kind: .file, mode: 0o644, size: 1)])
        router.route(ChannelMessage(.tree, channelID: 4, .open(.tree(entries: 1, total: 1))), from: peer)
        router.route(ChannelMessage(.tree, channelID: 4, entries), from: peer)
        #expect(wire.replies == [ChannelMessage(.tree, channelID: 4, .deny(reason: "this peer takes no trees of files"))])
        #expect(wire.cut.isEmpty)
        router.route(ChannelMessage(.tree, channelID: 5, entries), from: peer)
        #expect(wire.replies.last == ChannelMessage(.tree, channelID: 5, .cancel(reason: "no accepted transfer 5")))
        #expect(wire.cut == [peer.id])
    }

    /// The router holds its handlers weakly: one that is gone is a purpose nobody takes.
    @Test func aHandlerThatIsGoneTakesNothing() {
        let wire = Wire()
        let router = wire.router()
        do {
            let transfers = Recorder()
            router.register(transfers, for: [.file])
        }
        router.route(ChannelMessage(.file, channelID: 2, .open(.file(path: "a", size: 1, mediaType: "text/plain"))), from: peer)
        #expect(wire.replies == [ChannelMessage(.file, channelID: 2, .deny(reason: "this peer takes no files"))])
    }

    /// What the router is handed is decoded first, once: a tree's kind with another purpose, or a purpose
    /// that does not exist, is a malformed payload (the connection ends) and reaches no handler.
    @Test func aWrongPurposeNeverReachesAHandler() {
        for (kind, purpose) in [(22, 1), (22, 3), (22, 4), (32, 1), (9, 5), (1, 0)] as [(UInt8, UInt8)] {
            var payload = ByteBuffer(bytes: [kind, purpose])
            payload.writeInteger(UInt64(1))
            if kind == 9 { payload.writeInteger(UInt16(0)) }
            #expect(throws: WireError.self) { _ = try ChannelMessage(payload: &payload) }
        }
    }

    /// An application that takes something else says where a purpose is taken: its reason replaces the default.
    @Test func anApplicationsReasonReplacesTheDefault() {
        let wire = Wire()
        let router = wire.router()
        router.decline([.file, .tree], reason: "this receiver takes one byte stream")
        router.route(ChannelMessage(.file, channelID: 1, .open(.file(path: "a", size: 1, mediaType: "text/plain"))), from: peer)
        router.route(ChannelMessage(.tree, channelID: 2, .open(.tree(entries: 1, total: 1))), from: peer)
        #expect(wire.replies == [ChannelMessage(.file, channelID: 1, .deny(reason: "this receiver takes one byte stream")),
                                 ChannelMessage(.tree, channelID: 2, .deny(reason: "this receiver takes one byte stream"))])
    }
}
