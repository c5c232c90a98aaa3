import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p send`: streams files and directories to a peer, verified end to end, resumable.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send files and folders (or standard input, or a short text) to peers running `p2p receive`.",
        discussion: """
            Examples:
              p2p send --to bob photos/ notes.txt      one question at bob, then all of it
              p2p send --all report.pdf                to every receiver on the network
              tar c dir | p2p send - --as dir.tar --to bob
              p2p send --text "see you at 5" --to bob

            All the paths go as one transfer: the receiver is asked once ("alice offers 2,000 files, 7.8 MiB in many/"), \
            then the files follow back to back, small ones packed together, each verified with SHA-256 and renamed into \
            place on arrival. Files the receiver already has (same size and SHA-256) are skipped and reported as already \
            there. Run the same command again after an interruption and only what is missing travels: finished files are \
            skipped, the file that was cut off resumes. Ctrl-C during a transfer cancels it on both sides (exit 7); before \
            one starts (while finding or connecting the receiver, or waiting for its yes) it exits 130 and nothing is sent. \
            A receiver that does not answer within --answer-timeout (10 minutes) gets the offer withdrawn (exit 6).
            --to takes the receiver's display name (any case), the start of its peer ID or of its fingerprint \
            (dashes optional; `p2p peers` shows them). Repeat --to, or use --all, to send to several receivers at once: \
            one line per receiver at the end. A receiver running an older p2p (without channel transfers) is refused with a \
            message saying so.
            `p2p send - --as NAME` sends standard input instead, of any length, as one byte stream to `p2p receive --stdout`, \
            which writes it to its standard output; the whole stream is verified by SHA-256 at the end, and a stream that \
            breaks (either side killed, the link lost) fails on both sides.
            `p2p send --text "…"` sends a short text instead (up to 64 KiB of UTF-8; --clipboard: the clipboard's, read with \
            wl-paste, xclip, xsel or pbpaste): the receiver is asked as for a file, then shows it ("alice sent a text:") \
            or, with `p2p receive --text`, writes it alone to its standard output. An older receiver stores it as text.txt.
            Exit codes: 0 everything (or the stream) delivered and verified (to every receiver), 3 no receiver found (or several fit --to), \
            4 connection failed, 6 denied (or not answered), 10 the receiver refused this machine's key (its copy of your name is pinned to another key: it runs `p2p trust remove NAME`, or pair again), 7 cancelled, 8 failed (verification, disconnect, a file unreadable mid-way, older \
            receiver), 64 a path that does not exist or cannot be read (said before looking for receivers), 130 interrupted before sending. With several receivers, the highest of their codes.
            """
    )

    @OptionGroup var network: NetworkOptions

    @Argument(help: "Files or directories to send, or - for standard input (with --as).")
    var paths: [String] = []

    @Option(help: ArgumentHelp("Send this text (up to 64 KiB) instead of files.", valueName: "text"))
    var text: String?

    @Flag(help: "Send the clipboard's text (wl-paste, xclip, xsel or pbpaste) instead of files.")
    var clipboard = false

    @Option(name: .customLong("as"), help: ArgumentHelp("With -: the name standard input is sent under, as one byte stream.", valueName: "name"))
    var streamName: String?

    @Option(help: "A receiving peer: display name, or the start of its ID or fingerprint. Repeat it to send to several at once.")
    var to: [String] = []

    @Flag(help: "Send to every receiver in the session (those that appear within --timeout, then 1.5 s of quiet).")
    var all = false

    @Option(help: "Connect directly to the receiver at HOST:PORT.")
    var connect: String?

    @Flag(help: "One JSON object per event per line.")
    var json = false

    @Option(help: "Seconds to wait for the receiver to appear.")
    var timeout: Double = 30

    @Flag(name: .customLong("localsend"), help: "Also look for --to among LocalSend devices (phones, desktops; multicast 224.0.0.167:53317): a device whose alias or fingerprint (20 characters at least: a shorter prefix authorizes nothing) fits gets the files or the text over LocalSend. Also P2P_LOCALSEND=on.")
    var localSendFlag = false

    @Option(name: .customLong("interface"), help: ArgumentHelp("With --localsend: look for LocalSend devices on this interface only; repeatable.", valueName: "iface"))
    var interfaces: [String] = []

    @Option(help: ArgumentHelp("With --localsend: the PIN the LocalSend device asks for.", valueName: "pin"))
    var pin: String?

    /// Whether LocalSend devices are looked for: --localsend, or P2P_LOCALSEND=on.
    var localSend: Bool {
        localSendFlag || ["on", "1", "yes", "true"].contains(ProcessInfo.processInfo.environment["P2P_LOCALSEND"]?.lowercased() ?? "")
    }

    @Option(help: "Seconds to wait for each answer of the receiver (someone may be asked: a new key, the offer); then the send gives up.")
    var answerTimeout: Double = 600

    func validate() throws {
        if all && (!to.isEmpty || connect != nil) { throw ValidationError("--all finds every receiver by itself: leave out --to and --connect") }
        if connect != nil && !to.isEmpty { throw ValidationError("--connect names the receiver by address: leave out --to") }
        let payloads = (paths.isEmpty ? 0 : 1) + (text == nil ? 0 : 1) + (clipboard ? 1 : 0)
        if payloads == 0 { throw ValidationError("name files or directories to send, - for standard input, --text TEXT or --clipboard") }
        if payloads > 1 { throw ValidationError("send files, --text or --clipboard, one of them at a time") }
        if !(answerTimeout > 0) { throw ValidationError("--answer-timeout takes a number of seconds above 0") }
        if (pin != nil || !interfaces.isEmpty) && !localSend { throw ValidationError("--pin and --interface are for LocalSend devices: add --localsend") }
    }

    func run() async throws {
        if let stream = try StreamSend(self) { return try await stream.run() }
        // A LocalSend device named by --to takes it over LocalSend; anything else goes on as a p2p send.
        if localSend, to.count == 1, connect == nil, !all, paths != ["-"] {
            let text = try self.text ?? (clipboard ? String(decoding: try Clipboard.read(), as: UTF8.self) : nil)
            if let text, let problem = TextTransfer.problem(with: Data(text.utf8)) { throw CLIError(problem, code: ExitStatus.usage) }
            if try await LocalSendSend(command: self).run(text: text) { return }
        }
        if text != nil || clipboard { return try await sendText() }
        // A wrong path is a mistake in the command: said before any network work, as a usage error.
        for path in paths {
            switch SendRun.problem(with: path) {
            case .missing: throw CLIError("\(Terminal.sanitize(path)): no such file or directory; nothing was sent", code: ExitStatus.usage)
            case .unreadable: throw CLIError("\(Terminal.sanitize(path)): permission denied (cannot read it); nothing was sent", code: ExitStatus.usage)
            case nil: break
            }
        }
        try await send(.files(paths.map { URL(fileURLWithPath: $0) }))
    }

    /// `--text` or `--clipboard`: the text checked before any network work, then offered as a text.
    private func sendText() async throws {
        let bytes = try text.map { Data($0.utf8) } ?? Clipboard.read()
        if let problem = TextTransfer.problem(with: bytes) { throw CLIError(problem, code: ExitStatus.usage) }
        // 0600 in a 0700 folder of its own (a clipboard is nobody else's business), gone when the send
        // ends, at the latest when the process exits.
        let url = try TextTransfer.stage(bytes)
        defer { TextTransfer.discard(url) }
        try await send(.text(url, characters: String(decoding: bytes, as: UTF8.self).count))
    }

    /// Runs the library's `SendRun` and says how it ended: a line per receiver, the exit status.
    private func send(_ payload: SendRun.Payload) async throws {
        let answerWait = Duration.milliseconds(Int64(answerTimeout * 1000))
        // The receiver may ask twice (a new key, then the offer): --answer-timeout bounds each wait.
        let session = try network.makeSession(defaultSessionID: TransferSession.id, bulk: true, answerWait: answerWait)
        // The send runs on a task of its own; the driver's loop takes its end and Ctrl-C (`.interrupt`).
        let driver = CommandDriver<SendEvent>()
        let feed = driver.feed
        driver.readInterrupts()
        let work = Task {
            do {
                try await transfer(payload, over: session, answerWait: answerWait) { feed.send(.sending(cancel: $0)) }
                feed.send(.ended(.success(())))
            } catch {
                feed.send(.ended(.failure(error)))
            }
        }
        var cancel: (@Sendable () -> Void)?
        var presses = 0
        var quitting = false
        var ended: Result<Void, any Error>?
        let status = await driver.run { input in
            switch input {
            case .event(.sending(let cancelSends)):
                cancel = cancelSends
            case .event(.ended(let outcome)):
                // After Ctrl-C's goodbyes the send ends because the session closed under it: not news.
                guard !quitting else { return nil }
                ended = outcome
                return .success
            case .event(.closed):
                // Until the first byte was offered, Ctrl-C says goodbye and leaves: nothing was sent.
                Output.error("p2p: interrupted; nothing was sent")
                return ExitStatus.interrupted
            case .interrupt:
                // A second Ctrl-C while the goodbyes hang (a peer that stopped reading): leave without them.
                if quitting { return ExitStatus.interrupted }
                if let cancel {
                    // Ctrl-C cancels the transfers on both sides and the command ends as cancelled (7). A tree whose
                    // every byte is sent still waits for the receiver's verdict (it may all have arrived): a
                    // second Ctrl-C leaves without it.
                    presses += 1
                    guard presses > 1 else { cancel(); return nil }
                    Output.error("p2p: interrupted again; leaving without the receiver's word on what arrived")
                    return ExitStatus.cancelled
                }
                quitting = true
                Task { await session.close(); feed.send(.closed) }
            case .keys, .line, .endOfInput, .question, .withdrawn:
                break
            }
            return nil
        }
        guard let ended else {
            work.cancel()
            throw status ?? ExitStatus.interrupted
        }
        try ended.get()
    }

    /// What the send's work tells the driver's loop.
    private enum SendEvent: Sendable {
        /// The first byte is offered: from now on Ctrl-C cancels the transfers (`cancel`) on both sides.
        case sending(cancel: @Sendable () -> Void)
        /// The send ended: its lines are printed; the error (if any) is the command's.
        case ended(Result<Void, any Error>)
        /// Ctrl-C's goodbyes are said.
        case closed
    }

    /// The send itself, on the work task; `sending` hands over how to cancel it once the first byte is offered.
    private func transfer(_ payload: SendRun.Payload, over session: Session, answerWait: Duration,
                          sending cancelled: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) async throws {
        var configuration = FileTransfers.Configuration()
        configuration.answerTimeout = answerWait
        let transfers = FileTransfers(session: session, directory: FileManager.default.temporaryDirectory, configuration: configuration)
        let view = TransferView(json: json, perFile: network.verbose)
        let pump = EventPump(transfers.events()) { view.handle($0) }
        let outcome: Result<[SendRun.Outcome], any Error>
        do {
            outcome = .success(try await send(payload, with: SendRun(transfers: transfers), sending: cancelled))
        } catch {
            outcome = .failure(error)
        }
        await session.close()
        // Each transfer emitted its end before `send` returned or threw: print those events
        // (`tree-finished`, `transfer-failed`) before the summary or the error, and before the process exits.
        await pump.drain()
        let outcomes = try outcome.get()
        let again = SendWording.command(CommandLine.arguments)
        if let peer = SendRun.interrupted(outcomes) {
            // Every event of the send is handled now, so the view knows whether the receiver said yes.
            let name = Terminal.sanitize(peer.displayName)
            guard view.started(with: peer.id) else {
                throw CLIError("interrupted before \(name) accepted; nothing was sent", code: ExitStatus.interrupted)
            }
            throw CLIError(SendWording.interrupted(files: 0, bytes: 0, to: name, meter: view.meter(for: peer.id), command: again), code: ExitStatus.cancelled)
        }
        for outcome in outcomes {
            let peer = outcome.peer
            switch outcome.result {
            case .success(let deliveries):
                if case .text(_, let characters) = payload {
                    if json {
                        Output.json(["event": "text-sent", "peer": peer.displayName, "id": peer.id.hex, "characters": characters,
                                     "size": deliveries.first?.size ?? 0, "sha256": deliveries.first?.sha256 ?? ""])
                    } else {
                        Output.line("Delivered a text (\(ReceiveLoop.count(characters, "character"))) to \(Terminal.sanitize(peer.displayName)).")
                    }
                } else if !json {
                    Output.line(SendWording.delivered(deliveries, to: peer.displayName.description, timing: view.timing(of: peer.id)))
                }
            case .failure(let error):
                var message = outcomes.count > 1 ? "\(Terminal.sanitize(peer.displayName)): \(error)" : error.description
                if outcome.cancelledByReceiver {
                    // The receiver's Ctrl-C (or its quitting): what it kept, and the command that sends the rest.
                    message = SendWording.cancelledByReceiver(peer.displayName.description, meter: view.meter(for: peer.id), command: again)
                }
                let failure = CLIError(message, code: TransferSession.exitCode(outcome.verdict))
                guard outcomes.count > 1 else { throw failure }
                Output.error("p2p: \(failure.description)")
            }
        }
        let worst = SendRun.worst(outcomes)
        if worst != .delivered { throw TransferSession.exitCode(worst) }
    }

    /// Finds the receivers (the library's `PeerLocator`, saying each step as `PeerFinder` words it) and
    /// sends to each at once; the caller closes the session.
    private func send(_ payload: SendRun.Payload, with sending: SendRun,
                      sending cancelled: @Sendable (@escaping @Sendable () -> Void) -> Void) async throws -> [SendRun.Outcome] {
        let session = sending.transfers.session
        let progress = ConnectProgress(json: json, transient: Terminal.stderrIsTTY)
        let finders = (to.isEmpty ? [nil] : to.map { Optional($0) }).map {
            PeerFinder(session: session, to: $0, connect: connect, timeout: timeout, role: "receiver", progress: progress)
        }
        let peers: [PeerInfo]
        do {
            peers = try await SendRun.receivers(try finders.map { try $0.locator(all: all) }, all: all)
        } catch let error as PeerFindError {
            let reach = finders[0].reachError(error)
            if json, case .keyRefused(let refusal) = reach { Output.json(refusal.json) }
            throw reach.cliError(denial: ExitStatus.denied)
        } catch let error as ReachError {
            throw error.cliError(denial: ExitStatus.denied)
        } catch {
            throw CLIError("\(error)", code: ExitStatus.failure)
        }
        let (json, resumed) = (self.json, ConnectProgress(json: json))
        // A task of its own so that Ctrl-C can cancel it (and the sends in it); it is awaited right here.
        let task = Task {
            await sending.send(payload, to: peers) { peer, attempt in
                if json {
                    Output.json(["event": "resuming", "peer": peer.displayName, "id": peer.id.hex, "attempt": attempt])
                } else {
                    resumed.show("the connection to \(Terminal.sanitize(peer.displayName)) was lost; resumed over a new one (\(attempt))")
                }
            }
        }
        // From here Ctrl-C (the driver's loop) cancels the transfers on both sides.
        cancelled { task.cancel() }
        return await task.value
    }
}
