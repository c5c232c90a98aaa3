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
        localSendFlag || LocalSendOptions.environmentTurnsOn
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
        // --text or --clipboard: the text checked before any network work.
        let textBytes = try text.map { Data($0.utf8) } ?? (clipboard ? Clipboard.read() : nil)
        if let textBytes, let problem = TextTransfer.problem(with: textBytes) { throw CLIError(problem, code: ExitStatus.usage) }
        // A LocalSend device named by --to takes it over LocalSend; anything else goes on as a p2p send.
        if localSend, to.count == 1, connect == nil, !all,
           try await LocalSendSend(command: self).run(text: textBytes.map { String(decoding: $0, as: UTF8.self) }) { return }
        if let textBytes {
            // 0600 in a 0700 folder of its own (a clipboard is nobody else's business), gone when the send
            // ends, at the latest when the process exits.
            let url = try TextTransfer.stage(textBytes)
            defer { TextTransfer.discard(url) }
            return try await send(.text(url, characters: String(decoding: textBytes, as: UTF8.self).count))
        }
        // A wrong path is a mistake in the command: said before any network work, as a usage error.
        for path in paths {
            if let problem = SendRun.problem(with: path) { throw CLIError(SendWording.unsendable(path, problem), code: ExitStatus.usage) }
        }
        try await send(.files(paths.map { URL(fileURLWithPath: $0) }))
    }

    /// Runs the library's `SendRun` on the driver's loop and says how it ended (the library's
    /// `SendReport`): a line per receiver, the exit status.
    private func send(_ payload: SendRun.Payload) async throws {
        let answerWait = Duration.milliseconds(Int64(answerTimeout * 1000))
        // The receiver may ask twice (a new key, then the offer): --answer-timeout bounds each wait.
        let session = try network.makeSession(defaultSessionID: TransferSession.id, bulk: true, answerWait: answerWait)
        var configuration = FileTransfers.Configuration()
        configuration.answerTimeout = answerWait
        let transfers = FileTransfers(session: session, directory: FileManager.default.temporaryDirectory, configuration: configuration)
        let view = TransferView(json: json, perFile: network.verbose)
        let outcomes = try await SendDriver.run(session, transfers: transfers, view: view) { offered in
            try await send(payload, with: SendRun(transfers: transfers), sending: offered)
        }
        let report = SendReport(outcomes, payload: payload, tally: view.tally, command: Self.again(CommandLine.arguments))
        if let interruption = report.interruption {
            throw CLIError(interruption.description, code: interruption.afterAccepted ? ExitStatus.cancelled : ExitStatus.interrupted)
        }
        for line in report.lines {
            switch line.verdict {
            case .delivered:
                if !json { Output.line(line.text) } else if let event = line.textSent { Output.json(event) }
            default:
                let failure = CLIError(line.text, code: ExitStatus.code(.send(line.verdict)))
                guard report.lines.count > 1 else { throw failure }
                Output.error("p2p: \(failure.description)")
            }
        }
        if report.verdict != .delivered { throw ExitStatus.code(.send(report.verdict)) }
    }

    /// This command as typed, to run again: `p2p send many --to bob`.
    static func again(_ arguments: [String]) -> String {
        (["p2p"] + arguments.dropFirst().map { ReachWording.shellWord(Terminal.sanitize($0)) }).joined(separator: " ")
    }

    /// Finds the receivers `--to`, `--connect` or `--all` name (the library's `SendRun.receivers`, saying
    /// each step as `PeerFinder` words it), each connected; throws what the command says and its status.
    func receivers(on session: Session) async throws -> [PeerInfo] {
        let progress = ConnectProgress(json: json, transient: Terminal.stderrIsTTY)
        let finders = (to.isEmpty ? [nil] : to.map { Optional($0) }).map {
            PeerFinder(session: session, to: $0, connect: connect, timeout: timeout, role: "receiver", progress: progress)
        }
        do {
            return try await SendRun.receivers(try finders.map { try $0.connector.locator(all: all) }, all: all)
        } catch let error as PeerFindError {
            let reach = ReachError(error, wording: finders[0].connector.wording)
            if json, case .keyRefused(let refusal) = reach { Output.json(refusal.json) }
            throw reach.cliError(denial: ExitStatus.denied)
        } catch let error as ReachError {
            throw error.cliError(denial: ExitStatus.denied)
        } catch {
            throw CLIError("\(error)", code: ExitStatus.failure)
        }
    }

    /// Finds the receivers and sends to each at once; the session is closed by the driver.
    private func send(_ payload: SendRun.Payload, with sending: SendRun, sending cancelled: SendDriver<[SendRun.Outcome]>.Offered) async throws -> [SendRun.Outcome] {
        let peers = try await receivers(on: sending.transfers.session)
        let (json, resumed) = (self.json, ConnectProgress(json: json))
        // A task of its own so that Ctrl-C can cancel it (and the sends in it); it is awaited right here.
        let task = Task {
            await sending.send(payload, to: peers) { peer, attempt in
                json ? Output.json(SendWording.resumingEvent(peer, attempt: attempt)) : resumed.show(SendWording.resuming(peer, attempt: attempt))
            }
        }
        // From here Ctrl-C (the driver's loop) cancels the transfers on both sides.
        cancelled { task.cancel() }
        return await task.value
    }
}
