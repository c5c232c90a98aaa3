import ArgumentParser
import Foundation
import P2P

/// `p2p share`: files for any browser on the LAN, behind a PIN, through LocalSend's download API.
struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share files with any browser on the network (a page behind a PIN; LocalSend's download API).",
        discussion: """
            Serves a page over plain HTTP (browsers refuse self-signed certificates, so the PIN guards the files) \
            and prints its URL for every IPv4 address of this host, each with a QR code for a phone's camera. The \
            page asks for the PIN (--pin, else a random 6-digit one, printed), lists the files with their sizes and \
            downloads them; it is one self-contained page (a few lines of inline script, nothing from the internet). \
            A folder is shared as its files, named by their paths relative to it (saved as folder_sub_name: a \
            download has no folders); symbolic links are left out. Files are streamed from disk. \
            A wrong PIN is refused (401); after 3 wrong PINs an address waits 60 s (429). LocalSend apps can \
            fetch the files too (POST /api/localsend/v2/prepare-download?pin=, GET /api/localsend/v2/download).
            Exit codes: 0 the share ended (Ctrl-C, or --once after every file was fetched whole), 1 the paths \
            cannot be shared or the port cannot be listened on.
            """
    )

    @Argument(help: "Files and folders to share.", completion: .file())
    var paths: [String]

    @Option(help: "The PIN browsers must give (printable ASCII, no spaces; default: 6 random digits).")
    var pin: String?

    @Flag(help: "End after every file was fetched whole once.")
    var once = false

    @Option(help: "TCP port (default: LocalSend's 53317, or any free port when it is taken).")
    var port: Int?

    @Option(help: "Name shown on the page (default: user@host-xxxx, as `p2p chat` names this host).")
    var name: String?

    @Flag(help: "One JSON object per event per line (no QR code).")
    var json = false

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give the files or folders to share") }
        if let port, !(1...65535).contains(port) { throw ValidationError("--port must be 1-65535") }
    }

    func run() async throws {
        let files: [SharedFile]
        let sharePIN: SharePIN
        do {
            files = try SharedFile.collect(paths.map { URL(fileURLWithPath: $0) })
            sharePIN = try pin.map { try SharePIN($0) } ?? SharePIN.random()
        } catch {
            throw CLIError("\(error)", code: ExitStatus.failure)
        }
        let alias = name ?? Identity.defaultDisplayName(for: (try? Identity.loadOrCreate())?.peerID)
        let server = ShareServer(files: files, pin: sharePIN, once: once, alias: alias)
        let listening: Int
        do {
            listening = try await server.start(port: port ?? LocalSendDeviceInfo.defaultPort, fallsBack: port == nil)
        } catch {
            throw CLIError("cannot share: \(error)\(port != nil ? "; try another --port, or none" : "")", code: ExitStatus.failure)
        }
        let view = ShareView(json: json)
        view.sharing(files: files, pin: sharePIN, port: listening, urls: ShareServer.urls(port: listening), pinWasGiven: pin != nil)
        // The driver's loop: the server's events are shown as they come; Ctrl-C stops the server, --once's
        // `.over` finishes it (its last events are let through), and either ends the share with 0.
        let driver = CommandDriver<ShareServer.Event>()
        driver.pump(server.events) { $0 }
        driver.readInterrupts()
        _ = await driver.run { input in
            switch input {
            case .event(let event):
                view.show(event)
                guard case .over = event else { return nil }
                await server.finish()
                view.done(files: files)
                return .success
            case .interrupt:
                await server.stop()
                return .success
            case .keys, .line, .endOfInput, .question, .withdrawn:
                return nil
            }
        }
        // What the server reported before it stopped is still shown; a second Ctrl-C changes nothing.
        await driver.drain(closing: {}, leftover: { input in
            if case .event(let event) = input { view.show(event) }
        })
    }
}

/// What `p2p share` prints: human lines with QR codes, or JSON events.
struct ShareView {
    let json: Bool

    func sharing(files: [SharedFile], pin: SharePIN, port: Int, urls: [(url: String, interface: String)], pinWasGiven: Bool) {
        if json { return Output.json(ShareServer.sharingEvent(files: files, pin: pin, port: port, urls: urls.map(\.url))) }
        Output.line("\(ShareServer.sharing(files)). PIN: \(Terminal.paint(pin.value, .bold))\(pinWasGiven ? "" : " (random; --pin chooses one)")")
        Self.showURLs(urls)
        Output.line("Open a URL on a phone or computer on this network (scan the code) and type the PIN. Ctrl-C ends the share.")
    }

    /// Each URL with its interface and a QR code for a phone's camera.
    static func showURLs(_ urls: [(url: String, interface: String)]) {
        for (url, interface) in urls {
            Output.line("")
            Output.line("  \(Terminal.paint(url, .cyan))  (\(interface))")
            if let code = try? QRCode(encoding: url) {
                for line in QRCodeDrawing(code: code, colored: Terminal.useColor).lines { Output.line("  " + line) }
            }
        }
        Output.line("")
    }

    /// One of the server's events: its JSON, or its line (the library's), coloured by how much it matters.
    func show(_ event: ShareServer.Event) {
        if json {
            if let object = event.json { Output.json(object) }
            return
        }
        guard let (text, severity) = event.line else { return }
        switch severity {
        case .info: Output.line(text)
        case .warning: Output.line(Terminal.paint(text, .yellow))
        case .refusal: Output.line(Terminal.paint(text, .red))
        }
    }

    func done(files: [SharedFile]) {
        json ? Output.json(ShareServer.doneEvent(files: files)) : Output.line(Terminal.paint(ShareServer.doneLine, .green))
    }
}
