import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing
@testable import P2P

/// The production connection state machine in an EmbeddedChannel: frames in, frames out, the
/// handshake timer on the embedded clock, the session played by a recorder.
@Suite struct PeerConnectionHandlerTests {
    /// Plays the session: answers HELLOs with the verdict the test chooses, when it chooses.
    final class RecordingDelegate: LinkDelegate {
        struct Log {
            var connected = 0
            var closed = 0
            var failures: [SessionError] = []
            var delivered: [Frame] = []
            var requests: [ConnectionRequest] = []
        }
        let log = NIOLockedValueBox(Log())
        let verdict: NIOLockedValueBox<EventLoopPromise<HelloVerdict>?> = NIOLockedValueBox(nil)
        let decision: NIOLockedValueBox<EventLoopPromise<Bool?>?> = NIOLockedValueBox(nil)
        let rejectDeliveries: Bool
        /// Decode every delivered frame as the session's router does (`MessageCatalog.standard`).
        let decodesDeliveries: Bool

        init(rejectDeliveries: Bool = false, decodesDeliveries: Bool = false) {
            self.rejectDeliveries = rejectDeliveries
            self.decodesDeliveries = decodesDeliveries
        }

        var handshakeTimeout: TimeAmount { .seconds(10) }
        var heartbeatInterval: TimeAmount { .seconds(2) }
        var heartbeatTimeout: TimeAmount { .seconds(6) }
        var displayName: String { "alice" }
        var requestDecisionTimeout: Duration { .seconds(120) }
        func hello(for link: PeerLink) -> Hello {
            Hello(peerID: PeerConnectionHandlerTests.alice, capabilities: .all, datagramPort: 0, datagramToken: 1, displayName: "alice", sessionID: "test")
        }
        func link(_ link: PeerLink, proved peer: PeerID?) {}
        func link(_ link: PeerLink, receivedHello hello: Hello, from address: SocketAddress?) -> EventLoopFuture<HelloVerdict> {
            let promise = link.channel.eventLoop.makePromise(of: HelloVerdict.self)
            verdict.withLockedValue { $0 = promise }
            return promise.futureResult
        }
        func decide(_ request: ConnectionRequest, over link: PeerLink) -> EventLoopFuture<Bool?> {
            log.withLockedValue { $0.requests.append(request) }
            let promise = link.channel.eventLoop.makePromise(of: Bool?.self)
            decision.withLockedValue { $0 = promise }
            return promise.futureResult
        }
        func linkConnected(_ link: PeerLink) -> PeerInfo? {
            log.withLockedValue { $0.connected += 1 }
            return PeerInfo(id: PeerConnectionHandlerTests.bob, displayName: "bob", sessionID: "test")
        }
        func link(_ link: PeerLink, receivedError message: ErrorMessage) {
            log.withLockedValue { $0.failures.append(.remoteError(code: message.rawCode, reason: PeerText(message.reason))) }
        }
        func link(_ link: PeerLink, failed failure: SessionError, overwrite: Bool) { log.withLockedValue { $0.failures.append(failure) } }
        func linkClosed(_ link: PeerLink) { log.withLockedValue { $0.closed += 1 } }
        func link(_ link: PeerLink, deliver frame: Frame, from peer: PeerInfo) throws(WireError) {
            if rejectDeliveries { throw .malformedPayload(frame.type, "refused by the test") }
            if decodesDeliveries { _ = try MessageCatalog.standard.decode(frame) }
            log.withLockedValue { $0.delivered.append(frame) }
        }
    }

    static let alice = Identity.ephemeral().peerID
    static let bob = Identity.ephemeral().peerID

    /// A plaintext link in a channel with the production batcher (and, as in production, the heartbeat,
    /// which answers PING and checks PONG) in front of the handler.
    func connection(_ direction: PeerLink.Direction, delegate: RecordingDelegate, heartbeat: Bool = false,
                    requestContext: [UInt8] = []) throws -> (EmbeddedChannel, PeerLink) {
        let channel = EmbeddedChannel()
        let link = PeerLink(channel: channel, direction: direction, secure: false, requestContext: requestContext)
        try channel.pipeline.syncOperations.addHandler(FrameWriteBatcher())
        if heartbeat { try channel.pipeline.syncOperations.addHandler(HeartbeatHandler()) }
        try channel.pipeline.syncOperations.addHandler(PeerConnectionHandler(delegate: delegate, link: link))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 4000)).wait()
        return (channel, link)
    }

    /// The frames the handler wrote, decoded as the peer would.
    func written(_ channel: EmbeddedChannel) throws -> [Frame] {
        var frames: [Frame] = []
        while var bytes = try channel.readOutbound(as: ByteBuffer.self) {
            while let frame = try FrameParser(maxPayload: WireFormat.absoluteMaxPayload, catalog: .standard).parse(&bytes) { frames.append(frame) }
        }
        return frames
    }

    /// Bob's HELLO; by default a first version 1 peer's, which sends no CONTEXT.
    func hello(of capabilities: Capabilities) -> Frame {
        Hello(peerID: Self.bob, capabilities: capabilities, datagramPort: 0, datagramToken: 2, displayName: "bob", sessionID: "test").frame()
    }
    var bobsHello: Frame { hello(of: .original) }

    @Test func aWelcomeThatArrivesWhileTheHelloIsCheckedIsHandledAfterTheCheck() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.outbound, delegate: delegate)
        #expect(try written(channel).map(\.type) == [.hello])  // plaintext: HELLO at once
        try channel.writeInbound(bobsHello)
        try channel.writeInbound(Welcome().frame())  // the acceptor was quick; our trust check was not
        #expect(delegate.log.withLockedValue { $0.connected } == 0)
        delegate.verdict.withLockedValue { $0 }!.succeed(.awaitWelcome)
        #expect(delegate.log.withLockedValue { $0.connected } == 1)
        #expect(channel.isActive)
    }

    /// Bob's HELLO arrives, the acceptor asks, and `decision` is the answer (nil: none in time): what the
    /// handler wrote back, with the channel and delegate to look at.
    func answerBobsRequest(_ decision: Bool?) throws -> (replies: [Frame], channel: EmbeddedChannel, delegate: RecordingDelegate) {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        _ = try written(channel)
        try channel.writeInbound(bobsHello)
        let request = ConnectionRequest(peer: PeerInfo(id: Self.bob, displayName: "bob", sessionID: "test"))
        delegate.verdict.withLockedValue { $0 }!.succeed(.ask(request))
        delegate.decision.withLockedValue { $0 }!.succeed(decision)
        return (try written(channel), channel, delegate)
    }

    @Test func aDeclinedRequestIsToldWhyAndClosed() throws {
        let (replies, channel, delegate) = try answerBobsRequest(false)
        #expect(replies.map(\.type) == [.error])
        #expect(try ErrorMessage(frame: replies[0]).code == .connectionDenied)
        #expect(try ErrorMessage(frame: replies[0]).reason == "alice declined the connection")
        #expect(delegate.log.withLockedValue { $0.failures } == [.denied(by: "you")])
        #expect(!channel.isActive)
    }

    /// A request nobody answered in time is not "declined": the initiator is told it was not answered.
    @Test func anUnansweredRequestIsToldItWasNotAnswered() throws {
        let (replies, channel, delegate) = try answerBobsRequest(nil)
        #expect(replies.map(\.type) == [.error])
        #expect(try ErrorMessage(frame: replies[0]).code == .handshakeTimeout)
        #expect(try ErrorMessage(frame: replies[0]).reason == "alice did not answer the connection request within 120 s")
        #expect(delegate.log.withLockedValue { $0.failures } == [.timedOut(seconds: 120)])
        #expect(!channel.isActive)
    }

    @Test func silenceBeforeHelloEndsInAHandshakeTimeoutError() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        _ = try written(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        let replies = try written(channel)
        #expect(try replies.map { try ErrorMessage(frame: $0).code } == [.handshakeTimeout])
        #expect(!channel.isActive)
        #expect(delegate.log.withLockedValue { $0.closed } == 1)
    }

    /// PROTOCOL.md §9: an initiator whose connect timeout passes while the acceptor stays silent (its
    /// user never answers) tells it with ERROR 10 before closing; it used to close without a word.
    @Test func anInitiatorThatGivesUpWaitingForWelcomeSendsHandshakeTimeout() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.outbound, delegate: delegate)
        _ = try written(channel)
        try channel.writeInbound(bobsHello)
        delegate.verdict.withLockedValue { $0 }!.succeed(.awaitWelcome)
        channel.pipeline.fireUserInboundEventTriggered(PeerConnectionHandler.ConnectTimedOut(timeout: .seconds(30)))
        let replies = try written(channel)
        #expect(try replies.map { try ErrorMessage(frame: $0).code } == [.handshakeTimeout])
        #expect(try ErrorMessage(frame: replies[0]).reason == "no WELCOME (the connection request was not answered) within 30 s; giving up")
        #expect(delegate.log.withLockedValue { $0.failures } == [.timedOut(seconds: 30)])
        #expect(!channel.isActive)
    }

    @Test func anInitiatorThatGivesUpWaitingForHelloSendsHandshakeTimeoutToo() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.outbound, delegate: delegate)
        _ = try written(channel)
        channel.pipeline.fireUserInboundEventTriggered(PeerConnectionHandler.ConnectTimedOut(timeout: .seconds(5)))
        #expect(try written(channel).map { try ErrorMessage(frame: $0).code } == [.handshakeTimeout])
        #expect(!channel.isActive)
    }

    @Test func aConnectTimeoutAfterTheHandshakeChangesNothing() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.outbound, delegate: delegate)
        _ = try written(channel)
        try channel.writeInbound(bobsHello)
        delegate.verdict.withLockedValue { $0 }!.succeed(.awaitWelcome)
        try channel.writeInbound(Welcome().frame())
        channel.pipeline.fireUserInboundEventTriggered(PeerConnectionHandler.ConnectTimedOut(timeout: .seconds(10)))
        #expect(try written(channel).isEmpty)
        #expect(channel.isActive)
    }

    @Test func anApplicationFrameBeforeTheHandshakeIsAProtocolViolation() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        _ = try written(channel)
        try channel.writeInbound(TextMessage(text: "too early").frame())
        let replies = try written(channel)
        #expect(try replies.map { try ErrorMessage(frame: $0).code } == [.protocolViolation])
        #expect(delegate.log.withLockedValue { $0.delivered }.isEmpty)
        #expect(!channel.isActive)
    }

    @Test func aPayloadTheSessionRefusesEndsTheConnectionWithMalformedPayload() throws {
        let delegate = RecordingDelegate(rejectDeliveries: true)
        let (channel, _) = try connection(.inbound, delegate: delegate)
        _ = try written(channel)
        try channel.writeInbound(bobsHello)
        delegate.verdict.withLockedValue { $0 }!.succeed(.accept)
        #expect(try written(channel).map(\.type) == [.welcome])
        try channel.writeInbound(TextMessage(text: "hi").frame())
        #expect(try written(channel).map { try ErrorMessage(frame: $0).code } == [.malformedPayload])
        #expect(!channel.isActive)
    }

    @Test func connectedFramesReachTheSessionInOrder() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        try channel.writeInbound(bobsHello)
        delegate.verdict.withLockedValue { $0 }!.succeed(.accept)
        for text in ["one", "two", "three"] { try channel.writeInbound(TextMessage(text: text).frame()) }
        #expect(try delegate.log.withLockedValue { $0.delivered }.map { try TextMessage(frame: $0).text } == ["one", "two", "three"])
        try channel.writeInbound(Bye().frame())
        #expect(delegate.log.withLockedValue { $0.failures } == [.peerLeft])
        #expect(!channel.isActive)
    }

    /// PROTOCOL.md §7: a leaving side reads nothing more into the session and waits for the peer to
    /// close; a BYE from a peer leaving at the same moment ends that wait at once.
    @Test func leavingIgnoresFramesButClosesOnThePeersBye() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        try channel.writeInbound(bobsHello)
        delegate.verdict.withLockedValue { $0 }!.succeed(.accept)
        _ = try written(channel)
        channel.pipeline.fireUserInboundEventTriggered(PeerConnectionHandler.Leaving())
        #expect(try written(channel).map(\.type) == [.bye])
        try channel.writeInbound(TextMessage(text: "late").frame())
        #expect(delegate.log.withLockedValue { $0.delivered }.isEmpty)
        #expect(channel.isActive, "still waiting for the peer to close")
        try channel.writeInbound(Bye().frame())
        #expect(!channel.isActive)
    }

    // MARK: CONTEXT (PROTOCOL.md §7): the initiator's second frame when both HELLOs carry the capability.

    /// An acceptor whose HELLO check said "ask", facing an initiator that announced `capabilities`.
    func acceptorAsked(by capabilities: Capabilities) throws -> (EmbeddedChannel, RecordingDelegate) {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        try channel.writeInbound(hello(of: capabilities))
        delegate.verdict.withLockedValue { $0 }!.succeed(.ask(ConnectionRequest(peer: PeerInfo(id: Self.bob, displayName: "bob", sessionID: "test"))))
        return (channel, delegate)
    }

    @Test func anAcceptorAsksOnlyOnceTheContextArrivedAndShowsIt() throws {
        let (channel, delegate) = try acceptorAsked(by: .all)
        #expect(delegate.log.withLockedValue { $0.requests }.isEmpty, "nothing to ask before the CONTEXT")
        try channel.writeInbound(ConnectionContext(bytes: Array("table 4".utf8)).frame())
        #expect(delegate.log.withLockedValue { $0.requests }.map(\.context) == [Data("table 4".utf8)])
        delegate.decision.withLockedValue { $0 }!.succeed(true)
        #expect(try written(channel).map(\.type).suffix(1) == [.welcome])
    }

    @Test func anEmptyContextIsNoContext() throws {
        let (channel, delegate) = try acceptorAsked(by: .all)
        try channel.writeInbound(ConnectionContext(bytes: []).frame())
        #expect(delegate.log.withLockedValue { $0.requests }.map(\.context) == [nil])
    }

    @Test func anotherFrameWhereTheContextBelongsIsAProtocolViolation() throws {
        let (channel, delegate) = try acceptorAsked(by: .all)
        try channel.writeInbound(TextMessage(text: "hi").frame())
        #expect(try written(channel).compactMap { $0.type == .error ? try ErrorMessage(frame: $0).code : nil } == [.protocolViolation])
        #expect(delegate.log.withLockedValue { $0.requests }.isEmpty)
        #expect(!channel.isActive)
    }

    @Test func aContextArrivingWhileTheHelloIsCheckedWaitsForTheCheck() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        try channel.writeInbound(hello(of: .all))
        try channel.writeInbound(ConnectionContext(bytes: [1, 2, 3]).frame())
        delegate.verdict.withLockedValue { $0 }!.succeed(.ask(ConnectionRequest(peer: PeerInfo(id: Self.bob, displayName: "bob", sessionID: "test"))))
        #expect(delegate.log.withLockedValue { $0.requests }.map(\.context) == [Data([1, 2, 3])])
    }

    @Test func aPeerWithoutTheCapabilityIsAskedAtOnce() throws {
        let (_, delegate) = try acceptorAsked(by: .original)
        #expect(delegate.log.withLockedValue { $0.requests }.map(\.context) == [nil])
    }

    @Test func anInitiatorSendsItsContextOnceTheAcceptorsHelloPassed() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.outbound, delegate: delegate, requestContext: Array("hi".utf8))
        try channel.writeInbound(hello(of: .all))
        delegate.verdict.withLockedValue { $0 }!.succeed(.awaitWelcome)
        let frames = try written(channel)
        #expect(frames.map(\.type) == [.hello, .context])
        #expect(try ConnectionContext(frame: frames[1]).bytes == Array("hi".utf8))
    }

    @Test func aContextForAnAcceptorThatCannotReadItEndsTheAttempt() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.outbound, delegate: delegate, requestContext: Array("hi".utf8))
        try channel.writeInbound(hello(of: .original))
        delegate.verdict.withLockedValue { $0 }!.succeed(.awaitWelcome)
        #expect(try written(channel).map(\.type) == [.hello, .bye])
        #expect(delegate.log.withLockedValue { $0.failures } == [.contextNotSupported(by: "bob")])
        #expect(!channel.isActive)
    }

    /// Holds every close, as TLS does while it waits for a close_notify the silent peer never sends.
    final class CloseHolder: ChannelOutboundHandler, Sendable {
        typealias OutboundIn = NIOAny
        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {}
    }

    /// A silent peer is reported gone when the heartbeat gives up, not once its connection has finished
    /// closing (which, over TLS, waits up to NIOSSL's shutdown timeout for the peer that is silent).
    @Test func aSilentPeerIsReportedGoneBeforeItsConnectionFinishesClosing() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        try channel.pipeline.syncOperations.addHandler(CloseHolder(), position: .first)
        try channel.writeInbound(bobsHello)
        delegate.verdict.withLockedValue { $0 }!.succeed(.accept)
        channel.pipeline.fireErrorCaught(HeartbeatHandler.PeerSilent())
        #expect(delegate.log.withLockedValue { $0.failures } == [.heartbeatLost])
        #expect(delegate.log.withLockedValue { $0.closed } == 1)
        #expect(channel.isActive, "the close is still held, as TLS holds it")
    }

    @Test func whyThePeerLeftWhileItsHelloWasCheckedIsTheReason() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.outbound, delegate: delegate)
        try channel.writeInbound(bobsHello)
        try channel.writeInbound(ErrorMessage(code: .untrustedIdentity, reason: "pinned to another key").frame())
        try channel.close().wait()  // the peer hung up before our trust check finished
        #expect(delegate.log.withLockedValue { $0.failures } == [.remoteError(code: 15, reason: "pinned to another key")])
        #expect(delegate.log.withLockedValue { $0.closed } == 1)
        delegate.verdict.withLockedValue { $0 }!.succeed(.awaitWelcome)  // too late: nothing happens
        #expect(delegate.log.withLockedValue { $0.connected } == 0)
    }

    /// The ERROR codes a fresh inbound link answers `frame` with, in the phase `setUp` leads to.
    func answer(to frame: Frame, connected: Bool) throws -> [ErrorCode?] {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate, heartbeat: true)
        if connected {
            try channel.writeInbound(bobsHello)
            delegate.verdict.withLockedValue { $0 }!.succeed(.accept)
        }
        _ = try written(channel)
        try channel.writeInbound(frame)
        defer { #expect(!channel.isActive, "every refusal closes the connection") }
        return try written(channel).map { try ErrorMessage(frame: $0).code }
    }

    /// PROTOCOL.md §5: a PONG that is not 8 bytes is malformed, as a PING is; it used to be ignored.
    @Test(arguments: [7, 9, 0]) func aPongThatIsNot8BytesIsMalformed(length: Int) throws {
        let pong = Frame(type: .pong, payload: ByteBuffer(bytes: Array(repeating: 0, count: length)))
        #expect(try answer(to: pong, connected: true) == [.malformedPayload])
        #expect(try answer(to: pong, connected: false) == [.malformedPayload], "PONG is allowed before HELLO too")
    }

    @Test func aWellFormedPongIsAcceptedSilently() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate, heartbeat: true)
        try channel.writeInbound(bobsHello)
        delegate.verdict.withLockedValue { $0 }!.succeed(.accept)
        _ = try written(channel)
        try channel.writeInbound(Frame(type: .pong, payload: ByteBuffer(integer: UInt64(42))))
        #expect(try written(channel).isEmpty)
        #expect(channel.isActive)
    }

    /// PROTOCOL.md §4 steps 8 and 9: the state is checked before the payload. A frame both out of
    /// place and malformed gets 1; one that every state allows (ERROR, PING, PONG, BYE) gets 6.
    @Test func theStateIsCheckedBeforeThePayload() throws {
        let malformed = { (type: MessageType, bytes: Int) in Frame(type: type, payload: ByteBuffer(bytes: Array(repeating: 0xff, count: bytes))) }
        // Out of place and malformed: protocolViolation.
        #expect(try answer(to: malformed(.text, 3), connected: false) == [.protocolViolation])
        #expect(try answer(to: malformed(.pair, 5), connected: false) == [.protocolViolation])
        #expect(try answer(to: malformed(.welcome, 1), connected: false) == [.protocolViolation])
        #expect(try answer(to: malformed(.welcome, 1), connected: true) == [.protocolViolation])
        #expect(try answer(to: malformed(.hello, 4), connected: true) == [.protocolViolation])
        // Allowed in every state and malformed: malformedPayload, before and after the handshake.
        for connected in [false, true] {
            #expect(try answer(to: malformed(.bye, 1), connected: connected) == [.malformedPayload])
            #expect(try answer(to: malformed(.ping, 7), connected: connected) == [.malformedPayload])
            #expect(try answer(to: malformed(.pong, 9), connected: connected) == [.malformedPayload])
            #expect(try answer(to: malformed(.error, 3), connected: connected) == [.malformedPayload])
        }
        // Allowed in its state and malformed: malformedPayload.
        #expect(try answer(to: malformed(.hello, 4), connected: false) == [.malformedPayload])
    }

    @Test func aFloodWhileTheHelloIsCheckedIsRefused() throws {
        let delegate = RecordingDelegate()
        let (channel, _) = try connection(.inbound, delegate: delegate)
        _ = try written(channel)
        try channel.writeInbound(bobsHello)
        for _ in 0...PeerConnectionHandler.maxFramesWhileChecking { try channel.writeInbound(TextMessage(text: "spam").frame()) }
        #expect(try written(channel).map { try ErrorMessage(frame: $0).code } == [.protocolViolation])
        #expect(!channel.isActive)
    }
}
