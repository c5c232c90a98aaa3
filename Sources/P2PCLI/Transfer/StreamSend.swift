import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import P2P

/// `p2p send - --as NAME`: standard input, of a length nobody knows in advance, as one byte stream to
/// the receiver (`p2p receive --stdout`), which verifies its SHA-256 at the end.
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
        guard name.utf8.count <= ChannelMessage.maxNameBytes else {
            throw Self.usage("--as: at most \(ChannelMessage.maxNameBytes) bytes of UTF-8")
        }
        self.command = command
        self.name = name
    }

    private static func usage(_ message: String) -> CLIError { CLIError(message, code: ExitStatus.usage) }

    func run() async throws {
        let session = try command.network.makeSession(defaultSessionID: TransferSession.id, bulk: true)
        // Until the stream is open, Ctrl-C says goodbye and leaves: nothing was sent.
        Interruption.quit(saying: { "interrupted; nothing was sent" }, after: { await session.close() })
        let streams = ByteStreams(session: session)
        let outcome: Result<(PeerInfo, ByteStreamSummary, Double), CLIError>
        do {
            outcome = .success(try await send(over: session, with: streams))
        } catch let error as CLIError {
            outcome = .failure(error)
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

    /// Finds the receiver, opens the stream and sends standard input to its end; the caller closes the session.
    private func send(over session: Session, with streams: ByteStreams) async throws -> (PeerInfo, ByteStreamSummary, Double) {
        let events = session.events()
        do {
            try await session.start()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
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
        let started = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
        let name = self.name, json = command.json
        // A task of its own so that Ctrl-C can cancel it; it is awaited right here.
        let sending = Task { () async throws -> ByteStreamSummary in
            if !json { Output.error(Terminal.paint("offering \(Terminal.sanitize(name)) (standard input) to \(Terminal.sanitize(peer.displayName))…", .dim)) }
            let stream = try await streams.open(to: peer.id, name: name)
            opened.withLockedValue { $0 = stream }
            started.withLockedValue { $0 = .now }
            if json {
                Output.json(["event": "stream-started", "direction": "sending", "name": name, "peer": peer.displayName])
            }
            let progress = StreamProgress(arrow: "↑", name: name, peer: peer.displayName.description, json: json)
            for try await block in StandardInputBlocks(blockSize: stream.chunkSize) {
                try await stream.write(block)
                progress.update(stream.bytesWritten)
            }
            progress.clear()
            // A cancelled task also ends the loop: never take that for the end of the input.
            if Task.isCancelled {
                stream.cancel()
                throw StreamError.cancelled
            }
            return try await stream.finish()
        }
        // From here Ctrl-C cancels the stream on both sides and the command ends as cancelled (7). The
        // stream is cancelled at once: the task may be waiting for input that does not come.
        Interruption.handle {
            opened.withLockedValue { $0 }?.cancel()
            sending.cancel()
        }
        let result = await sending.result
        let seconds = started.withLockedValue { $0 }.map { Self.seconds(since: $0) } ?? 0
        switch result {
        case .success(let summary):
            return (peer, summary, seconds)
        case .failure(let error):
            let written = opened.withLockedValue { $0 }?.bytesWritten ?? 0
            let who = Terminal.sanitize(peer.displayName)
            let failure: CLIError
            switch error {
            case let input as InputError:
                opened.withLockedValue { $0 }?.cancel(reason: "the sender could not read its input: \(input.reason)")
                failure = CLIError("cannot read standard input: \(input.reason); the stream to \(who) was cancelled", code: ExitStatus.transferFailed)
            case StreamError.denied(let reason):
                failure = CLIError("\(who) declined the stream: \(reason)", code: ExitStatus.denied)
            case StreamError.cancelled, is CancellationError:
                failure = CLIError("interrupted; the stream to \(who) was cancelled after \(ByteCount.describe(written))", code: ExitStatus.cancelled)
            case StreamError.cancelledByPeer(let reason) where reason.raw == ByteStreams.receiverCancelledReason:
                failure = CLIError("\(who) cancelled the stream after \(ByteCount.describe(written))", code: ExitStatus.cancelled)
            case StreamError.peerDisconnected:
                failure = CLIError("the stream to \(who) broke after \(ByteCount.describe(written)): the connection was lost before the receiver "
                                   + "confirmed it", code: ExitStatus.transferFailed)
            case StreamError.notSupported, StreamError.notConnected:
                failure = CLIError("\(error)", code: ExitStatus.transferFailed)
            default:
                failure = CLIError("the stream to \(who) broke after \(ByteCount.describe(written)): \(Terminal.sanitize("\(error)"))", code: ExitStatus.transferFailed)
            }
            if json {
                Output.json(["event": "stream-failed", "direction": "sending", "name": name, "peer": peer.displayName, "bytes": written,
                             "reason": failure.description])
            }
            throw failure
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// Standard input could not be read.
struct InputError: Error {
    let reason: String
}

/// Standard input in blocks, read on a thread of its own (a read may wait for as long as the producer
/// likes) at most two blocks ahead of the consumer. A block holds what one read returned plus whatever
/// more is ready at once, up to `blockSize`: a fast producer (a file, `tar c`) fills whole blocks, a
/// trickle (a log) goes out as it comes instead of waiting for a block to fill.
struct StandardInputBlocks: AsyncSequence {
    typealias Element = ByteBuffer
    let blockSize: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<ByteBuffer, any Error>.AsyncIterator
        let room: DispatchSemaphore

        mutating func next() async throws -> ByteBuffer? {
            let block = try await base.next()
            // Taken: the reader may read one more ahead.
            if block != nil { room.signal() }
            return block
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        // Two blocks of room, given by signals rather than as the initial value: libdispatch traps when a
        // semaphore is freed below its initial value (the reader may be one block ahead at the end).
        let room = DispatchSemaphore(value: 0)
        room.signal()
        room.signal()
        let blockSize = self.blockSize
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        let thread = Thread {
            let descriptor = STDIN_FILENO
            while true {
                room.wait()
                var block = ByteBufferAllocator().buffer(capacity: blockSize)
                var atEnd = false
                do {
                    // The first read waits for input; the following ones only take what is there already.
                    var first = true
                    while block.readableBytes < blockSize, first || Self.ready(descriptor) {
                        first = false
                        let got = try Self.read(descriptor, into: &block, upTo: blockSize - block.readableBytes)
                        if got == 0 {
                            atEnd = true
                            break
                        }
                    }
                } catch {
                    continuation.finish(throwing: error)
                    return
                }
                if block.readableBytes > 0 { continuation.yield(block) }
                if atEnd {
                    continuation.finish()
                    return
                }
            }
        }
        thread.start()
        return AsyncIterator(base: stream.makeAsyncIterator(), room: room)
    }

    /// Whether a read of `descriptor` would return at once.
    private static func ready(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    /// One read(2) into `block`; 0 at the end of the input.
    private static func read(_ descriptor: Int32, into block: inout ByteBuffer, upTo count: Int) throws -> Int {
        while true {
            var got = 0
            block.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
                got = Foundation.read(descriptor, pointer.baseAddress, count)
                return Swift.max(got, 0)
            }
            if got >= 0 { return got }
            if errno == EINTR { continue }
            throw InputError(reason: String(cString: strerror(errno)))
        }
    }
}

/// One line on stderr, redrawn in place at most four times a second, for a stream under way (only on
/// a terminal, and not with --json).
final class StreamProgress: Sendable {
    private let arrow: String, name: String, peer: String
    private let active: Bool
    private let state = NIOLockedValueBox<(began: ContinuousClock.Instant, drawn: ContinuousClock.Instant?)>((.now, nil))

    init(arrow: String, name: String, peer: String, json: Bool) {
        self.arrow = arrow
        self.name = Terminal.sanitize(String(name.suffix(40)))
        self.peer = Terminal.sanitize(peer)
        active = !json && Terminal.stderrIsTTY
    }

    func update(_ bytes: UInt64) {
        guard active else { return }
        let now = ContinuousClock.now
        let began: ContinuousClock.Instant? = state.withLockedValue { state in
            if let drawn = state.drawn, now - drawn < .milliseconds(250) { return nil }
            state.drawn = now
            return state.began
        }
        guard let began else { return }
        let seconds = StreamSend.seconds(since: began)
        let rate = seconds > 0 ? Double(bytes) / seconds : 0
        FileHandle.standardError.write(Data("\r\u{1B}[K\(arrow) \(name) \(arrow == "↑" ? "to" : "from") \(peer): \(ByteCount.describe(bytes)), \(ByteCount.describe(UInt64(rate)))/s".utf8))
    }

    func clear() {
        guard active, state.withLockedValue({ $0.drawn != nil }) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
