import ArgumentParser
import Foundation
import P2P

/// `p2p doctor`: why peers do not find or reach each other, one check at a time, each with a verdict
/// and what to do: the mDNS daemon, this host's interfaces, our own announcement, other peers'
/// answers, and (given a peer) whether its address and port take a connection.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check why peers do not find or reach each other.",
        discussion: """
            Runs each check and prints a verdict for it: the mDNS daemon answers; the network interfaces \
            and addresses in use; this machine's own announcement comes back (the daemon and this host are \
            fine); other p2p peers answer (multicast gets through the network); and, given a peer \
            (HOST:PORT, or --to NAME as `p2p peers` shows it), whether its addresses take a TCP connection \
            (refused, no answer: a firewall, no route). A peer named with --to must also answer by mDNS. \
            Exit 0 when every check passed, 1 otherwise (a check failed, or the peer asked for was not found \
            or not reached).
            Examples: p2p doctor; p2p doctor --to bob; p2p doctor 192.168.1.20:24242
            """
    )

    @Argument(help: ArgumentHelp("A peer's address to check: HOST:PORT ([fe80::1%eth0]:24242 for link-local IPv6).", valueName: "host:port"))
    var address: String?

    @Option(help: "A peer to check, by name or the start of its fingerprint, among those that answer.")
    var to: String?

    @Option(help: "Seconds to listen for announcements.")
    var timeout: Double = 3

    func validate() throws {
        if let address, Endpoint(address) == nil { throw ValidationError(Endpoint.connectUsage(address)) }
        if address != nil && to != nil { throw ValidationError("give HOST:PORT or --to, not both") }
    }

    /// What the command's loop takes besides Ctrl-C: the library's findings as they come, then the end.
    private enum Event: Sendable {
        case finding(DiscoveryCheckup.Finding)
        /// Every check ran; whether all passed.
        case done(passed: Bool)
    }

    func run() async throws {
        let peer = address.flatMap(Endpoint.init).map(DiscoveryCheckup.Subject.address) ?? to.map(DiscoveryCheckup.Subject.named)
        let checkup = DiscoveryCheckup(peer: peer, timeout: .seconds(timeout), pins: (try? TrustStore.standard())?.all ?? [])
        let driver = CommandDriver<Event>()
        let feed = driver.feed
        driver.readInterrupts()
        let checks = Task {
            feed.send(.done(passed: await checkup.run { feed.send(.finding($0)) }))
        }
        let status = await driver.run { input in
            switch input {
            case .event(.finding(let finding)): show(finding)
            case .event(.done(let passed)): return passed ? .success : ExitCode(1)
            case .interrupt: return ExitStatus.interrupted
            default: break
            }
            return nil
        }
        checks.cancel()
        await driver.drain(closing: {})
        if let status, status != .success { throw status }
    }

    /// A finding as its line: the verdict, the check, and what it means or what to do (the library's words).
    private func show(_ finding: DiscoveryCheckup.Finding) {
        if let note = finding.note { return Output.line(Terminal.paint("     \(note)", .dim)) }
        guard let (check, detail) = finding.said else { return }
        let mark = switch finding.verdict {
        case .passed: Terminal.paint("ok  ", .green)
        case .failed: Terminal.paint("FAIL", .red)
        default: Terminal.paint("??  ", .yellow)
        }
        Output.line("\(mark) \(check): \(detail)")
    }
}
