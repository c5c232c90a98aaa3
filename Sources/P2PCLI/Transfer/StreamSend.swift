import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p send - --as NAME`: standard input as one byte stream to the receiver (`p2p receive --stdout`),
/// which verifies its SHA-256 at the end. The library finds the peer and sends (`ByteStreams.send(contentsOf:…)`
/// of `DescriptorBlocks`); this type reads the options and says how it went.
struct StreamSend {
    let command: SendCommand
    let name: String

    /// The stream send `command` asks for, nil for a send of files; throws a usage error when `-` and
    /// `--as` do not come together.
    init?(_ command: SendCommand) throws {
        let dash = command.paths.contains("-")
        guard dash || command.streamName != nil else { return nil }
        guard dash else { throw Self.usage("--as names the stream of standard input: use it with `-` (p2p send - --as NAME)") }
        guard command.paths == ["-"] else { throw Self.usage("`-` (standard input) cannot be sent together with files; send them apart") }
        guard command.to.count <= 1, !command.all else { throw Self.usage("standard input is read once: it goes to one receiver (one --to, no --all)") }
        guard let name = command.streamName, !name.isEmpty else {
            throw Self.usage("standard input has no name: give it one with --as NAME (p2p send - --as dump.sql)")
        }
        guard name.utf8.count <= ChannelMessage.maxNameBytes else { throw Self.usage("--as: at most \(ChannelMessage.maxNameBytes) bytes of UTF-8") }
        self.command = command
        self.name = name
    }

    private static func usage(_ message: String) -> CLIError { CLIError(message, code: ExitStatus.usage) }

    /// Finds the receiver and streams standard input to it on the driver's loop (`SendDriver`), then
    /// says how it ended (the library's `StreamSendReport`).
    func run() async throws {
        let session = try command.network.makeSession(defaultSessionID: TransferSession.id, bulk: true)
        let streams = ByteStreams(session: session)
        let report = try await SendDriver.run(session) { offered in try await send(over: session, with: streams, streaming: offered) }
        if command.json { Output.json(report.event) }
        switch report.verdict {
        case .delivered: if !command.json { Output.line(report.text) }
        default: throw CLIError(report.text, code: ExitStatus.code(.send(report.verdict)))
        }
    }

    /// Finds the receiver and sends standard input to it; the driver closes the session.
    /// `streaming` hands over how to cancel the stream once it is offered.
    private func send(over session: Session, with streams: ByteStreams,
                      streaming: SendDriver<StreamSendReport>.Offered) async throws -> StreamSendReport {
        // One receiver (`init` sees to it), found as a send of files finds it.
        guard let peer = try await command.receivers(on: session).first else { throw CLIError("no receiver was found", code: ExitStatus.peerNotFound) }
        let name = self.name, json = command.json
        if !json { Output.error(Terminal.paint("offering \(Terminal.sanitize(name)) (standard input) to \(Terminal.sanitize(peer.displayName))…", .dim)) }
        let progress = StreamProgress(arrow: "↑", name: name, peer: peer.displayName.description, json: json)
        // Blocks of 1,044,480 bytes: a multiple of either chunk size (61,440 or 1,044,480), so no short DATA between them.
        let input = DescriptorBlocks(blockSize: ChannelMessage.maxLargeChunk)
        // A task of its own so that Ctrl-C (the driver's loop) can cancel it (the stream with it, on both sides: exit 7).
        let sending = Task { () async -> StreamSendReport in
            defer { progress.clear() }
            return await streams.send(reporting: input, to: peer, name: name, started: {
                if json { Output.json(StreamSendReport.startedEvent(name: name, to: peer)) }
            }, progress: progress.update)
        }
        streaming { sending.cancel() }
        return await sending.value
    }
}

/// One line on stderr, redrawn in place at most four times a second, for a stream under way (only on
/// a terminal, and not with --json).
final class StreamProgress: Sendable {
    private let line: String, active: Bool
    private let state = NIOLockedValueBox<(began: ContinuousClock.Instant, drawn: ContinuousClock.Instant?)>((.now, nil))

    init(arrow: String, name: String, peer: String, json: Bool) {
        line = "\(arrow) \(Terminal.sanitize(String(name.suffix(40)))) \(arrow == "↑" ? "to" : "from") \(Terminal.sanitize(peer))"
        active = !json && Terminal.stderrIsTTY
    }

    func update(_ bytes: UInt64) {
        let now = ContinuousClock.now
        guard active, let began = state.withLockedValue({ state -> ContinuousClock.Instant? in
            if let drawn = state.drawn, now - drawn < .milliseconds(250) { return nil }
            state.drawn = now
            return state.began
        }) else { return }
        let seconds = TransferMeter.seconds(now - began)
        let rate = seconds > 0 ? Double(bytes) / seconds : 0
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line): \(ByteCount.describe(bytes)), \(ByteCount.describe(UInt64(rate)))/s".utf8))
    }

    func clear() {
        guard active, state.withLockedValue({ $0.drawn != nil }) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
