import Foundation
import P2P

/// Finds and connects the one peer a command talks to: `--connect HOST:PORT`, `--to NAME-OR-ID`, or,
/// with neither, the only peer of the session that shows up.
struct PeerFinder {
    let session: Session
    let to: String?
    let connect: String?
    let timeout: Double

    func find(events: AsyncStream<SessionEvent>) async throws -> PeerInfo {
        if let connect {
            guard let endpoint = Endpoint(connect) else { throw CLIError("--connect wants HOST:PORT", code: ExitStatus.failure) }
            do {
                return try await session.connect(to: endpoint)
            } catch {
                throw Self.failure(error)
            }
        }
        do {
            try session.setAvailable(true)
        } catch {
            throw CLIError(error.description, code: ExitStatus.noDaemon)
        }
        let session = self.session
        let deadline = Task { [timeout] in
            // Cancelled (the peer was found): return, do not close the session we are about to use.
            do { try await Task.sleep(for: .seconds(timeout)) } catch { return }
            await session.close()
        }
        defer { deadline.cancel() }
        // A receiver restarted on another port leaves a stale DNS-SD record (its old port) for a while.
        // A refused connection makes the session resolve the name again; so keep trying for a few seconds
        // with whatever address it has by then, browsing afresh now and then, before giving up.
        var lastFailure: CLIError?
        for await event in events {
            guard case .peerChanged(let peer, .available, _) = event else { continue }
            let match: PeerInfo? = if let to { session.peer(matching: to) } else { peer }
            guard let match else { continue }
            let giveUp = ContinuousClock.now + .seconds(Self.staleRecordGrace)
            var attempt = 0
            while true {
                do {
                    return try await session.connect(to: match.id)
                } catch {
                    if case .denied = error { throw Self.failure(error) }
                    lastFailure = Self.failure(error)
                }
                attempt += 1
                guard ContinuousClock.now < giveUp, (try? await Task.sleep(for: .milliseconds(500))) != nil else { break }
                if attempt.isMultiple(of: 4) {
                    try? session.setAvailable(false)
                    try? session.setAvailable(true)
                }
            }
            break
        }
        if let lastFailure { throw lastFailure }
        let what = to.map { "no peer called \($0)" } ?? "no receiver"
        throw CLIError("\(what) appeared within \(Int(timeout)) s (run `p2p receive` on the other machine, or use --connect)", code: ExitStatus.peerNotFound)
    }
}

extension PeerFinder {
    /// Seconds to wait for a fresh announcement after a discovered peer could not be reached.
    static let staleRecordGrace = 10.0

    /// A peer that declines the connection is a denial (exit 6), anything else a failed connection (exit 4).
    static func failure(_ error: SessionError) -> CLIError {
        if case .denied = error { return CLIError(error.description, code: ExitStatus.denied) }
        return CLIError(error.description, code: ExitStatus.connectionFailed)
    }
}

/// Asks the person at the terminal yes/no questions, one at a time, reading answers from stdin.
struct Prompter: Sendable {
    private static let oneAtATime = NSLock()

    /// `false` without a terminal: nobody can say yes.
    func confirm(_ question: String) async -> Bool {
        guard Terminal.stdinIsTTY else { return false }
        return await withCheckedContinuation { continuation in
            // A thread of its own: waiting for a person must not hold a thread of the concurrency pool.
            Thread {
                Self.oneAtATime.withLock {
                    FileHandle.standardError.write(Data(Terminal.paint("\(question) [y/n] ", .yellow).utf8))
                    let answer = readLine() ?? ""
                    continuation.resume(returning: answer.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("y"))
                }
            }.start()
        }
    }
}
