import ArgumentParser
import Foundation
import P2P

/// The options that make a command a LocalSend peer too (`p2p receive --localsend`).
struct LocalSendOptions: ParsableArguments {
    @Flag(name: .customLong("localsend"), help: ArgumentHelp(
        "Also receive from LocalSend apps (phones, desktops): announce on 224.0.0.167:53317 and take uploads over HTTPS on port 53317 (any free port when taken). Also P2P_LOCALSEND=on.",
        discussion: "Off by default: it opens an HTTPS port and multicasts on every interface in use (--interface limits both)."))
    var enabled = false

    @Option(name: .customLong("interface"), help: ArgumentHelp("With --localsend: announce and listen on this interface only; repeatable.", valueName: "iface"))
    var interfaces: [String] = []

    @Option(help: ArgumentHelp("With --localsend: LocalSend senders must give this PIN (3 wrong tries per address, then a minute's lockout). Also P2P_LOCALSEND_PIN (argv is visible to other users).",
                               valueName: "pin"))
    var pin: String?

    @Flag(name: .customLong("web"), help: ArgumentHelp(
        "Also serve an upload page for any browser (plain HTTP on port 53318, any free port when taken; the URL is printed with a QR code): its files get the same question and rules as any offer.",
        discussion: "It needs a PIN: --pin, else 6 random digits, printed (with --localsend, LocalSend apps are asked for it too)."))
    var web = false

    /// Whether LocalSend is on: the flag, or P2P_LOCALSEND=on (1, yes, true) in the environment.
    var isOn: Bool {
        enabled || Self.environmentTurnsOn
    }

    /// P2P_LOCALSEND=on (1, yes, true): LocalSend without the flag, for `send` and `receive` alike.
    static var environmentTurnsOn: Bool {
        ["on", "1", "yes", "true"].contains(ProcessInfo.processInfo.environment["P2P_LOCALSEND"]?.lowercased() ?? "")
    }

    /// The PIN: --pin, else P2P_LOCALSEND_PIN.
    var effectivePin: String? { pin ?? ProcessInfo.processInfo.environment["P2P_LOCALSEND_PIN"].flatMap { $0.isEmpty ? nil : $0 } }

    func validate() throws {
        if !interfaces.isEmpty && !isOn { throw ValidationError("--interface is for LocalSend: add --localsend") }
        if pin != nil && !isOn && !web { throw ValidationError("--pin is for LocalSend senders and the --web page: add --localsend or --web (p2p peers are authenticated by their keys)") }
        if let pin, pin.isEmpty || pin.utf8.count > 64 { throw ValidationError("--pin: 1 to 64 bytes") }
    }

    /// The LocalSend peer (`--localsend`) and the upload page (`--web`) receiving into `transfers` as `alias`.
    func reception(transfers: FileTransfers, alias: String) throws -> LocalSendReception {
        do {
            return try LocalSendReception(transfers: transfers, identity: try Identity.loadOrCreate(), alias: alias, pin: effectivePin,
                                          interfaces: interfaces.isEmpty ? nil : interfaces, announces: isOn, servesPage: web)
        } catch {
            throw CLIError(error is LocalSendReception.Failure ? "\(error)" : "LocalSend: \(error)", code: ExitStatus.failure)
        }
    }
}
