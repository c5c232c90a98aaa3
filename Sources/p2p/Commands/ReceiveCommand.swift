import ArgumentParser
import Foundation
import P2P

/// `p2p receive`: waits for `p2p send`, asks before accepting, writes verified files into a directory.
struct ReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive files from a peer running `p2p send`.",
        discussion: """
            Asks y/n per offer unless --yes or --from allows it. Files are written as NAME.part and renamed to NAME \
            only after their SHA-256 matches; an existing NAME gets "NAME (1).ext" unless --overwrite. Names from \
            the peer are checked: nothing is written outside --dir. Exits when the sender leaves; a sender that \
            vanished mid-file (crash, lost connection) is waited for instead, so running the same send again \
            resumes where it stopped (Ctrl-C gives up; the .part file stays).
            Exit codes: 0 every file verified, 2 no mDNS daemon, 6 nothing accepted, 7 cancelled, 8 a transfer failed.
            """
    )

    @OptionGroup var network: NetworkOptions

    @Option(help: "Directory to write files into.")
    var dir: String = "."

    @Flag(help: "Accept every offer (and connection) without asking.")
    var yes = false

    @Option(help: "Accept offers from this peer (display name or ID prefix) without asking.")
    var from: String?

    @Flag(help: "Replace existing files instead of writing NAME (1).ext.")
    var overwrite = false

    @Flag(help: "One JSON object per event per line.")
    var json = false

    func run() async throws {
        let directory = URL(fileURLWithPath: dir, isDirectory: true).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue,
              FileManager.default.isWritableFile(atPath: directory.path)
        else { throw CLIError("cannot write into \(directory.path): not a writable directory", code: ExitStatus.transferFailed) }

        let session = try network.makeSession(defaultSessionID: TransferSession.id)
        var configuration = FileTransfers.Configuration()
        configuration.overwrite = overwrite
        let transfers = FileTransfers(session: session, directory: directory, configuration: configuration)
        let prompter = Prompter()
        let trusted = { @Sendable (peer: PeerInfo) -> Bool in
            yes || from.map { $0 == peer.displayName || (($0.count >= 4) && peer.id.hex.hasPrefix($0.lowercased())) } ?? false
        }
        session.setConnectionRequestHandler { request in
            if trusted(request.peer) { return true }
            let trust = ChatView.trustNote(request.trust, fingerprint: request.peer.fingerprint)
            return await prompter.confirm("\(Terminal.sanitize(request.peer.displayName)) wants to send you files — \(trust). Accept?")
        }
        transfers.setOfferHandler { offer in
            if trusted(offer.info.peer) { return true }
            let info = offer.info
            return await prompter.confirm("Accept \(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size)), \(info.mediaType)) from \(Terminal.sanitize(info.peer.displayName))?")
        }
        let view = TransferView(json: json)
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        let transferPump = EventPump(transfers.events()) { feed.yield(.transfer($0)) }
        let sessionPump = EventPump(session.events()) { feed.yield(.session($0)) }
        Signals.onInterrupt { feed.yield(.interrupt) }

        var tally = Tally()
        var failure: (any Error)?
        do {
            try await listen(session, into: directory)
            loop: for await input in inputs {
                switch input {
                case .transfer(let event):
                    show(event, view: view, tally: &tally)
                    guard event.isEnd else { break }
                    // Transfer and session events come through separate streams: the sender may have left before
                    // its last transfer's end reached us. Then this was the last.
                    if tally.leaving ? tally.active == 0 : tally.settled && session.connectedPeers.isEmpty { break loop }
                case .session(let event):
                    show(event)
                    if case .peerChanged(_, .disconnected, _) = event, tally.decided > 0, tally.settled, session.connectedPeers.isEmpty { break loop }
                case .interrupt:
                    if tally.leaving { break loop }  // A second Ctrl-C waits no longer.
                    transfers.cancelAll()
                    tally.cancelled = true
                    tally.leaving = true
                    try? await Task.sleep(for: .milliseconds(100))  // let the CANCEL frames go out
                    if tally.active == 0 { break loop }
                    // Transfers in flight report their end (after their CANCEL) from their own queues: wait
                    // a second at most for those events, so that they are shown.
                    Task {
                        try? await Task.sleep(for: .seconds(1))
                        feed.yield(.cancellationsOverdue)
                    }
                case .cancellationsOverdue:
                    break loop
                }
            }
        } catch {
            failure = error
        }
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left). The transfers' events are shown up to the close: a
        // transfer ended by it or by Ctrl-C reports that before the exit status does.
        await sessionPump.drain()
        await session.close()
        await transferPump.drain()
        feed.finish()
        for await input in inputs {
            switch input {
            case .transfer(let event): show(event, view: view, tally: &tally)
            case .session(let event): show(event)
            case .interrupt, .cancellationsOverdue: break
            }
        }
        if let failure { throw failure }
        // Ctrl-C while waiting for a vanished sender: those files did not arrive.
        if !tally.interrupted.isEmpty && !tally.cancelled { tally.failed += tally.interrupted.count }
        if tally.cancelled { throw CLIError("cancelled", code: ExitStatus.cancelled) }
        if tally.failed > 0 { throw ExitStatus.transferFailed }
        if tally.received == 0 && tally.denied > 0 { throw ExitStatus.denied }
    }

    /// Starts listening and advertising.
    private func listen(_ session: Session, into directory: URL) async throws {
        do {
            try await session.start()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        if json {
            Output.json(["event": "listening", "name": session.displayName, "id": session.peerID.hex, "port": session.localPort ?? 0,
                         "session": session.sessionID, "dir": directory.path])
        } else {
            Output.line("Waiting for files as \(session.displayName) (\(session.peerID.fingerprint)), port \(session.localPort ?? 0), into \(directory.path)")
        }
        do {
            try session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: network.port, findsByName: false) {
            let message = DiscoveryNotice.listeningWithoutDiscovery(port: network.port)
            if json {
                Output.json(["event": "warning", "code": "no-discovery", "message": message])
            } else {
                Output.error(Terminal.paint("p2p: \(message)", .yellow))
            }
        } catch {
            Output.error("p2p: \(error)")
            if network.port == 0 { throw CLIError(error.description, code: ExitStatus.noDaemon) }
        }
    }

    private func show(_ event: TransferEvent, view: TransferView, tally: inout Tally) {
        view.handle(event)
        let key = event.info.map { "\($0.peer.id.hex)/\($0.name)" } ?? ""
        switch event {
        case .started: tally.active += 1
        case .finished: tally.active -= 1; tally.received += 1; tally.interrupted.remove(key)
        case .failed(_, .denied): tally.denied += 1
        case .failed(let info, .peerDisconnected):
            tally.active = max(0, tally.active - 1)
            tally.interrupted.insert(key)
            if !json && !tally.leaving {
                Output.line(Terminal.paint("* Waiting for \(Terminal.sanitize(info.peer.displayName)) to resume \(Terminal.sanitize(info.name)) (Ctrl-C to stop).", .dim))
            }
        case .failed(_, let error):
            tally.active = max(0, tally.active - 1)
            tally.failed += 1
            if case .cancelledByPeer = error { tally.cancelled = true }
        default: break
        }
    }

    private func show(_ event: SessionEvent) {
        switch event {
        case .peerChanged(let peer, .disconnected, _):
            if !json { Output.line(Terminal.paint("* \(Terminal.sanitize(peer.displayName)) left.", .dim)) }
        case .advertising(let name):
            // The name DNS-SD registered: "NAME (2)" when NAME was taken.
            if json { Output.json(["event": "advertising", "name": name]) }
        case .discoveryFailed(let error):
            DiscoveryNotice.show(error, json: json)
        default:
            break
        }
    }

    /// What came of the offers so far, counted from the transfer events.
    private struct Tally {
        var received = 0, failed = 0, denied = 0, active = 0
        var cancelled = false
        /// Ctrl-C was pressed here: only the transfers in flight are waited for, to report their end.
        var leaving = false
        /// Files whose sender vanished mid-way (peer ID and name): kept waiting for, since the same send
        /// run again resumes them; a later success under the same key is not a failure.
        var interrupted: Set<String> = []

        /// Offers decided one way or the other.
        var decided: Int { received + failed + denied }
        /// Nothing in flight and nothing to wait for.
        var settled: Bool { active == 0 && interrupted.isEmpty }
    }

    private enum Input: Sendable {
        case transfer(TransferEvent)
        case session(SessionEvent)
        case interrupt
        /// A second after Ctrl-C: stop waiting for the cancelled transfers to report their end.
        case cancellationsOverdue
    }
}

private extension TransferEvent {
    var info: TransferInfo? {
        switch self {
        case .offered(let offer): offer.info
        case .started(let info, _), .progress(let info, _), .finished(let info, _), .failed(let info, _): info
        case .eventsDropped: nil
        }
    }

    /// The transfer's last event.
    var isEnd: Bool {
        switch self {
        case .finished, .failed: true
        default: false
        }
    }
}
