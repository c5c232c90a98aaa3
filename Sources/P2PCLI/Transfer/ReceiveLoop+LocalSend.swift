import Foundation
import P2P

/// `p2p receive --localsend` and `--web`: the library's `LocalSendReception` (the LocalSend peer, the
/// browser upload page) started beside the session, what it says it listens on, and the devices it
/// hears of (a sender's session over is the receiver's to sum up).
extension ReceiveLoop {
    func start(_ reception: LocalSendReception) async throws {
        let ports: (localSend: Int?, page: Int?)
        do {
            ports = try await reception.start()
        } catch {
            throw CLIError(error.description, code: ExitStatus.failure)
        }
        driver.pump(reception.events()) { .localSend($0) }
        if let port = ports.localSend {
            options.json ? Output.json(reception.listeningEvent(port: port)) : Output.line(reception.listeningLine(port: port))
        }
        guard let port = ports.page else { return }
        let urls = ShareServer.urls(port: port)
        if options.json { return Output.json(reception.pageEvent(port: port, urls: urls.map(\.url))) }
        let chosen = options.localSend.effectivePin != nil
        Output.line("Upload page for any browser: PIN \(Terminal.paint(reception.node.configuration.pin ?? "", .bold))\(chosen ? "" : " (random; --pin chooses one)")")
        ShareView.showURLs(urls)
        Output.line("Open a URL on a phone or computer on this network (scan the code), pick files and type the PIN.")
    }

    /// A LocalSend device heard of: a JSON event, or with --verbose a line.
    func showDevice(_ entry: LocalSendDeviceList.Entry) {
        if options.json {
            Output.json(entry.heardJSON)
        } else if options.network.verbose {
            clearProgress()
            Output.line(Terminal.paint(entry.heardLine, .dim))
        }
    }
}
