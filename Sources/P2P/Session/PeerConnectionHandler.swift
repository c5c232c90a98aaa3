import NIOCore
import NIOSSL
import NIOTLS

/// The per-connection state machine: HELLO exchange, accept/deny, then delivery of messages to the session.
///
/// ```
/// awaitingHello ──HELLO──▶ awaitingDecision (inbound) ──accept──▶ connected
///               └─HELLO──▶ awaitingWelcome  (outbound) ─WELCOME─▶ connected
/// ```
/// Any frame that does not fit the state, and any malformed frame, ends the connection with an ERROR frame.
final class PeerConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = Frame
    typealias OutboundOut = Frame

    private enum Phase { case awaitingHello, awaitingDecision, awaitingWelcome, connected, closing }

    private let session: Session
    private let link: PeerLink
    private var phase = Phase.awaitingHello
    private var handshakeTimer: Scheduled<Void>?

    init(session: Session, link: PeerLink) {
        self.session = session
        self.link = link
    }

    func channelActive(context: ChannelHandlerContext) {
        // With TLS, HELLO waits for the TLS handshake: it must travel encrypted and name the proven key.
        if !link.secure { sendHello(context: context) }
        handshakeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: session.configuration.handshakeTimeout) {
            guard self.phase == .awaitingHello else { return }
            let failure = SessionError.timedOut(seconds: self.session.configuration.handshakeTimeout.seconds)
            if self.link.secure && self.link.provenPeer == nil {
                // No TLS channel to carry an ERROR frame yet: just hang up.
                self.session.setFailure(failure, on: self.link)
                self.close(context: context)
            } else {
                self.fail(context: context, code: .handshakeTimeout, reason: "no HELLO within the handshake timeout", failure: failure)
            }
        }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLHandler.self).peerCertificate
            link.provenPeer = certificate.flatMap(PeerCertificate.peerID(of:))
            sendHello(context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func sendHello(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(session.hello(for: link).frame()), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshakeTimer?.cancel()
        phase = .closing
        session.linkClosed(link)
        link.closed()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        link.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        do {
            try handle(frame, context: context)
        } catch {
            fail(context: context, code: error.code, reason: error.description, failure: .protocolViolation(error.description))
        }
    }

    private func handle(_ frame: Frame, context: ChannelHandlerContext) throws(WireError) {
        switch (phase, frame.type) {
        case (.closing, _):
            return
        case (_, .error):
            let message = try ErrorMessage(frame: frame)
            session.linkReceivedError(link, message)
            close(context: context)
        case (_, .bye):
            _ = try Bye(frame: frame)
            session.setFailure(.peerLeft, on: link)
            close(context: context)
        case (.awaitingHello, .hello):
            handshakeTimer?.cancel()
            let hello = try Hello(frame: frame)
            switch session.linkReceivedHello(link, hello, remoteAddress: context.channel.remoteAddress) {
            case .reject(let code, let reason, let failure):
                session.refused(hello, from: context.channel.remoteAddress, because: failure)
                fail(context: context, code: code, reason: reason, failure: failure)
            case .awaitWelcome:
                phase = .awaitingWelcome
            case .accept:
                accept(context: context)
            case .ask(let request):
                phase = .awaitingDecision
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                session.askToAccept(request) { accepted in
                    loopBound.eventLoop.execute { loopBound.value.0.decided(accepted, context: loopBound.value.1) }
                }
            }
        case (.awaitingWelcome, .welcome):
            _ = try Welcome(frame: frame)
            becomeConnected(context: context)
        case (.connected, let type) where !type.isControl:
            try session.deliver(frame, from: link)
        default:
            throw .unexpectedMessage(frame.type, phaseDescription)
        }
    }

    private var phaseDescription: String {
        switch phase {
        case .awaitingHello: "before HELLO"
        case .awaitingDecision: "while the connection request is pending"
        case .awaitingWelcome: "before WELCOME"
        case .connected: "after the handshake"
        case .closing: "while closing"
        }
    }

    /// Called on the event loop once the user (or policy) answered the connection request.
    private func decided(_ accepted: Bool, context: ChannelHandlerContext) {
        guard phase == .awaitingDecision else { return }
        if accepted {
            accept(context: context)
        } else {
            fail(context: context, code: .connectionDenied, reason: "\(session.displayName) declined the connection", failure: .denied(by: "you"))
        }
    }

    private func accept(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(Welcome().frame()), promise: nil)
        becomeConnected(context: context)
    }

    /// Heartbeats start only now: before, the handshake timeout is the one clock that runs, so a
    /// silent client always gets its handshake-timeout ERROR.
    private func becomeConnected(context: ChannelHandlerContext) {
        phase = .connected
        let configuration = session.configuration
        let pipeline = context.pipeline.syncOperations
        // Socket-side of the frame batcher, so the idle timer sees one write per flush, not one per frame.
        if let batcher = try? pipeline.handler(type: FrameWriteBatcher.self) {
            try? pipeline.addHandler(
                IdleStateHandler(readTimeout: configuration.heartbeatTimeout, writeTimeout: configuration.heartbeatInterval),
                position: .before(batcher))
        }
        session.linkConnected(link)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        switch error {
        case let wire as WireError:
            fail(context: context, code: wire.code, reason: wire.description, failure: .protocolViolation(wire.description))
        case let tls as NIOSSLError:
            session.setFailure(.tlsFailed("\(tls)"), on: link, overwrite: false)
            close(context: context)
        case is HeartbeatHandler.PeerSilent:
            session.setFailure(.heartbeatLost, on: link)
            // Report the peer gone now: closing waits for TLS close_notify from a peer that is silent by
            // definition, up to NIOSSL's 5 s shutdown timeout. The later channelInactive finds the link
            // already gone and says nothing twice.
            session.linkClosed(link)
            close(context: context)
        default:
            session.setFailure(.connectionLost, on: link)
            close(context: context)
        }
    }

    /// Tells the peer why with an ERROR frame, then closes.
    private func fail(context: ChannelHandlerContext, code: ErrorCode, reason: String, failure: SessionError) {
        guard phase != .closing else { return }
        session.setFailure(failure, on: link)
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

extension MessageType {
    /// Types that belong to the connection itself, never delivered to the application.
    static let control: Set<MessageType> = [.hello, .welcome, .error, .ping, .pong, .bye]

    /// `control.contains(self)` without hashing, for the per-frame path.
    var isControl: Bool {
        switch self {
        case .hello, .welcome, .error, .ping, .pong, .bye: true
        default: false
        }
    }
}

extension TimeAmount {
    var seconds: Double { Double(nanoseconds) / 1e9 }
}
