import Foundation
import P2P

/// `p2p send --localsend PATH... --to NAME` (or `--text`): when NAME is a LocalSend device (its alias, or its
/// fingerprint, 80 bits of it at least), the files or the text go to it over LocalSend's upload API; otherwise the send
/// goes on as a p2p send. Exit codes as for a p2p send: 6 declined or a PIN refused, 4 busy or not the
/// announced certificate, 8 failed, 3 several devices fit, or a p2p peer fits too.
struct LocalSendSend {
    let command: SendCommand

    /// The start of a device's fingerprint that names it for `--to` (80 bits): what the lists show.
    static func shownFingerprint(_ entry: LocalSendDeviceList.Entry) -> String {
        String(entry.info.fingerprint.prefix(LocalSendBrowser.identifyingFingerprintCharacters))
    }

    /// `--to PREFIX` fits the device only by fewer than 80 bits of its fingerprint: refused as such a prefix
    /// is for a p2p key that is not pinned (`PeerTarget.shortPrefixRefusal`), since anyone can make a
    /// certificate whose fingerprint starts that way in seconds; nil when the query is its alias or
    /// identifies its certificate.
    static func shortPrefixRefusal(_ query: String, _ entry: LocalSendDeviceList.Entry) -> CLIError? {
        guard LocalSendBrowser.fit(query, entry) == .shortPrefix else { return nil }
        let label = Terminal.sanitize(LocalSendPeer.label(of: entry.peer))
        return CLIError("--to \(Terminal.sanitize(query)) fits \(label) only by the start of its fingerprint: anyone can make a certificate "
                        + "whose fingerprint starts that way, so a prefix shorter than \(LocalSendBrowser.identifyingFingerprintCharacters) characters names "
                        + "no LocalSend device; give its alias (--to \(Terminal.sanitize(entry.info.alias))) or its fingerprint "
                        + "(--to \(Terminal.sanitize(entry.info.fingerprint))) after comparing it with the one the device shows",
                        code: ExitStatus.connectionFailed)
    }

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
        let target: LocalSendDeviceList.Entry
        let several = "; name one by its fingerprint (\(LocalSendBrowser.identifyingFingerprintCharacters) characters at least):\n"
        switch await LocalSendTarget.find(query, with: browser, sessionID: command.network.sessionID ?? TransferSession.id, lookout: lookout) {
        case .none: return false
        case .device(let device): target = device
        case .shortPrefix(let device):
            if let refusal = Self.shortPrefixRefusal(query, device) { throw refusal }
            target = device
        case .alsoP2P(let peers, let devices):
            var labels: [String] = []
            for label in peers.map(PeerTarget.label) where !labels.contains(label) { labels.append(label) }
            let list = labels.map { "  \($0)  (p2p)" } + devices.map { "  \(Terminal.sanitize(LocalSendPeer.label(of: $0.peer)))  \(Self.shownFingerprint($0))…" }
            throw CLIError("\"\(Terminal.sanitize(query))\" fits a p2p peer and a LocalSend device" + several + list.joined(separator: "\n"),
                           code: ExitStatus.peerNotFound)
        case .several(let devices):
            let list = devices.map { "  \(Terminal.sanitize(LocalSendPeer.label(of: $0.peer)))  \(Self.shownFingerprint($0))…  \($0.address)" }
            throw CLIError("several LocalSend devices fit \"\(Terminal.sanitize(query))\"" + several + list.joined(separator: "\n"), code: ExitStatus.peerNotFound)
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
            let upload = Task { [sender, pin = command.pin] in
                try await sender.send(items, to: target.info, at: target.address, pin: pin) { item, done in
                    guard !json, Terminal.stderrIsTTY else { return }
                    FileHandle.standardError.write(Data("\r\u{1B}[K↑ \(Terminal.sanitize(item.name)) \(TransferView.bytes(done))/\(TransferView.bytes(item.size))".utf8))
                }
            }
            // From here Ctrl-C (the driver's `.interrupt`) cancels the upload, and the device is told
            // (LocalSend's cancel): exit 7. The loop ends when the upload does, either way.
            let driver = CommandDriver<Void>()
            let feed = driver.feed
            Task { _ = await upload.result; feed.send(()) }
            driver.readInterrupts()
            _ = await driver.run { input in
                switch input {
                case .interrupt:
                    upload.cancel()
                    return nil
                case .event:
                    return .success
                case .keys, .line, .endOfInput, .question, .withdrawn:
                    return nil
                }
            }
            let deliveries = try await upload.value
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
            case .cancelled: ExitStatus.cancelled
            }
            if !command.json && Terminal.stderrIsTTY { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            throw CLIError(failure.description, code: code)
        } catch let error as TransferError {
            throw CLIError(error.description, code: ExitStatus.usage)
        }
    }
}
