import ArgumentParser
import Foundation
import P2P

/// `p2p receive`: waits for `p2p send`, asks before accepting, writes verified files into a directory.
struct ReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive files from a peer running `p2p send`.",
        discussion: """
            Waits for senders and writes what they send into --dir (default: the current folder), until Ctrl-C.

            Examples:
              p2p receive                          asks about each new sender and each send
              p2p receive --from alice --dir ~/in  takes what alice sends, unasked
              p2p receive --once                   exits when the first sender leaves
              p2p receive --text | wl-copy         one text (p2p send --text) to stdout
              p2p receive --stdout > disk.img      one byte stream (p2p send - --as NAME)

            A new sender is asked about once ("alice wants to send you files … Accept?"); a pinned or paired \
            sender connects without a question. Each send is then one question, y or n: "alice offers 5 files, \
            3.0 KiB in many/ — accept?" (or "… 2 files, 161 B: a.txt, b.txt"). --yes accepts everything; --from \
            NAME everything from NAME. One progress line and one summary per sender; --verbose adds a line per file.
            Files are written as NAME.part and renamed to NAME only after their SHA-256 matches; an existing NAME \
            gets "NAME (1).ext" unless --overwrite (regular files only: a folder, link, FIFO or device under an \
            offered name stays, and that file fails with the reason). Names from the peer are checked: nothing is \
            written outside --dir. A sender that vanished mid-file can run the same send again: it resumes where it \
            stopped (the .part file stays; only that sender resumes it). Hidden paths (a component starting with \
            ".": .ssh/authorized_keys, .config/autostart/…) and execute bits are named in the question; accepted \
            without one (--yes, --from) hidden files are skipped (not written, reported) unless --allow-hidden, and \
            files arrive without execute bits unless --allow-executable. A tree whose total is not the sum of its \
            files is refused.
            --text takes one text and exits: the text alone goes to standard output, exactly as sent (without the \
            frame when that is not a terminal), every message on stderr; file offers are declined. Without --text \
            a text is asked about like a file, then shown between "alice sent a text:" and "── end of text ──". \
            Control characters in a text other than line breaks and tabs are shown as U+FFFD (�).
            --stdout takes one byte stream and writes its bytes to standard output, every message on stderr; it \
            exits 0 only once the whole stream arrived and its SHA-256 matched, and non-zero (7 cancelled, 8 broken \
            or mismatched) otherwise, so the output is never mistaken for complete. On a pipe it needs --yes or \
            --from NAME; file offers are declined; Ctrl-C before a stream began exits 130.
            With --localsend (or P2P_LOCALSEND=on) it also receives from LocalSend apps (protocol v2.2 over HTTPS; \
            Protocol/LOCALSEND.md): their offers get the same question, rules, progress line and summary, named as \
            `Pixel 7 "anna" (LocalSend, not verified by key)`; a LocalSend text is shown as a p2p text is; --pin makes \
            them give a PIN; `p2p id` shows the LocalSend fingerprint. \
            With --web any browser can send too: an upload page over plain HTTP on port 53318 (URL and QR code \
            printed), behind a PIN (--pin, else a random one, printed); its files get the same question and rules.
            Exit codes: 0 every file verified (also when Ctrl-C ends an idle receive), 1 error (such as a --dir \
            that is missing, a file, or not writable), 2 no mDNS daemon, 6 nothing accepted, 7 a transfer under \
            way was cancelled (Ctrl-C on either side), 8 a transfer failed.
            """
    )

    @OptionGroup var network: NetworkOptions

    @OptionGroup var localSend: LocalSendOptions

    @Option(help: "Directory to write files into.")
    var dir: String = "."

    @Flag(help: "Accept every offer (and connection) without asking.")
    var yes = false

    @Option(help: "Accept offers from this peer (exact display name, a pinned key by its pinned name only; or its full ID or fingerprint, or a prefix of at least 16 fingerprint characters / 20 hex digits) without asking.")
    var from: String?

    @Flag(help: "Replace existing regular files (never a folder, link, FIFO or device) instead of writing NAME (1).ext.")
    var overwrite = false

    @Flag(help: "Write files under hidden paths (.ssh/, .bashrc, …) when accepting without a question (--yes, --from); otherwise they are skipped.")
    var allowHidden = false

    @Flag(help: "Keep the execute bits files were offered with when accepting without a question (--yes, --from); otherwise they are removed.")
    var allowExecutable = false

    @Flag(help: "One JSON object per event per line.")
    var json = false

    @Flag(help: "Exit when the first sender leaves, instead of waiting for the next one.")
    var once = false

    @Flag(help: "Take one text (`p2p send --text`), write it to standard output and exit; decline files; all else goes to stderr.")
    var text = false

    @Flag(help: "Take one byte stream (`p2p send - --as NAME`) and write it to standard output; all else goes to stderr.")
    var stdout = false

    func validate() throws {
        if text && stdout { throw ValidationError("--text takes a text and --stdout a byte stream: choose one") }
        if stdout && (localSend.enabled || localSend.web) { throw ValidationError("--stdout takes one p2p stream; LocalSend sends files: choose one") }
    }

    func run() async throws {
        if stdout { return try await StreamReceive(command: self).run() }
        let directory = URL(fileURLWithPath: dir, isDirectory: true).standardizedFileURL
        // A setup error (1), found before anything is listened for: no transfer failed.
        if let problem = WritableDirectory.problem(at: directory.path) { throw CLIError(problem, code: ExitStatus.failure) }

        let session = try network.makeSession(defaultSessionID: TransferSession.id, bulk: true)
        var configuration = FileTransfers.Configuration()
        configuration.overwrite = overwrite
        let transfers = FileTransfers(session: session, directory: directory, configuration: configuration)
        let receiver = ReceiveLoop(session: session, transfers: transfers, options: self, directory: directory)
        if localSend.isOn || localSend.web { receiver.localSend = try localSend.reception(transfers: transfers, alias: network.displayName) }
        try await receiver.run {
            try await Self.listen(session, port: network.port, json: json, emit: Output.json) {
                if json {
                    Output.json(["event": "listening", "name": session.displayName, "id": session.peerID.hex, "port": session.localPort ?? 0,
                                 "session": session.sessionID, "dir": directory.path])
                } else {
                    Output.line(Self.waiting(as: session.displayName, fingerprint: session.peerID.fingerprint, port: session.localPort ?? 0,
                                             text: text, into: directory.path))
                }
            }
        }
    }

    /// "Waiting for files as bob (…), port P, into DIR"; with --text, what it waits for instead (no folder is written).
    static func waiting(as name: String, fingerprint: String, port: Int, text: Bool, into directory: String) -> String {
        text ? "Waiting for a text as \(name) (\(fingerprint)), port \(port); it goes to standard output"
             : "Waiting for files as \(name) (\(fingerprint)), port \(port), into \(directory)"
    }

    /// Starts `session` listening and advertising (`announce` says it listens; `emit` writes a JSON event:
    /// on stdout, or stderr for --stdout); without a daemon on a fixed port it listens on, saying so.
    static func listen(_ session: Session, port: Int?, json: Bool, emit: ([String: Any]) -> Void, announce: () -> Void) async throws {
        do {
            try await session.start()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        announce()
        do {
            try await session.setAvailable(true)
        } catch where DiscoveryNotice.listensWithout(error, port: port ?? 0, findsByName: false) {
            let message = DiscoveryNotice.listeningWithoutDiscovery(port: port ?? 0)
            if json {
                emit(["event": "warning", "code": "no-discovery", "message": message])
            } else {
                Output.error(Terminal.paint("p2p: \(message)", .yellow))
            }
        } catch {
            Output.error("p2p: \(error)")
            if (port ?? 0) == 0 { throw CLIError(error.description, code: ExitStatus.noDaemon) }
        }
    }

    /// The name DNS-SD registered: "NAME #2" (avahi) or "NAME (2)" when another peer has NAME; said when
    /// it is not the one asked for (a prefix: a name over 63 bytes, cut to fit DNS-SD).
    static func showAdvertising(_ name: String, requested: String, json: Bool, emit: ([String: Any]) -> Void, say: (String) -> Void) {
        if json {
            emit(["event": "advertising", "name": name, "requested": requested])
        } else if !requested.hasPrefix(name) {
            say(ReachWording.renamed(to: name, from: requested))
        }
    }
}
