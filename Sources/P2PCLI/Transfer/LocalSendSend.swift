import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p send --localsend PATH... --to NAME` (or `--text`): when NAME is a LocalSend device (its alias, or the
/// start of its fingerprint), the files or the text go to it over LocalSend's upload API; otherwise the send
/// goes on as a p2p send. Exit codes as for a p2p send: 6 declined or a PIN refused, 4 busy or not the
/// announced certificate, 8 failed, 3 several devices fit.
struct LocalSendSend {
    let command: SendCommand
    /// How long to listen for the device before deciding it is not a LocalSend one.
    static let lookout: Duration = .seconds(4)

    /// Sends to the LocalSend device `--to` names; false when no device fits (send as p2p).
    func run(text: String?) async throws -> Bool {
        guard let query = command.to.first else { return false }
        let browser: LocalSendBrowser
        do {
            browser = try LocalSendBrowser(identity: try Identity.loadOrCreate(), alias: command.network.displayName,
                                           interfaces: command.interfaces.isEmpty ? nil : command.interfaces)
            try await browser.start()
        } catch {
            throw CLIError("LocalSend: \(error)", code: ExitStatus.failure)
        }
        let wait = min(Self.lookout, .milliseconds(Int64(command.timeout * 1000)))
        let found = await browser.waitForDevices(named: query, timeout: wait)
        defer { Task { await browser.stop() } }
        guard !found.isEmpty else { return false }
        guard found.count == 1, let target = found.first else {
            let list = found.map { "  \(Terminal.sanitize(LocalSendPeer.label(of: $0.peer)))  \($0.info.fingerprint.prefix(16))…  \($0.address)" }
            throw CLIError("several LocalSend devices fit \"\(Terminal.sanitize(query))\"; name one by the start of its fingerprint:\n"
                           + list.joined(separator: "\n"), code: ExitStatus.peerNotFound)
        }
        let label = Terminal.sanitize(LocalSendPeer.label(of: target.peer))
        var sender = browser.sender
        sender.answerTimeout = .milliseconds(Int64(command.answerTimeout * 1000))
        if !command.json { Output.error(Terminal.paint("Offering to \(label) at \(target.address):\(target.info.effectivePort)…", .dim)) }
        do {
            if let text {
                try await sender.send(text: text, to: target.info, at: target.address, pin: command.pin)
                if command.json {
                    Output.json(["event": "text-delivered", "peer": target.info.alias, "kind": "localsend", "characters": text.count])
                } else {
                    Output.line("Delivered a text (\(text.count) characters) to \(label).")
                }
                return true
            }
            let items = try LocalSendSender.items(command.paths.map { URL(fileURLWithPath: $0) })
            let start = ContinuousClock.now
            let json = command.json
            let deliveries = try await sender.send(items, to: target.info, at: target.address, pin: command.pin) { item, done in
                guard !json, Terminal.stderrIsTTY else { return }
                FileHandle.standardError.write(Data("\r\u{1B}[K↑ \(Terminal.sanitize(item.name)) \(TransferView.bytes(done))/\(TransferView.bytes(item.size))".utf8))
            }
            if !json && Terminal.stderrIsTTY { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            let bytes = deliveries.reduce(UInt64(0)) { $0 + $1.size }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if json {
                for delivery in deliveries {
                    Output.json(["event": "file-sent", "name": delivery.name, "size": delivery.size, "sha256": delivery.sha256,
                                 "peer": target.info.alias, "kind": "localsend"])
                }
                Output.json(["event": "sent", "files": deliveries.count, "bytes": bytes, "peer": target.info.alias, "kind": "localsend",
                             "fingerprint": target.info.fingerprint])
            } else {
                let rate = TransferView.bytes(UInt64(seconds > 0 ? Double(bytes) / seconds : 0))
                Output.line("Sent \(ReceiveLoop.count(deliveries.count, "file")) (\(TransferView.bytes(bytes)), \(rate)/s) to \(label); "
                            + "LocalSend reports no hash back: delivered as its answers say")
            }
            return true
        } catch let failure as LocalSendSender.Failure {
            let code = switch failure {
            case .declined, .pinRequired, .tooManyTries: ExitStatus.denied
            case .busy, .fingerprintMismatch: ExitStatus.connectionFailed
            case .failed: ExitStatus.transferFailed
            }
            throw CLIError(failure.description, code: code)
        } catch let error as TransferError {
            throw CLIError(error.description, code: ExitStatus.usage)
        }
    }
}
