import ArgumentParser
import Foundation
import P2P

/// `p2p send`: streams files and directories to a peer, verified end to end, resumable.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send files or directories to a peer running `p2p receive`.",
        discussion: """
            Each file is offered with its name, size and type; directories go recursively with relative paths. \
            Files are streamed in chunks and verified with SHA-256 on arrival. Run the same command again after an \
            interruption and only the missing part travels. Ctrl-C cancels on both sides.
            Exit codes: 0 all files delivered and verified, 3 no receiver found, 4 connection failed, \
            6 denied, 7 cancelled, 8 failed (verification, disconnect, unreadable file).
            """
    )

    @OptionGroup var network: NetworkOptions

    @Argument(help: "Files or directories to send.")
    var paths: [String]

    @Option(help: "The receiving peer (display name or ID prefix).")
    var to: String?

    @Option(help: "Connect directly to the receiver at HOST:PORT.")
    var connect: String?

    @Flag(help: "One JSON object per event per line.")
    var json = false

    @Option(help: "Seconds to wait for the receiver to appear.")
    var timeout: Double = 30

    func run() async throws {
        let urls = paths.map { URL(fileURLWithPath: $0) }
        for url in urls where !FileManager.default.isReadableFile(atPath: url.path) {
            throw CLIError("cannot read \(url.path)", code: ExitStatus.transferFailed)
        }
        let session = try network.makeSession(defaultSessionID: TransferSession.id)
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
        let peer = try await PeerFinder(session: session, to: to, connect: connect, timeout: timeout).find(events: events)
        // A task of its own so that Ctrl-C can cancel it; it is awaited right here.
        let sending = Task { () throws -> [Delivery] in
            var all: [Delivery] = []
            for url in urls { all += try await transfers.sendResource(at: url, to: peer.id) }
            return all
        }
        Signals.onInterrupt { sending.cancel() }
        switch await sending.result {
        case .success(let deliveries):
            return (peer, deliveries)
        case .failure(let error):
            let transferError = error as? TransferError ?? .cancelled
            throw CLIError(transferError.description, code: TransferSession.exitCode(for: transferError))
        }
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
