import ArgumentParser
import Foundation
import NIOCore
import P2P

/// The chat's one loop: session events, typed lines and connection requests are handled in
/// arrival order, so no state is shared between threads.
final class ChatLoop {
    private enum Input: Sendable {
        case event(SessionEvent)
        case line(String)
        case key(Key)
        case endOfInput
        case request(ConnectionRequest, CheckedContinuation<Bool, Never>)
        case imageOffer(IncomingOffer, CheckedContinuation<Bool, Never>)
        case transfer(TransferEvent)
        case conversation(ConversationEvent)
        /// `unasked`: a dial nobody asked for by name (a member coming back, a peer a piped group chat
        /// found), which reports nothing unless --verbose: a stale DNS-SD record is not the user's error.
        case connectFailed(String, any Error, unasked: PeerID?)
        case waitForPeerExpired
        case reconnectTick
        case acknowledgementsOverdue
        case interrupt
    }

    /// A line sent to one peer.
    private struct SentLine: Hashable {
        var peer: PeerID
        var messageID: UInt64
    }

    private let session: Session
    private let view: ChatView
    private let options: ChatCommand
    private let interactive: Bool
    private let inputs: AsyncStream<Input>
    private let feed: AsyncStream<Input>.Continuation

    private var connected: [PeerID: PeerInfo] = [:]
    /// Everyone this chat talks to: peers that were connected, and peers with lines waiting in the outbox.
    /// A line goes to all of them; those away get it from the outbox when they are back.
    private var members: [PeerID: PeerInfo] = [:]
    /// Members that refused a reconnect: not dialled again by this chat.
    private var noRedial: Set<PeerID> = []
    /// Lines that waited in the outbox: their delivery is worth telling the user about.
    private var queued: Set<SentLine> = []
    /// Lines typed before anyone was connected; sent to the first peer that connects.
    private var heldLines: [String] = []
    private var inputEnded = false
    /// Set 10 s after piped input ended: stop waiting for connected peers to acknowledge what was sent.
    private var acknowledgementsOverdue = false
    private var conversation: Conversation!
    /// Discovered peers in the order they were numbered for the picker.
    private var pickList: [PeerInfo] = []
    /// A y/n question on the input line: its prompt and who waits for the answer.
    private var pendingQuestion: (prompt: String, answer: CheckedContinuation<Bool, Never>)?
    private var transfers: FileTransfers!
    /// The library's event streams, moved into `inputs`: drained before the chat returns.
    private var pumps: (session: EventPump, features: [EventPump])!
    private var dialing: Set<PeerID> = []
    /// What is typed on the input line (interactive only).
    private var typed = ""
    /// The pick-list entry that Enter on an empty line connects to.
    private var selection = 0

    init(session: Session, view: ChatView, options: ChatCommand) {
        self.session = session
        self.view = view
        self.options = options
        interactive = Terminal.stdinIsTTY && !options.json
        (inputs, feed) = AsyncStream.makeStream(of: Input.self)
    }

    /// Whether this chat dials every peer it discovers (a scripted group chat).
    private var dialsEveryone: Bool { !interactive && options.to == nil && options.connect == nil }

    func run() async -> ExitCode {
        let feed = self.feed
        let view = self.view
        let accept = options.yes
        let json = options.json
        session.setConnectionRequestHandler { request in
            if let context = request.context { Self.showContext(context, of: request.peer, json: json) }
            if accept { return true }
            return await withCheckedContinuation { feed.yield(.request(request, $0)) }
        }
        do {
            conversation = Conversation(session: session, history: try ChatHistory())
        } catch {
            view.error("history", error.description)
            return ExitStatus.failure
        }
        let conversationPump = EventPump(conversation.events()) { feed.yield(.conversation($0)) }
        showOutbox()
        var transferOptions = FileTransfers.Configuration()
        // A chat shows what it receives as images: one that is not the image it was offered as is
        // refused before it is kept, and the sender is told (it would otherwise read as delivered).
        transferOptions.checksImageSignatures = true
        transfers = FileTransfers(session: session, directory: options.downloadsDirectory, configuration: transferOptions)
        transfers.setOfferHandler { offer in
            // Chat takes images only, of the types whose signature it checks; files go through
            // `p2p send` / `p2p receive`.
            guard MediaType.images.contains(offer.info.mediaType) else { return false }
            if accept { return true }
            return await withCheckedContinuation { feed.yield(.imageOffer(offer, $0)) }
        }
        let transferPump = EventPump(transfers.events()) { feed.yield(.transfer($0)) }
        let sessionPump = EventPump(session.events()) { feed.yield(.event($0)) }
        pumps = (sessionPump, [conversationPump, transferPump])
        Signals.onInterrupt { feed.yield(.interrupt) }

        do {
            try await session.start()
        } catch {
            view.error("listen", error.description)
            return await finish(ExitStatus.failure, outbox: false)
        }
        view.listening(session)
        do {
            try session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: options.network.port, findsByName: options.to != nil) {
            view.warning("no-discovery", DiscoveryNotice.listeningWithoutDiscovery(port: options.network.port))
        } catch {
            view.error("discovery", error.description)
            if options.connect == nil { return await finish(ExitStatus.noDaemon, outbox: false) }
        }
        if let endpoint = options.connect.flatMap(Endpoint.init) {
            let context = requestContext
            dial(endpoint.description) { try await $0.connect(to: endpoint, context: context) }
        } else if let target = options.to {
            view.note("Waiting for \(target)…")
            let seconds = options.timeout
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                feed.yield(.waitForPeerExpired)
            }
        } else if interactive {
            view.note("Looking for peers. Type a number to connect, or wait for someone to connect to you. /help for commands.")
        }
        if interactive {
            RawTerminal.enable()
            Task { for await key in RawTerminal.keys() { feed.yield(.key(key)) } }
            render()
        } else {
            Task {
                for await line in StandardInput.lines() { feed.yield(.line(line)) }
                feed.yield(.endOfInput)
            }
        }

        Task {
            // Links can die without a word (a cut cable): members still advertised are dialled again.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                feed.yield(.reconnectTick)
            }
        }

        var status = ExitCode.success
        loop: for await input in inputs {
            switch input {
            case .event(let event):
                handle(event)
            case .line(let line):
                if let stop = handle(line: line) { status = stop; break loop }
            case .key(let key):
                if let stop = handle(key) { status = stop; break loop }
            case .endOfInput:
                inputEnded = true
                Task {
                    try? await Task.sleep(for: .seconds(10))
                    feed.yield(.acknowledgementsOverdue)
                }
            case .request(let request, let answer):
                ask(request, answer)
            case .imageOffer(let offer, let answer):
                let info = offer.info
                ask("\(Terminal.sanitize(info.peer.displayName)) sends the image \(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size))). Accept?",
                    answer, denied: "declined an image from \(Terminal.sanitize(info.peer.displayName)); use --yes to accept")
            case .transfer(let event):
                transferred(event)
            case .conversation(let event):
                handle(event)
            case .connectFailed(let target, let error, let unasked):
                let denied = if case .denied? = error as? SessionError { true } else { false }
                if let unasked {
                    dialing.remove(unasked)
                    if denied { noRedial.insert(unasked) }
                    if options.network.verbose { view.note("connecting to \(Terminal.sanitize(target)) failed: \(error)") }
                    break
                }
                let message = if case .connectFailed? = error as? SessionError { "\(error)" } else { "cannot connect to \(target): \(error)" }
                view.error(denied ? "denied" : "connect", message)
                if options.connect != nil || options.to != nil { status = ExitStatus.connectionFailed; break loop }
            case .waitForPeerExpired:
                if connected.isEmpty && dialing.isEmpty {
                    view.error("not-found", "no peer called \(options.to ?? "") appeared within \(options.timeout) s")
                    status = ExitStatus.peerNotFound
                    break loop
                }
            case .reconnectTick:
                redialMembers()
            case .acknowledgementsOverdue:
                acknowledgementsOverdue = true
            case .interrupt:
                break loop
            }
            // Piped input is done once every held line went out and connected peers acknowledged them
            // (or did not within 10 s: those lines stay in the outbox).
            if inputEnded && heldLines.isEmpty && (acknowledgementsOverdue || !awaitingAcknowledgement) { break loop }
            if interactive { render() }
        }
        return await finish(status)
    }

    /// Leaves the chat: closes the session, shows what its streams still hold, then (`outbox`, when the
    /// chat got going) what waits in the outbox.
    private func finish(_ status: ExitCode, outbox: Bool = true) async -> ExitCode {
        if interactive {
            Output.setInputLine(nil)
            RawTerminal.restore()
        }
        pendingQuestion?.answer.resume(returning: false)
        pendingQuestion = nil
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left). Lines and images are shown up to the close: a line that
        // arrived (and was acknowledged, so its sender counts it delivered) is never left unshown.
        await pumps.session.drain()
        await session.close()
        for pump in pumps.features { await pump.drain() }
        feed.finish()
        for await input in inputs { showLeftover(input) }
        if outbox { showOutbox() }
        return status
    }

    /// An input still queued when the chat ended: shown, but nothing more is done about it (no dialling,
    /// no questions; the session is closed).
    private func showLeftover(_ input: Input) {
        switch input {
        case .event(.peerChanged(let peer, let state, let reason)):
            view.peerChanged(peer, state, reason: reason)
        case .event(let event):
            handle(event)  // Apart from peer changes, session events are only shown.
        case .conversation(let event):
            handle(event)
        case .transfer(let event):
            transferred(event)
        case .request(_, let answer), .imageOffer(_, let answer):
            answer.resume(returning: false)
        case .line, .key, .endOfInput, .connectFailed, .waitForPeerExpired, .reconnectTick, .acknowledgementsOverdue, .interrupt:
            // Typing, dialling and timers of a chat that is over (a dial fails because the session closed).
            break
        }
    }

    private func handle(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, let state, let reason):
            view.peerChanged(peer, state, reason: reason)
            switch state {
            case .available:
                peerAvailable(peer)
            case .unavailable:
                pickList.removeAll { $0.id == peer.id }
            case .connected:
                dialing.remove(peer.id)
                connected[peer.id] = peer
                members[peer.id] = peer
                noRedial.remove(peer.id)
                sendHeldLines()
            case .disconnected:
                dialing.remove(peer.id)
                connected[peer.id] = nil
            case .connecting:
                break
            }
        case .advertising(let name):
            view.advertising(as: name, requested: options.network.displayName)
        case .refused(let peer, let reason):
            view.error("refused", "REFUSED \(Terminal.sanitize(peer.displayName)) (\(peer.fingerprint)): \(reason)")
        case .discoveryFailed(let error):
            DiscoveryNotice.show(error, json: options.json)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) session events (the chat fell behind)")
        }
    }

    private func peerAvailable(_ peer: PeerInfo) {
        if members[peer.id] != nil {
            redial(peer)
        } else if let target = options.to {
            if connected.isEmpty, session.peer(matching: target)?.id == peer.id { dial(peer) }
        } else if dialsEveryone {
            dial(peer, unasked: true)
        } else if interactive, !pickList.contains(where: { $0.id == peer.id }) {
            pickList.append(peer)
            view.note("[\(pickList.count)] \(Terminal.sanitize(peer.displayName)) (\(peer.id.short)) on \(peer.addresses.first ?? "?")")
        }
    }

    private func dial(_ peer: PeerInfo, unasked: Bool = false) {
        guard connected[peer.id] == nil, dialing.insert(peer.id).inserted else { return }
        let context = requestContext
        dial(peer.displayName, unasked: unasked ? peer.id : nil) { try await $0.connect(to: peer.id, context: context) }
    }

    private func dial(_ target: String, unasked: PeerID? = nil, _ connect: @escaping @Sendable (Session) async throws -> PeerInfo) {
        let session = self.session
        let feed = self.feed
        Task {
            do {
                _ = try await connect(session)
            } catch {
                feed.yield(.connectFailed(target, error, unasked: unasked))
            }
        }
    }

    /// Dials a member that is away, unless it refused us.
    private func redial(_ peer: PeerInfo) {
        guard !noRedial.contains(peer.id) else { return }
        dial(peer, unasked: true)
    }

    private func redialMembers() {
        for peer in session.availablePeers where members[peer.id] != nil && connected[peer.id] == nil && !dialing.contains(peer.id) {
            redial(peer)
        }
    }

    private func handle(_ event: ConversationEvent) {
        switch event {
        case .received(let entry, let peer):
            view.message(entry, from: peer)
        case .delivered(let entry):
            let waited = queued.remove(SentLine(peer: entry.peer, messageID: entry.messageID)) != nil
            view.delivered(entry, afterWaiting: waited)
        case .storageFailed(let error):
            view.error("history", error.description)
        case .eventsDropped(let count):
            view.error("events", "missed \(count) chat events (the chat fell behind)")
        }
    }

    /// Whether a connected peer has not acknowledged a line yet.
    private var awaitingAcknowledgement: Bool {
        guard let pending = try? conversation.pending() else { return false }
        return pending.contains { connected[$0.peer] != nil }
    }

    /// Lines in the outbox, per peer; at start-up their peers become members, so they are dialled when seen.
    private func showOutbox() {
        guard let pending = try? conversation.pending(), !pending.isEmpty else { return }
        var counts: [PeerID: (name: String, count: Int)] = [:]
        for entry in pending {
            counts[entry.peer, default: (entry.peerName, 0)].count += 1
            queued.insert(SentLine(peer: entry.peer, messageID: entry.messageID))
            if members[entry.peer] == nil {
                members[entry.peer] = PeerInfo(id: entry.peer, displayName: entry.peerName, sessionID: session.sessionID)
            }
        }
        for (peer, waiting) in counts.sorted(by: { $0.value.name < $1.value.name }) {
            view.outbox(count: waiting.count, for: peer, named: waiting.name)
        }
    }

    /// `--context`, as the bytes a connection request carries.
    private var requestContext: Data? { options.context.map { Data($0.utf8) } }

    /// What a peer attached to its request, shown before any question about it.
    private static func showContext(_ context: Data, of peer: PeerInfo, json: Bool) {
        let text = String(decoding: context, as: UTF8.self)
        if json {
            Output.json(["event": "connection-request", "peer": peer.displayName, "id": peer.id.hex, "context": text])
        } else {
            Output.line(Terminal.paint("* \(Terminal.sanitize(peer.displayName))'s request says: \(Terminal.sanitize(text))", .dim))
        }
    }

    private func ask(_ request: ConnectionRequest, _ answer: CheckedContinuation<Bool, Never>) {
        let name = Terminal.sanitize(request.peer.displayName)
        let trust = ChatView.trustNote(request.trust, fingerprint: request.peer.fingerprint)
            .replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
        ask("\(name) wants to chat — \(trust). Accept?", answer,
            denied: "declined a connection request from \(name) (\(request.peer.id.short)); use --yes to accept requests")
    }

    /// Puts a y/n question on the input line; without a terminal (or with one pending) the answer is no.
    private func ask(_ prompt: String, _ answer: CheckedContinuation<Bool, Never>, denied: String) {
        guard interactive, pendingQuestion == nil else {
            answer.resume(returning: false)
            view.error("denied", denied)
            return
        }
        pendingQuestion = (prompt, answer)
        Output.line(Terminal.paint(prompt, .yellow))
    }

    /// Images arriving or leaving. `FileTransfers` has already checked that a received file really is
    /// the image type it was offered as (`checksImageSignatures`) and refused it otherwise.
    private func transferred(_ event: TransferEvent) {
        switch event {
        case .finished(let info, let delivery) where info.direction == .receiving:
            guard let url = delivery.url, let image = ImageInfo(contentsOf: url) else { return }
            view.image(image, at: url, from: info.peer)
        case .failed(let info, .notTheOfferedType(_, let offered, let found)):
            let actual = found ?? "not a PNG, JPEG, GIF or WebP image"
            view.error("image-refused", "refused \(Terminal.sanitize(info.name)) from \(Terminal.sanitize(info.peer.displayName)): offered as \(offered), but its signature says \(actual); the sender was told")
        case .finished(let info, _):
            view.note("sent the image \(Terminal.sanitize(info.name)) to \(Terminal.sanitize(info.peer.displayName)).")
        case .failed(let info, let error):
            view.error("transfer", "\(Terminal.sanitize(info.name)): \(error)")
        default:
            break
        }
    }

    /// `/image PATH`: checks the file really is an image, then offers it to every connected peer.
    private func sendImage(_ path: String) {
        let url = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
        guard let image = ImageInfo(contentsOf: url) else {
            view.error("image", "\(path) is not a PNG, JPEG, GIF or WebP image")
            return
        }
        guard !connected.isEmpty else {
            view.note("No peer connected.")
            return
        }
        let transfers = self.transfers!
        for peer in connected.keys {
            Task { _ = try? await transfers.sendResource(at: url, to: peer, mediaType: image.mediaType) }
        }
    }

    /// One key on the interactive input line; returns an exit status when it ends the chat.
    private func handle(_ key: Key) -> ExitCode? {
        switch key {
        case .character(let character) where pendingQuestion != nil:
            if "yYnN".contains(character) { return handle(line: String(character)) }
        case .character(let character):
            typed.append(character)
        case .backspace:
            if !typed.isEmpty { typed.removeLast() }
        case .clearLine:
            typed = ""
        case .left, .right:
            break  // The input line has no cursor to move.
        case .up, .down:
            guard !pickList.isEmpty else { break }
            selection = (selection + (key == .up ? pickList.count - 1 : 1)) % pickList.count
        case .enter:
            let line = typed
            typed = ""
            if line.isEmpty {
                if connected.isEmpty, pickList.indices.contains(selection) { dial(pickList[selection]) }
                return nil
            }
            if !line.hasPrefix("/"), Int(line) == nil, !members.isEmpty {
                let time = DateFormatter.localizedString(from: Date(), dateStyle: .none, timeStyle: .short)
                Output.line("\(Terminal.paint("[\(time)]", .dim)) \(Terminal.paint("me", .green))> \(Terminal.sanitize(line))")
            }
            return handle(line: line)
        case .endOfInput:
            if typed.isEmpty { return .success }
        }
        return nil
    }

    /// Redraws the input line: a y/n question, the peer picker, or the text being typed.
    private func render() {
        let line: String
        if let (prompt, _) = pendingQuestion {
            line = Terminal.paint("\(prompt.suffix(60)) [y/n] ", .yellow)
        } else if connected.isEmpty && typed.isEmpty && !pickList.isEmpty {
            selection = min(selection, pickList.count - 1)
            let peer = pickList[selection]
            line = Terminal.paint("↑/↓ Enter: connect to [\(selection + 1)] \(Terminal.sanitize(peer.displayName)) (\(peer.id.short))", .bold)
        } else {
            line = (connected.isEmpty ? Terminal.paint("(no peer yet) ", .dim) : "") + "> " + typed
        }
        Output.setInputLine(line)
    }

    /// Returns an exit status when the line ends the chat.
    private func handle(line: String) -> ExitCode? {
        if let (_, answer) = pendingQuestion {
            pendingQuestion = nil
            answer.resume(returning: line.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("y"))
            return nil
        }
        switch line.trimmingCharacters(in: .whitespaces) {
        case "/quit", "/exit":
            return .success
        case "/help":
            view.note("Type a line to send it to every connected peer. /image PATH sends a picture. /peers lists peers, /quit leaves. A number connects to that peer.")
            return nil
        case let command where command.hasPrefix("/image "):
            sendImage(String(command.dropFirst("/image ".count)).trimmingCharacters(in: .whitespaces))
            return nil
        case "/peers":
            listPeers()
            return nil
        case let text where interactive && Int(text) != nil:
            let index = Int(text)! - 1
            if pickList.indices.contains(index) { dial(pickList[index]) } else { view.note("No peer number \(text).") }
            return nil
        default:
            heldLines.append(line)
            sendHeldLines()
            return nil
        }
    }

    /// Sends what was typed to every member; members that are away get it from the outbox later.
    private func sendHeldLines() {
        guard !members.isEmpty, !heldLines.isEmpty else { return }
        let peers = Array(members.values)
        for line in heldLines {
            do {
                for entry in try conversation.send(line, to: peers) where connected[entry.peer] == nil {
                    queued.insert(SentLine(peer: entry.peer, messageID: entry.messageID))
                    view.queued(entry)
                }
            } catch {
                view.error("history", error.description)
            }
        }
        heldLines.removeAll()
    }

    private func listPeers() {
        if connected.isEmpty { view.note("No peer connected.") }
        for peer in connected.values { view.note("connected: \(Terminal.sanitize(peer.displayName)) (\(peer.id.short))") }
        for (number, peer) in pickList.enumerated() where connected[peer.id] == nil {
            view.note("[\(number + 1)] \(Terminal.sanitize(peer.displayName)) (\(peer.id.short))")
        }
    }
}
