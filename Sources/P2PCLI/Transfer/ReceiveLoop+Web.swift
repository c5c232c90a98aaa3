import Foundation
import P2P

/// `p2p receive --web`: the browser upload page beside the session (and beside the LocalSend peer with
/// `--localsend`): its offers arrive through the LocalSend receiver, so the loop shows them as any other.
extension ReceiveLoop {
    func startWeb(_ node: LocalSendNode, pumpDevices: Bool) async throws {
        let web = WebUploadServer(receiver: node.receiver)
        let port: Int
        do {
            port = try await web.start(port: WebUploadServer.defaultPort)
        } catch {
            throw CLIError("--web: \(error)", code: ExitStatus.failure)
        }
        webUpload = web
        // Without --localsend nobody else reports a sender's session over (its summary).
        if pumpDevices { driver.pump(node.devices.events()) { .localSend($0) } }
        let urls = ShareCommand.urls(port: port)
        let pin = node.configuration.pin ?? ""
        let chosen = options.localSend.effectivePin != nil
        if options.json {
            Output.json(["event": "web-listening", "port": port, "urls": urls.map(\.url), "pin": pin])
            return
        }
        Output.line("Upload page for any browser: PIN \(Terminal.paint(pin, .bold))\(chosen ? "" : " (random; --pin chooses one)")")
        ShareView.showURLs(urls)
        Output.line("Open a URL on a phone or computer on this network (scan the code), pick files and type the PIN.")
    }
}
