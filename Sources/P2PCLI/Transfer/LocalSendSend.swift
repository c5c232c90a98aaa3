import Foundation
import P2P

/// `p2p send --localsend PATH... --to NAME` (or `--text`): when NAME is a LocalSend device (its alias, or its
/// fingerprint, 80 bits of it at least), the files or the text go to it over LocalSend's upload API; otherwise the send
/// goes on as a p2p send. Exit codes as for a p2p send: 6 declined or a PIN refused, 4 busy or not the
/// announced certificate (or named by too short a fingerprint prefix), 8 failed, 3 several devices fit, or
/// a p2p peer fits too. Which device, the refusals and the words are the library's (`LocalSendUpload`).
struct LocalSendSend {
    let command: SendCommand

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
        defer { Task { await browser.stop() } }
        let lookout = min(LocalSendTarget.lookout, .milliseconds(Int64(command.timeout * 1000)))
        let resolution = await LocalSendTarget.find(query, with: browser, sessionID: command.network.sessionID ?? TransferSession.id, lookout: lookout)
        let found: LocalSendDeviceList.Entry?
        do {
            found = try LocalSendUpload.device(query, by: resolution)
        } catch {
            throw CLIError(error.description, code: error.isAmbiguous ? ExitStatus.peerNotFound : ExitStatus.connectionFailed)
        }
        guard let target = found else { return false }
        var configured = browser.sender
        configured.answerTimeout = .milliseconds(Int64(command.answerTimeout * 1000))
        let sender = configured
        let (json, pin) = (command.json, command.pin)
        if !json { Output.error(Terminal.paint("Offering to \(LocalSendPeer.label(of: target.peer)) at \(target.address):\(target.info.effectivePort)…", .dim)) }
        do {
            if let text {
                try await sender.send(text: text, to: target.info, at: target.address, pin: pin)
                json ? Output.json(LocalSendUpload.textDeliveredEvent(text, to: target)) : Output.line(LocalSendUpload.textDeliveredLine(text, to: target))
                return true
            }
            let items = try LocalSendSender.items(command.paths.map { URL(fileURLWithPath: $0) })
            let start = ContinuousClock.now
            // Ctrl-C (the driver's loop) cancels the upload, and the device is told (LocalSend's cancel): exit 7.
            let deliveries = try await SendDriver.run(nil) { offered in
                let upload = Task {
                    try await sender.send(items, to: target.info, at: target.address, pin: pin) { item, done in
                        guard !json, Terminal.stderrIsTTY else { return }
                        FileHandle.standardError.write(Data("\r\u{1B}[K↑ \(Terminal.sanitize(item.name)) \(TransferView.bytes(done))/\(TransferView.bytes(item.size))".utf8))
                    }
                }
                offered { upload.cancel() }
                return try await upload.value
            }
            if !json && Terminal.stderrIsTTY { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            if json {
                LocalSendUpload.sentEvents(deliveries, to: target).forEach { Output.json($0) }
            } else {
                Output.line(LocalSendUpload.sentLine(deliveries, seconds: TransferMeter.seconds(ContinuousClock.now - start), to: target))
            }
            return true
        } catch let failure as LocalSendSender.Failure {
            if !json && Terminal.stderrIsTTY { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            throw CLIError(failure.description, code: ExitStatus.code(.localSend(failure)))
        } catch let error as TransferError {
            throw CLIError(error.description, code: ExitStatus.usage)
        }
    }
}
