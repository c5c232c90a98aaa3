import ArgumentParser
import Foundation
import P2P

/// `p2p peers [list]`: lists p2p peers on the network, of every session unless `--session-id` narrows it.
struct PeersListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List p2p peers on the local network (the default).",
        discussion: """
            Examples:
              p2p peers list                    (the same as p2p peers)
              p2p peers --session-id cards      only the peers of one session
              p2p peers --localsend             LocalSend devices too

            Browses DNS-SD for the given time and prints each peer as it is found: name, fingerprint, peer ID, \
            session, host, port, addresses and what it advertises with --info. Any of name, the start of the \
            fingerprint or the start of the ID names the peer for --to. With --json, one object per line: \
            {"event":"peer-found","name":…,"id":…,"fingerprint":…,"session":…,"host":…,"port":…,"addresses":[…],"info":{…}} \
            and {"event":"peer-lost","name":…}. Addresses are IPv4 and IPv6 (a link-local one with its interface, \
            fe80::1%eth0); a peer seen on several interfaces is one peer, and it is printed again (text: "also at", \
            JSON: peer-found with every address so far) when more of its addresses answer. Then the pinned peers \
            that did not show, with where they were last reached ({"event":"peer-known",…,"addresses":[…],"last-seen":…}): \
            --to dials them there when multicast DNS does not get through. Last, the addresses added by hand \
            (`p2p peers add`; JSON: {"event":"address-added","address":…,"added":…}). Ctrl-C stops early (exit 130).
            """
    )

    @Option(help: "Seconds to browse.")
    var timeout: Double = 3

    @Option(name: .customLong("session-id"), help: "Only peers of this session.")
    var sessionID: String?

    @Flag(help: "One JSON object per line.")
    var json = false

    @Flag(name: .customLong("localsend"), help: "Also list LocalSend devices (multicast 224.0.0.167:53317) heard during the browse. Also P2P_LOCALSEND=on.")
    var localSendFlag = false

    @Option(name: .customLong("interface"), help: ArgumentHelp("With --localsend: listen and announce on this interface only; repeatable.", valueName: "iface"))
    var interfaces: [String] = []

    @Option(help: "With --localsend: the name LocalSend devices see while this command runs.")
    var name: String?

    /// What the browse's loop takes besides Ctrl-C (130: what was found is printed already).
    private enum Event: Sendable {
        case browse(ServiceBrowser.Event)
        /// The browse's time (`--timeout`) is up: the known peers are listed next.
        case browseOver
    }

    func run() async throws {
        let localSend = try await startLocalSend()
        let driver = CommandDriver<Event>()
        let feed = driver.feed
        let browser = ServiceBrowser { feed.send(.browse($0)) }
        do {
            try browser.start()
        } catch {
            report(error: error)
            throw ExitStatus.noDaemon
        }
        driver.timers.after(.seconds(timeout), .browseOver)
        driver.readInterrupts()
        if !json { Output.error(Terminal.paint("Browsing \(ServiceAnnouncement.serviceType) for \(timeout) s…", .dim)) }
        // What is listed is the library's rule: one entry per peer, again only with new addresses.
        var listing = PeerListing(sessionID: sessionID)
        let status = await driver.run { input in
            switch input {
            case .event(.browse(.found(let service))):
                switch listing.found(service) {
                case .new(let service): show(PeerListing.json(service), PeerListing.line(service))
                case .moreAddresses(let service, let added): show(PeerListing.json(service), PeerListing.line(service, adding: added))
                case .lost, nil: break
                }
            case .event(.browse(.lost(let name))) where listing.lost(name) != nil:
                if json { Output.json(["event": "peer-lost", "name": name]) } else { Output.line("lost  \(Terminal.sanitize(name))") }
            case .event(.browse(.failed(let error))): report(error: error)
            case .event(.browse(.daemonLost)): report(error: .daemonLost)
            case .event(.browseOver): return .success
            case .interrupt: return ExitStatus.interrupted
            case .question(let asked): asked.answer.resume(returning: false)  // nobody asks here: no session
            default: break
            }
            return nil
        }
        browser.stop()
        await driver.drain(closing: {})
        if let status, status != .success { throw status }
        // Pinned peers and added addresses belong to no session: listed only when browsing them all.
        let store = sessionID == nil ? try? TrustStore.standard() : nil
        let known = listing.knownNotSeen(pins: store?.all ?? [])
        for peer in known { show(PeerListing.json(known: peer), PeerListing.line(known: peer)) }
        let added = store?.addedAddresses ?? []
        for entry in added {
            if json { Output.json(PeerListing.json(added: entry)) } else { Output.line(PeerListing.line(added: entry)) }
        }
        let devices = localSend?.devices.all ?? []
        for device in devices { show(device.listingJSON, device.listingLine) }
        await localSend?.stop()
        if !json && listing.listedCount == 0 && known.isEmpty && added.isEmpty && devices.isEmpty { Output.error("No peers found.") }
    }

    /// An entry as its JSON event, or as its line with the name in bold.
    private func show(_ event: [String: Any], _ line: PeerListing.Line) {
        if json { Output.json(event) } else { Output.line("\(Terminal.paint(line.name, .bold))  \(line.rest)") }
    }

    /// --localsend: LocalSend discovery for the browse's time.
    private func startLocalSend() async throws -> LocalSendBrowser? {
        let on = localSendFlag || ["on", "1", "yes", "true"].contains(ProcessInfo.processInfo.environment["P2P_LOCALSEND"]?.lowercased() ?? "")
        guard on else { return nil }
        do {
            let identity = try Identity.loadOrCreate()
            let browser = try LocalSendBrowser(identity: identity, alias: name ?? identity.defaultDisplayName,
                                               interfaces: interfaces.isEmpty ? nil : interfaces)
            try await browser.start()
            return browser
        } catch {
            throw CLIError("LocalSend: \(error)", code: ExitStatus.failure)
        }
    }

    private func report(error: DiscoveryError) {
        if json {
            Output.json(["event": "error", "code": "discovery", "message": error.description])
        } else {
            Output.error("p2p: \(error)")
        }
    }
}
