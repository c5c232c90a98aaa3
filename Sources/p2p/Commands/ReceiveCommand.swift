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
            the peer are checked: nothing is written outside --dir. Exits when the sender leaves; a sender that             vanished mid-file (crash, lost connection) is waited for instead, so running the same send again             resumes where it stopped (Ctrl-C gives up; the .part file stays).
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
        let transferEvents = transfers.events(), sessionEvents = session.events()
        Task { for await event in transferEvents { feed.yield(.transfer(event)) } }
        Task { for await event in sessionEvents { feed.yield(.session(event)) } }
        Signals.onInterrupt { feed.yield(.interrupt) }

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
        } catch {
            Output.error("p2p: \(error)")
            if network.port == 0 { throw CLIError(error.description, code: ExitStatus.noDaemon) }
        }

        var received = 0, failed = 0, denied = 0, cancelled = false, active = 0
        /// Files whose sender vanished mid-way (peer ID and name): kept waiting for, since the same send
        /// run again resumes them; a later success under the same key is not a failure.
        var interrupted: Set<String> = []
        let key = { (info: TransferInfo) in "\(info.peer.id.hex)/\(info.name)" }
        loop: for await input in inputs {
            switch input {
            case .transfer(let event):
                view.handle(event)
                switch event {
                case .started: active += 1
                case .finished(let info, _): active -= 1; received += 1; interrupted.remove(key(info))
                case .failed(_, .denied): denied += 1
                case .failed(let info, .peerDisconnected):
                    active = max(0, active - 1)
                    interrupted.insert(key(info))
                    if !json {
                        Output.line(Terminal.paint("* Waiting for \(Terminal.sanitize(info.peer.displayName)) to resume \(Terminal.sanitize(info.name)) (Ctrl-C to stop).", .dim))
                    }
                case .failed(_, let error):
                    active = max(0, active - 1)
                    failed += 1
                    if case .cancelledByPeer = error { cancelled = true }
                default: break
                }
                // Transfer and session events come through separate streams: the sender may have left before
                // its last transfer's end reached us. Then this was the last.
                switch event {
                case .finished, .failed:
                    if active == 0, interrupted.isEmpty, session.connectedPeers.isEmpty { break loop }
                default: break
                }
            case .session(.peerChanged(let peer, .disconnected, _)):
                if !json { Output.line(Terminal.paint("* \(Terminal.sanitize(peer.displayName)) left.", .dim)) }
                if received + failed + denied > 0 && active == 0 && interrupted.isEmpty && session.connectedPeers.isEmpty { break loop }
            case .session(.advertising(let name)):
                // The name DNS-SD registered: "NAME (2)" when NAME was taken.
                if json { Output.json(["event": "advertising", "name": name]) }
            case .session(.discoveryFailed(let error)):
                DiscoveryNotice.show(error, json: json)
            case .session:
                break
            case .interrupt:
                transfers.cancelAll()
                cancelled = true
                try? await Task.sleep(for: .milliseconds(100))  // let the CANCEL frames go out
                break loop
            }
        }
        await session.close()
        // Ctrl-C while waiting for a vanished sender: those files did not arrive.
        if !interrupted.isEmpty && !cancelled { failed += interrupted.count }
        if cancelled { throw CLIError("cancelled", code: ExitStatus.cancelled) }
        if failed > 0 { throw ExitStatus.transferFailed }
        if received == 0 && denied > 0 { throw ExitStatus.denied }
    }

    private enum Input: Sendable {
        case transfer(TransferEvent)
        case session(SessionEvent)
        case interrupt
    }
}
