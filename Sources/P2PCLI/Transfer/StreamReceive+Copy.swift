import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import P2P

/// The stream's bytes to standard output, and the last word on them: a summary, or an error and its exit status.
extension StreamReceive {
    /// Reads the stream to its end, writing each piece to standard output before taking the next, so
    /// that the sender's RESULT says the bytes are out of this process.
    static func copy(_ stream: IncomingByteStream, json: Bool) async -> Result<ByteStreamSummary, CopyFailure> {
        let progress = StreamProgress(arrow: "↓", name: stream.info.name, peer: stream.info.peer.displayName.description, json: json)
        defer { progress.clear() }
        do {
            for try await chunk in stream {
                do {
                    try await NIOThreadPool.singleton.runIfActive { try writeAll(chunk) }
                } catch {
                    let why = (error as? OutputError)?.reason ?? "\(error)"
                    stream.cancel(reason: "the receiver could not write its output: \(why)")
                    return .failure(.output(why))
                }
                progress.update(stream.bytesRead)
            }
        } catch {
            return .failure(.stream(error))
        }
        guard let summary = stream.summary else { return .failure(.stream(.closed)) }
        return .success(summary)
    }

    /// Why a copy ended early: the stream broke, or standard output could not be written.
    enum CopyFailure: Error {
        case stream(StreamError)
        case output(String)
    }

    /// Standard output could not be written.
    struct OutputError: Error {
        let reason: String
    }

    static func writeAll(_ chunk: ByteBuffer) throws {
        try chunk.withUnsafeReadableBytes { pointer in
            var offset = 0
            while offset < pointer.count {
                let written = Foundation.write(STDOUT_FILENO, pointer.baseAddress! + offset, pointer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw OutputError(reason: errno == EPIPE ? "the reader of standard output went away (broken pipe)" : String(cString: strerror(errno)))
                }
                offset += written
            }
        }
    }

    /// The last word on a stream: a summary, or the error and its exit status.
    func report(_ info: ByteStreamInfo, _ outcome: Result<ByteStreamSummary, CopyFailure>, bytes: UInt64, seconds: Double) -> CLIError? {
        let name = Terminal.sanitize(info.name), peer = Terminal.sanitize(info.peer.displayName)
        switch outcome {
        case .success(let summary):
            let rate = seconds > 0 ? Double(summary.length) / seconds : 0
            if command.json {
                Self.json(["event": "stream-received", "name": summary.name, "bytes": summary.length, "sha256": summary.sha256,
                           "peer": info.peer.displayName, "bytes-per-second": Int(rate)])
            } else {
                Output.error("Received \(name) from \(peer): \(ByteCount.describe(summary.length)) (\(ByteCount.describe(UInt64(rate)))/s) "
                             + "to standard output; SHA-256 verified \(summary.sha256)")
            }
            return nil
        case .failure(let error):
            let code: ExitCode
            let message: String
            switch error {
            case .output(let why):
                code = ExitStatus.transferFailed
                message = "cannot write standard output: \(why); the stream \(name) from \(peer) was cancelled"
            case .stream(.cancelled):
                code = ExitStatus.cancelled
                message = "interrupted; the stream \(name) from \(peer) was cancelled: standard output holds only part of it"
            case .stream(.cancelledByPeer(let reason)) where reason.raw == ByteStreams.senderCancelledReason:
                code = ExitStatus.cancelled
                message = "\(peer) cancelled the stream \(name) after \(ByteCount.describe(bytes)): standard output holds only part of it"
            case .stream(.peerDisconnected):
                code = ExitStatus.transferFailed
                message = "the stream \(name) from \(peer) broke after \(ByteCount.describe(bytes)): the connection was lost before its end; "
                    + "standard output holds only part of it"
            case .stream(let error):
                code = ExitStatus.transferFailed
                message = "the stream \(name) from \(peer) broke after \(ByteCount.describe(bytes)): \(Terminal.sanitize(error.description)); "
                    + "standard output does not hold it as sent"
            }
            if command.json {
                Self.json(["event": "stream-failed", "direction": "receiving", "name": info.name, "peer": info.peer.displayName,
                           "bytes": bytes, "reason": message])
            }
            return CLIError(message, code: code)
        }
    }
}
