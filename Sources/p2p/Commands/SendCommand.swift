import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p send`: streams files and directories to a peer, verified end to end, resumable.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send files or directories to a peer running `p2p receive`.",
        discussion: """
            Each file is offered with its name, size and type; directories go recursively with relative paths. \
            Files are streamed in chunks and verified with SHA-256 on arrival. Run the same command again after an \
            interruption and only the missing part travels. Ctrl-C during a transfer cancels it on both sides (exit 7); \
            before one starts (while finding or connecting the receiver) it exits 130 and nothing is sent.
            --to takes the receiver's display name (any case), the start of its peer ID or of its fingerprint \
            (dashes optional; `p2p peers` shows them).
            `p2p send - --as NAME` sends standard input instead, of any length, as one byte stream to `p2p receive --stdout`, \
            which writes it to its standard output; the whole stream is verified by SHA-256 at the end, and a stream that \
            breaks (either side killed, the link lost) fails on both sides.
            Exit codes: 0 all files (or the stream) delivered and verified, 3 no receiver found (or several fit --to), 4 connection failed, \
            6 denied, 7 cancelled, 8 failed (verification, disconnect, unreadable file), 130 interrupted before sending.
            """
    )

    @OptionGroup var network: NetworkOptions

    @Argument(help: "Files or directories to send, or - for standard input (with --as).")
    var paths: [String]

    @Option(name: .customLong("as"), help: ArgumentHelp("With -: the name standard input is sent under, as one byte stream.", valueName: "name"))
    var streamName: String?

    @Option(help: "The receiving peer: display name, or the start of its ID or fingerprint.")
    var to: String?

    @Option(help: "Connect directly to the receiver at HOST:PORT.")
    var connect: String?

    @Flag(help: "One JSON object per event per line.")
    var json = false

    @Option(help: "Seconds to wait for the receiver to appear.")
    var timeout: Double = 30

    func run() async throws {
        if let stream = try StreamSend(self) { return try await stream.run() }
        let urls = paths.map { URL(fileURLWithPath: $0) }
        for url in urls where !FileManager.default.isReadableFile(atPath: url.path) {
            throw CLIError("cannot read \(url.path)", code: ExitStatus.transferFailed)
        }
        let session = try network.makeSession(defaultSessionID: TransferSession.id, bulk: true)
        // Until the first byte is offered, Ctrl-C says goodbye and leaves: nothing was sent.
        Interruption.quit(saying: { "interrupted; nothing was sent" }, after: { await session.close() })
        let transfers = FileTransfers(session: session, directory: FileManager.default.temporaryDirectory)
        let view = TransferView(json: json)
        let pump = EventPump(transfers.events()) { view.handle($0) }
        let outcome: Result<(PeerInfo, [Delivery]), any Error>
        do {
            outcome = .success(try await send(urls, over: session, with: transfers))
        } catch {
            outcome = .failure(error)
        }
        await session.close()
        // Each transfer emitted its end before `sendResource` returned or threw: print those events
        // (`file-sent`, `transfer-failed`) before the summary or the error, and before the process exits.
        await pump.drain()
        let (peer, deliveries) = try outcome.get()
        if !json {
            let total = deliveries.reduce(0) { $0 + $1.size }
            Output.line("Delivered \(deliveries.count) file\(deliveries.count == 1 ? "" : "s") (\(TransferView.bytes(total))) to \(Terminal.sanitize(peer.displayName)), all verified.")
        }
    }

    /// Starts the session, finds the receiver and sends every file to it; the caller closes the session.
    private func send(_ urls: [URL], over session: Session, with transfers: FileTransfers) async throws -> (PeerInfo, [Delivery]) {
        let events = session.events()
        do {
            try await session.start()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        let finder = PeerFinder(session: session, to: to, connect: connect, timeout: timeout, role: "receiver",
                                progress: ConnectProgress(json: json))
        let peer: PeerInfo
        do {
            peer = try await finder.find(events: events)
        } catch {
            throw error.cliError(denial: ExitStatus.denied)
        }
        let delivered = NIOLockedValueBox<[Delivery]>([])
        // A task of its own so that Ctrl-C can cancel it; it is awaited right here.
        let sending = Task { () throws -> [Delivery] in
            for url in urls {
                let deliveries = try await transfers.sendResource(at: url, to: peer.id)
                delivered.withLockedValue { $0 += deliveries }
            }
            return delivered.withLockedValue { $0 }
        }
        // From here Ctrl-C cancels the transfer on both sides and the command ends as cancelled (7).
        Interruption.handle { sending.cancel() }
        switch await sending.result {
        case .success(let deliveries):
            return (peer, deliveries)
        case .failure(let error):
            let transferError = error as? TransferError ?? .cancelled
            let code = TransferSession.exitCode(for: transferError)
            guard case .cancelled = transferError else { throw CLIError(transferError.description, code: code) }
            let done = delivered.withLockedValue { $0 }
            throw CLIError(Self.interruptedLine(files: done.count, bytes: done.reduce(0) { $0 + $1.size }, to: peer.displayName), code: code)
        }
    }

    /// What a Ctrl-C in mid-transfer leaves: the files already delivered, and how to send the rest.
    static func interruptedLine(files: Int, bytes: UInt64, to peer: String) -> String {
        let name = Terminal.sanitize(peer)
        guard files > 0 else {
            return "interrupted; the transfer to \(name) was cancelled (run the same command again to resume it)"
        }
        let count = "\(files) file\(files == 1 ? "" : "s")"
        return "interrupted after \(count) (\(TransferView.bytes(bytes))) reached \(name), verified; run the same command again to send the rest"
    }
}

/// What `p2p send` and `p2p receive` share.
enum TransferSession {
    /// Senders and receivers meet in their own session, apart from chats and games.
    static let id = "files"

    static func exitCode(for error: TransferError) -> ExitCode {
        switch error {
        case .denied: ExitStatus.denied
        case .cancelled: ExitStatus.cancelled
        // Someone pressed Ctrl-C over there; any other CANCEL is the receiver failing (disk full, unwritable).
        case .cancelledByPeer(let reason) where reason == FileTransfers.receiverCancelledReason: ExitStatus.cancelled
        default: ExitStatus.transferFailed
        }
    }
}
