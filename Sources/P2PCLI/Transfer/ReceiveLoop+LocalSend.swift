import Foundation
import P2P

/// `p2p receive --localsend`: starting the LocalSend peer beside the session, and the devices it hears of
/// (a sender's session over is the receiver's to sum up).
extension ReceiveLoop {
    func startLocalSend(_ node: LocalSendNode) async throws {
        let port: Int
        do {
            port = try await node.start()
        } catch {
            throw CLIError("LocalSend: \(error)", code: ExitStatus.failure)
        }
        driver.pump(node.devices.events()) { .localSend($0) }
        let fingerprint = node.certificate.fingerprint
        if options.json {
            Output.json(["event": "localsend-listening", "alias": node.configuration.alias, "port": port, "fingerprint": fingerprint,
                         "pin": node.configuration.pin != nil, "version": LocalSendDeviceInfo.protocolVersion])
        } else {
            let pin = node.configuration.pin == nil ? "" : ", PIN required"
            Output.line("LocalSend: receiving as \(Terminal.sanitize(node.configuration.alias)) on HTTPS port \(port)\(pin), fingerprint \(fingerprint.prefix(16))…")
        }
    }

    /// A LocalSend device heard of: a JSON event, or with --verbose a line.
    func showDevice(_ entry: LocalSendDeviceList.Entry) {
        if options.json {
            Output.json(["event": "localsend-device", "alias": entry.info.alias, "deviceModel": entry.info.deviceModel ?? "",
                         "deviceType": entry.info.kind, "fingerprint": entry.info.fingerprint, "address": entry.address,
                         "port": entry.info.effectivePort, "version": entry.info.version])
        } else if options.network.verbose {
            clearProgress()
            Output.line(Terminal.paint("* LocalSend device \(Terminal.sanitize(LocalSendPeer.label(of: entry.peer))) at \(entry.address):\(entry.info.effectivePort)", .dim))
        }
    }
}
