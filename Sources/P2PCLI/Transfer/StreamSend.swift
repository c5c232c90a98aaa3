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

    /// What the stream send's work tells the driver's loop.
    enum Event: Sendable {
        /// The stream is offered: from now on Ctrl-C cancels it (`cancel`) on both sides.
        case streaming(cancel: @Sendable () -> Void)
        /// The work ended (found nobody, or the stream ended either way).
        case ended(Result<(PeerInfo, ByteStreamSummary, Double), CLIError>)
        /// The goodbyes of a Ctrl-C before the stream are said.
        case closed
    }

    func run() async throws {
        let session = try command.network.makeSession(defaultSessionID: TransferSession.id, bulk: true)
        let streams = ByteStreams(session: session)
        let driver = CommandDriver<Event>()
        let feed = driver.feed
        driver.readInterrupts()
        let work = Task {
            let outcome: Result<(PeerInfo, ByteStreamSummary, Double), CLIError>
            do {
                outcome = .success(try await send(over: session, with: streams) { feed.send(.streaming(cancel: $0)) })
            } catch let error as CLIError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(CLIError("\(error)", code: ExitStatus.failure))
            }
            feed.send(.ended(outcome))
        }
        var cancel: (@Sendable () -> Void)?
        var quitting = false
        var ended: Result<(PeerInfo, ByteStreamSummary, Double), CLIError>?
        _ = await driver.run { input in
            switch input {
            case .event(.streaming(let cancelStream)):
                cancel = cancelStream
            case .event(.ended(let outcome)):
                guard !quitting else { return nil }
                ended = outcome
                return .success
            case .event(.closed):
                // Until the stream was offered, Ctrl-C says goodbye and leaves: nothing was sent.
                Output.error("p2p: interrupted; nothing was sent")
                return ExitStatus.interrupted
            case .interrupt:
                // Once the stream is offered, Ctrl-C cancels it on both sides and the send ends as cancelled (7).
                if let cancel { cancel(); return nil }
                // A second Ctrl-C while the goodbyes hang (a peer that stopped reading): leave without them.
                if quitting { return ExitStatus.interrupted }
                quitting = true
                Task { await session.close(); feed.send(.closed) }
            case .keys, .line, .endOfInput, .question, .withdrawn:
                break
            }
            return nil
        }
        guard let outcome = ended else {
            work.cancel()
            throw ExitStatus.interrupted
        }
        await session.close()
        let (peer, summary, seconds) = try outcome.get()
        let rate = seconds > 0 ? Double(summary.length) / seconds : 0
        if command.json {
            Output.json(["event": "stream-sent", "name": summary.name, "bytes": summary.length, "sha256": summary.sha256,
                         "peer": peer.displayName, "bytes-per-second": Int(rate)])
        } else {
            Output.line("Sent \(Terminal.sanitize(summary.name)) (\(ByteCount.describe(summary.length)), \(ByteCount.describe(UInt64(rate)))/s) "
                        + "to \(Terminal.sanitize(peer.displayName)); the receiver verified its SHA-256 \(summary.sha256)")
        }
    }

    /// Finds the receiver and sends standard input to it; the caller closes the session.
    /// `streaming` hands over how to cancel the stream once it is offered.
    private func send(over session: Session, with streams: ByteStreams,
                      streaming: @Sendable (@escaping @Sendable () -> Void) -> Void) async throws -> (PeerInfo, ByteStreamSummary, Double) {
        let events = session.events()
        do { try await session.start() } catch { throw CLIError(error.description, code: ExitStatus.failure) }
        let finder = PeerFinder(session: session, to: command.to.first, connect: command.connect, timeout: command.timeout, role: "receiver",
                                progress: ConnectProgress(json: command.json))
        let peer: PeerInfo
        do {
            peer = try await finder.find(events: events)
        } catch {
            if command.json, case .keyRefused(let refusal) = error { Output.json(refusal.json) }
            throw error.cliError(denial: ExitStatus.denied)
        }
        let opened = NIOLockedValueBox<OutgoingByteStream?>(nil)
        let began = NIOLockedValueBox(ContinuousClock.now)
        let name = self.name, json = command.json
        if !json { Output.error(Terminal.paint("offering \(Terminal.sanitize(name)) (standard input) to \(Terminal.sanitize(peer.displayName))…", .dim)) }
        let progress = StreamProgress(arrow: "↑", name: name, peer: peer.displayName.description, json: json)
        // Blocks of 1,044,480 bytes: a multiple of either chunk size (61,440 or 1,044,480), so no short DATA between them.
        let input = DescriptorBlocks(blockSize: ChannelMessage.maxLargeChunk)
        let started: @Sendable (OutgoingByteStream) -> Void = { stream in
            opened.withLockedValue { $0 = stream }
            began.withLockedValue { $0 = .now }
            if json { Output.json(["event": "stream-started", "direction": "sending", "name": name, "peer": peer.displayName]) }
        }
        // A task of its own so that Ctrl-C (the driver's loop) can cancel it (the stream with it, on both sides: exit 7).
        let sending = Task { () async -> Result<ByteStreamSummary, StreamError> in
            defer { progress.clear() }
            do throws(StreamError) {
                return .success(try await streams.send(contentsOf: input, to: peer.id, name: name, opened: started, progress: progress.update))
            } catch {
                return .failure(error)
            }
        }
        streaming { sending.cancel() }
        let result = await sending.value
        let seconds = opened.withLockedValue { $0 } == nil ? 0 : StreamProgress.seconds(since: began.withLockedValue { $0 })
        guard case .failure(let error) = result else { return (peer, try result.get(), seconds) }
        let written = opened.withLockedValue { $0 }?.bytesWritten ?? 0
        let failure = Self.failure(error, to: Terminal.sanitize(peer.displayName), after: ByteCount.describe(written))
        if json {
            Output.json(["event": "stream-failed", "direction": "sending", "name": name, "peer": peer.displayName, "bytes": written,
                         "reason": failure.description])
        }
        throw failure
    }

    /// What a stream that broke after `written` means for the person, and the exit status.
    private static func failure(_ error: StreamError, to who: String, after written: String) -> CLIError {
        switch error {
        case .inputUnreadable(let why):
            CLIError("cannot read standard input: \(why); the stream to \(who) was cancelled", code: ExitStatus.transferFailed)
        case .denied(let reason): CLIError("\(who) declined the stream: \(reason)", code: ExitStatus.denied)
        case .cancelled: CLIError("interrupted; the stream to \(who) was cancelled after \(written)", code: ExitStatus.cancelled)
        case .cancelledByPeer where error.isCancelledByAPerson: CLIError("\(who) cancelled the stream after \(written)", code: ExitStatus.cancelled)
        case .peerDisconnected:
            CLIError("the stream to \(who) broke after \(written): the connection was lost before the receiver confirmed it", code: ExitStatus.transferFailed)
        case .notSupported, .notConnected: CLIError("\(error)", code: ExitStatus.transferFailed)
        default: CLIError("the stream to \(who) broke after \(written): \(Terminal.sanitize("\(error)"))", code: ExitStatus.transferFailed)
        }
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

    static func seconds(since start: ContinuousClock.Instant) -> Double { seconds(ContinuousClock.now - start) }

    static func seconds(_ elapsed: Duration) -> Double {
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    func update(_ bytes: UInt64) {
        let now = ContinuousClock.now
        guard active, let began = state.withLockedValue({ state -> ContinuousClock.Instant? in
            if let drawn = state.drawn, now - drawn < .milliseconds(250) { return nil }
            state.drawn = now
            return state.began
        }) else { return }
        let seconds = Self.seconds(since: began)
        let rate = seconds > 0 ? Double(bytes) / seconds : 0
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line): \(ByteCount.describe(bytes)), \(ByteCount.describe(UInt64(rate)))/s".utf8))
    }

    func clear() {
        guard active, state.withLockedValue({ $0.drawn != nil }) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
