import Foundation
import NIOCore
import NIOSSL
import NIOTLS

/// The per-connection state machine: HELLO exchange, accept/deny, then delivery of messages to the session.
///
/// ```
/// awaitingHello ──HELLO──▶ checkingHello ─┬─▶ awaitingContext ─CONTEXT─▶ awaitingDecision (inbound) ──accept──▶ connected
///                                        ├─▶ awaitingDecision (inbound, peer without CONTEXT)
///                                        └─▶ awaitingWelcome  (outbound) ─WELCOME─▶ connected
/// ```
/// When both HELLOs carry `Capabilities.connectionContext`, the initiator's second frame is CONTEXT: the
/// acceptor asks its application only once it arrived (and reads it in any state).
/// Any frame that does not fit the state, and any malformed frame, ends the connection with an ERROR
/// frame, checked in PROTOCOL.md §4's order: the state first (ERROR 1), then the payload (ERROR 6). A
/// frame the state does not allow is refused without being decoded; ERROR, PING, PONG and BYE are
/// allowed in every state, so they are always decoded. While the HELLO is being checked (the trust
/// store is read off the event loop) reading pauses and frames that already arrived wait, to be handled
/// in the state the check leads to.
final class PeerConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = Frame
    typealias OutboundOut = Frame

    enum Phase { case awaitingHello, checkingHello, awaitingContext, awaitingDecision, awaitingWelcome, connected, closing }

    /// Frames a peer may send while its HELLO is checked before that counts as flooding.
    static let maxFramesWhileChecking = 64

    /// Sent down the pipeline by an initiator's connect call whose timeout passed before CONNECTED
    /// (e.g. the acceptor's user never answered): the handler gives up, with ERROR 10 when TLS can carry it.
    struct ConnectTimedOut: Sendable {
        var timeout: TimeAmount
    }

    /// Sent down the pipeline by a session that leaves politely: the handler sends BYE and ignores what
    /// still arrives; the session closes the link once the peer has (see `Connections.sayGoodbye`).
    struct Leaving: Sendable {}

    private let delegate: any LinkDelegate
    private let link: PeerLink
    private(set) var phase = Phase.awaitingHello
    private var handshakeTimer: Scheduled<Void>?
    private var heldFrames: [Frame] = []
    /// The TLS handshake (or the transport's own proof) completed: from then on an ERROR frame can reach the peer.
    private var tlsDone = false
    /// Who the connected peer is, as the session knows it: looked up once, not for every frame.
    private var peer: PeerInfo?
    /// The peer's HELLO, once it arrived.
    private var remoteHello: Hello?
    /// What our HELLO announced (sent before the peer's can arrive: both wait for TLS).
    private var ownCapabilities: Capabilities = []
    /// Inbound: the initiator's CONTEXT is still to come (both HELLOs carry the capability).
    private var awaitsContext = false
    /// Inbound: the request waiting for its CONTEXT before the application sees it.
    private var pendingRequest: ConnectionRequest?

    init(delegate: any LinkDelegate, link: PeerLink) {
        self.delegate = delegate
        self.link = link
    }

    /// An outbound link's handlers are added once its TCP connection won the race (`ConnectionRace`),
    /// so the channel is active already and no `channelActive` will come.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { begin(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        begin(context: context)
        context.fireChannelActive()
    }

    /// Starts the handshake: HELLO (without TLS) and its timer. Once, whichever of the two calls it.
    private func begin(context: ChannelHandlerContext) {
        guard handshakeTimer == nil else { return }
        // With TLS, HELLO waits for the TLS handshake: it must travel encrypted and name the proven key.
        if !link.secure { sendHello(context: context) }
        let timeout = delegate.handshakeTimeout
        handshakeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            guard self.phase == .awaitingHello else { return }
            let failure = SessionError.timedOut(seconds: timeout.seconds)
            if self.link.secure && !self.tlsDone {
                // No TLS channel to carry an ERROR frame yet: just hang up.
                self.delegate.link(self.link, failed: failure, overwrite: true)
                self.close(context: context)
            } else {
                self.fail(context: context, code: .handshakeTimeout, reason: "no HELLO within the handshake timeout", failure: failure)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is Leaving {
            leave(context: context)
            return
        }
        if let timedOut = event as? ConnectTimedOut {
            giveUp(after: timedOut.timeout, context: context)
            return
        }
        if case .handshakeCompleted = event as? TLSUserEvent {
            let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLHandler.self).peerCertificate
            secured(proving: certificate.flatMap(PeerCertificate.peerID(of:)), context: context)
        } else if let secured = event as? TransportSecured {
            self.secured(proving: secured.peer, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The secure channel is up and proves `peer`: HELLO can travel now, and name the proven key.
    private func secured(proving peer: PeerID?, context: ChannelHandlerContext) {
        guard link.secure, !tlsDone else { return }
        tlsDone = true
        delegate.link(link, proved: peer)
        sendHello(context: context)
    }

    /// BYE, then nothing more is read into the session while the peer closes (PROTOCOL.md §7); before
    /// TLS completes there is no channel for a frame, so the link just closes.
    private func leave(context: ChannelHandlerContext) {
        guard phase != .closing else { return }
        phase = .closing
        guard !link.secure || tlsDone else { return context.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(Bye().frame()), promise: nil)
    }

    /// The initiator stops waiting for the acceptor's HELLO or WELCOME (PROTOCOL.md §9, connect timeout).
    /// The acceptor is told with ERROR 10 rather than a bare close, so its side can say the other peer
    /// gave up waiting instead of "connection lost"; before TLS completes there is no channel for it.
    private func giveUp(after timeout: TimeAmount, context: ChannelHandlerContext) {
        guard phase != .connected, phase != .closing else { return }
        let failure = SessionError.timedOut(seconds: timeout.seconds)
        guard !link.secure || tlsDone else {
            delegate.link(link, failed: failure, overwrite: true)
            close(context: context)
            return
        }
        let awaited = phase == .awaitingWelcome ? "WELCOME (the connection request was not answered)" : "HELLO"
        let seconds = timeout.nanoseconds % 1_000_000_000 == 0 ? "\(timeout.nanoseconds / 1_000_000_000)" : "\(timeout.seconds)"
        fail(context: context, code: .handshakeTimeout, reason: "no \(awaited) within \(seconds) s; giving up", failure: failure)
    }

    private func sendHello(context: ChannelHandlerContext) {
        let hello = delegate.hello(for: link)
        ownCapabilities = hello.capabilities
        context.writeAndFlush(wrapOutboundOut(hello.frame()), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshakeTimer?.cancel()
        // The peer may have said why it left while its HELLO was being checked: that is the reason.
        for frame in heldFrames where frame.type == .error || frame.type == .bye {
            if frame.type == .bye {
                delegate.link(link, failed: .peerLeft, overwrite: true)
            } else if let message = try? ErrorMessage(frame: frame) {
                delegate.link(link, receivedError: message)
            }
        }
        heldFrames = []
        phase = .closing
        delegate.linkClosed(link)
        link.closed()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        link.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        receive(unwrapInboundIn(data), context: context)
    }

    private func receive(_ frame: Frame, context: ChannelHandlerContext) {
        do {
            try handle(frame, context: context)
        } catch {
            fail(context: context, code: error.code, reason: error.description, failure: .protocolViolation(error.description))
        }
    }

    /// Each case that handles a frame decodes its payload itself; the `default` refuses a frame the
    /// phase does not allow before looking at its payload (PROTOCOL.md §4 steps 8 and 9).
    private func handle(_ frame: Frame, context: ChannelHandlerContext) throws(WireError) {
        switch (phase, frame.type) {
        case (.closing, .bye), (.closing, .error):
            // The peer is leaving too: nothing follows its BYE (or ERROR), so closing now cannot reset
            // the link, and two sessions leaving at once do not wait out each other's goodbye timeout.
            context.close(promise: nil)
        case (.closing, _):
            return
        case (.checkingHello, _):
            guard heldFrames.count < Self.maxFramesWhileChecking else {
                throw .unexpectedMessage(frame.type, "in a flood of \(heldFrames.count) frames before the HELLO was checked")
            }
            heldFrames.append(frame)
        case (_, .error):
            let message = try ErrorMessage(frame: frame)
            delegate.link(link, receivedError: message)
            close(context: context)
        case (_, .bye):
            _ = try Bye(frame: frame)
            delegate.link(link, failed: .peerLeft, overwrite: true)
            close(context: context)
        case (.awaitingHello, .hello):
            handshakeTimer?.cancel()
            let hello = try Hello(frame: frame)
            remoteHello = hello
            awaitsContext = link.direction == .inbound && hello.capabilities.contains(.connectionContext)
                && ownCapabilities.contains(.connectionContext)
            phase = .checkingHello
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            let verdict = delegate.link(link, receivedHello: hello, from: context.channel.remoteAddress)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            verdict.hop(to: context.eventLoop).whenComplete { result in
                let (handler, context) = loopBound.value
                handler.checked(result, context: context)
            }
        case (.awaitingWelcome, .welcome):
            _ = try Welcome(frame: frame)
            becomeConnected(context: context)
        case (_, .context) where awaitsContext:
            let received = try ConnectionContext(frame: frame)
            awaitsContext = false
            guard phase == .awaitingContext, var request = pendingRequest else { return }  // accepted without asking
            handshakeTimer?.cancel()
            pendingRequest = nil
            request.context = received.bytes.isEmpty ? nil : Data(received.bytes)
            ask(request, context: context)
        case (.connected, let type) where !type.isControl:
            // A link that lost its peer to another link delivers nothing.
            guard let peer else { return }
            try delegate.link(link, deliver: frame, from: peer)
        default:
            throw .unexpectedMessage(frame.type, phaseDescription)
        }
    }

    /// The HELLO check is done: act on it, then handle what arrived meanwhile in the state it led to.
    private func checked(_ result: Result<HelloVerdict, any Error>, context: ChannelHandlerContext) {
        guard phase == .checkingHello else { return }
        switch result {
        case .failure(let error):
            fail(context: context, code: .protocolViolation, reason: "cannot check the HELLO", failure: .protocolViolation("\(error)"))
        case .success(.reject(let rejection)):
            fail(context: context, code: rejection.code, reason: rejection.reason, failure: rejection.failure)
        case .success(.awaitWelcome):
            phase = .awaitingWelcome
            sendContext(context: context)
        case .success(.accept):
            accept(context: context)
        case .success(.ask(let request)) where awaitsContext:
            phase = .awaitingContext
            pendingRequest = request
            let timeout = delegate.handshakeTimeout
            handshakeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                guard self.phase == .awaitingContext else { return }
                self.fail(context: context, code: .handshakeTimeout, reason: "no CONTEXT within the handshake timeout",
                          failure: .timedOut(seconds: timeout.seconds))
            }
        case .success(.ask(let request)):
            ask(request, context: context)
        }
        let held = heldFrames
        heldFrames = []
        for frame in held where phase != .closing { receive(frame, context: context) }
        if phase != .closing { context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in } }
    }

    /// Initiator, once the acceptor's HELLO passed: a CONTEXT (empty for none) if the acceptor reads
    /// one; a context the acceptor cannot read ends the attempt rather than vanish unsaid.
    private func sendContext(context: ChannelHandlerContext) {
        guard let remoteHello, phase == .awaitingWelcome else { return }
        if ownCapabilities.contains(.connectionContext) && remoteHello.capabilities.contains(.connectionContext) {
            context.writeAndFlush(wrapOutboundOut(ConnectionContext(bytes: link.requestContext).frame()), promise: nil)
        } else if !link.requestContext.isEmpty {
            delegate.link(link, failed: .contextNotSupported(by: PeerText(remoteHello.displayName)), overwrite: true)
            phase = .closing
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(Bye().frame())).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// Puts the request to the application; its answer comes back on the event loop.
    private func ask(_ request: ConnectionRequest, context: ChannelHandlerContext) {
        phase = .awaitingDecision
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        delegate.decide(request, over: link).hop(to: context.eventLoop).whenComplete { result in
            let (handler, context) = loopBound.value
            // A handler that failed declines; one that ran out of time is nil.
            let answer: Bool? = switch result { case .success(let answer): answer; case .failure: false }
            handler.decided(answer, context: context)
        }
    }

    private var phaseDescription: String {
        switch phase {
        case .awaitingHello: "before HELLO"
        case .checkingHello: "while the HELLO is checked"
        case .awaitingContext: "before CONTEXT"
        case .awaitingDecision: "while the connection request is pending"
        case .awaitingWelcome: "before WELCOME"
        case .connected: "after the handshake"
        case .closing: "while closing"
        }
    }

    /// Called on the event loop once the user (or policy) answered the connection request.
    /// `accepted` is nil when nobody answered within the decision timeout.
    private func decided(_ accepted: Bool?, context: ChannelHandlerContext) {
        guard phase == .awaitingDecision else { return }
        switch accepted {
        case true?:
            accept(context: context)
        case nil:
            let waited = delegate.requestDecisionTimeout
            // Not "declined": ERROR 10, the handshake's time ran out (PROTOCOL.md §9).
            fail(context: context, code: .handshakeTimeout,
                 reason: "\(delegate.displayName) did not answer the connection request within \(Int(waited.components.seconds)) s",
                 failure: .timedOut(seconds: Double(waited.components.seconds)))
        case false?:
            fail(context: context, code: .connectionDenied, reason: "\(delegate.displayName) declined the connection", failure: .denied(by: "you"))
        }
    }

    /// Connected before WELCOME leaves: the peer's connect call returns when WELCOME arrives, and what
    /// it sends next must find this side connected (a PAIR right away was refused as from nobody).
    private func accept(context: ChannelHandlerContext) {
        becomeConnected(context: context)
        context.writeAndFlush(wrapOutboundOut(Welcome().frame()), promise: nil)
    }

    /// Heartbeats start only now: before, the handshake timeout is the one clock that runs, so a
    /// silent client always gets its handshake-timeout ERROR.
    private func becomeConnected(context: ChannelHandlerContext) {
        phase = .connected
        let pipeline = context.pipeline.syncOperations
        // Socket-side of the frame batcher, so the idle timer sees one write per flush, not one per frame.
        if let batcher = try? pipeline.handler(type: FrameWriteBatcher.self) {
            try? pipeline.addHandler(
                LoopClockIdleStateHandler(readTimeout: delegate.heartbeatTimeout, writeTimeout: delegate.heartbeatInterval),
                position: .before(batcher))
        }
        peer = delegate.linkConnected(link)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        switch error {
        case let wire as WireError:
            fail(context: context, code: wire.code, reason: wire.description, failure: .protocolViolation(wire.description))
        case let tls as NIOSSLError:
            delegate.link(link, failed: .tlsFailed("\(tls)"), overwrite: false)
            close(context: context)
        case let backlog as UnreadBacklogGuard.PeerNotReading:
            // The ERROR goes out best effort: the peer reads nothing, so waiting for the write would
            // wait for ever. Reported gone at once, as for a silent peer below.
            guard phase != .closing else { return }
            delegate.link(link, failed: .peerNotReading(queuedBytes: backlog.queuedBytes, queuedFrames: backlog.queuedFrames), overwrite: true)
            let reason = "you read nothing while \(backlog.queuedFrames) frames (\(backlog.queuedBytes) bytes) waited for you"
            context.writeAndFlush(wrapOutboundOut(ErrorMessage(code: .notReading, reason: reason).frame()), promise: nil)
            delegate.linkClosed(link)
            close(context: context)
        case is HeartbeatHandler.PeerSilent:
            delegate.link(link, failed: .heartbeatLost, overwrite: true)
            // Report the peer gone now: closing waits for TLS close_notify from a peer that is silent by
            // definition, up to NIOSSL's 5 s shutdown timeout. The later channelInactive finds the link
            // already gone and says nothing twice.
            delegate.linkClosed(link)
            close(context: context)
        default:
            delegate.link(link, failed: .connectionLost, overwrite: true)
            close(context: context)
        }
    }

    /// Tells the peer why with an ERROR frame, then closes.
    private func fail(context: ChannelHandlerContext, code: ErrorCode, reason: String, failure: SessionError) {
        guard phase != .closing else { return }
        delegate.link(link, failed: failure, overwrite: true)
        phase = .closing
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ErrorMessage(code: code, reason: reason).frame())).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private func close(context: ChannelHandlerContext) {
        phase = .closing
        context.close(promise: nil)
    }
}

extension TimeAmount {
    var seconds: Double { Double(nanoseconds) / 1e9 }
}
