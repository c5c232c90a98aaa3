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

    func run() async throws {
        let localSend = try await startLocalSend()
        let driver = CommandDriver<PeersBrowseModel.Event>()
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
        let (status, model) = await driver.run(PeersBrowseModel(sessionID: sessionID)) { effect in
            switch effect {
            case .list(let service): print(service)
            case .listAgain(let service, let added): print(service, adding: added)
            case .lost(let name):
                if json {
                    Output.json(["event": "peer-lost", "name": name])
                } else {
                    Output.line("lost  \(Terminal.sanitize(name))")
                }
            case .error(let error): report(error: error)
            case .finish: return .success
            case .exit(let status): return status
            }
            return nil
        }
        browser.stop()
        await driver.drain(closing: {})
        if let status, status != .success { throw status }
        // Pinned peers and added addresses belong to no session: listed only when browsing them all.
        let store = sessionID == nil ? try? TrustStore.standard() : nil
        let known = model.listing.knownNotSeen(pins: store?.all ?? [])
        known.forEach(print(known:))
        let added = store?.addedAddresses ?? []
        added.forEach(print(added:))
        let devices = localSend?.devices.all ?? []
        devices.forEach(print(device:))
        await localSend?.stop()
        if !json && model.found == 0 && known.isEmpty && added.isEmpty && devices.isEmpty { Output.error("No peers found.") }
    }

    private func print(known peer: KnownPeer) {
        let lastSeen = peer.lastSeen.map { $0.formatted(.iso8601) }
        if json {
            Output.json([
                "event": "peer-known", "name": peer.name, "id": peer.id.hex, "fingerprint": peer.id.fingerprint,
                "addresses": peer.lastAddresses ?? [], "last-seen": lastSeen ?? NSNull(),
            ])
        } else {
            Output.line("\(Terminal.paint(Terminal.sanitize(peer.name), .bold))  \(peer.id.fingerprint)  known, not announced now; "
                + "last reached \(lastSeen ?? "?") at \(Terminal.sanitize((peer.lastAddresses ?? []).joined(separator: ",")))")
        }
    }

    private func print(added entry: AddedAddress) {
        let when = entry.added.formatted(.iso8601)
        if json {
            Output.json(["event": "address-added", "address": entry.address, "added": when])
        } else {
            Output.line("\(entry.address)  added by hand \(when); tried for --to NAME when multicast DNS does not show NAME")
        }
    }

    /// A peer's line (or JSON object); `adding` names the addresses that are new since it was printed.
    private func print(_ service: DiscoveredService, adding added: [IPAddress] = []) {
        let addresses = service.addresses.map(\.description)
        if json {
            Output.json([
                "event": "peer-found", "name": service.name, "id": service.peerID?.hex ?? NSNull(),
                "fingerprint": service.peerID?.fingerprint ?? NSNull(),
                "session": service.sessionID ?? NSNull(), "host": service.host, "port": Int(service.port),
                "addresses": addresses, "protocol": service.protocolVersion ?? NSNull(),
                "info": service.discoveryInfo,
            ])
        } else if !added.isEmpty {
            Output.line("\(Terminal.paint(Terminal.sanitize(service.name), .bold))  also at \(added.map(\.description).joined(separator: ","))")
        } else {
            // Announced, not yet proven: TLS checks this fingerprint when connecting.
            let id = service.peerID.map { "\($0.fingerprint)  id=\($0.hex)" } ?? "(no id)"
            let session = Terminal.sanitize(service.sessionID ?? "?")
            let info = service.discoveryInfo.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            Output.line("\(Terminal.paint(Terminal.sanitize(service.name), .bold))  \(id)  session=\(session)  "
                + "\(Terminal.sanitize(service.host)):\(service.port)  \(addresses.joined(separator: ","))"
                + (info.isEmpty ? "" : "  " + Terminal.sanitize(info)))
        }
    }

    /// --localsend: LocalSend discovery for the browse's time.
    private func startLocalSend() async throws -> LocalSendBrowser? {
        let on = localSendFlag || ["on", "1", "yes", "true"].contains(ProcessInfo.processInfo.environment["P2P_LOCALSEND"]?.lowercased() ?? "")
        guard on else { return nil }
        do {
            let identity = try Identity.loadOrCreate()
            let browser = try LocalSendBrowser(identity: identity, alias: name ?? NetworkOptions.defaultDisplayName(for: identity.peerID),
                                               interfaces: interfaces.isEmpty ? nil : interfaces)
            try await browser.start()
            return browser
        } catch {
            throw CLIError("LocalSend: \(error)", code: ExitStatus.failure)
        }
    }

    /// A LocalSend device's line: kind, alias, model, fingerprint, address:port, protocol and version.
    private func print(device entry: LocalSendDeviceList.Entry) {
        let info = entry.info
        if json {
            Output.json([
                "event": "peer-found", "kind": "localsend", "name": info.alias, "model": info.deviceModel ?? NSNull(),
                "deviceType": info.kind, "fingerprint": info.fingerprint, "address": "\(entry.address):\(info.effectivePort)",
                "protocol": info.usesHTTPS ? "https" : "http", "version": info.version,
            ])
        } else {
            Output.line("\(Terminal.paint(Terminal.sanitize(info.alias), .bold))  LocalSend \(Terminal.sanitize(info.version))  "
                + "\(Terminal.sanitize(info.deviceModel ?? "?")) \(Terminal.sanitize(info.kind))  \(Terminal.sanitize(info.fingerprint))  "
                + "\(entry.address):\(info.effectivePort) \(info.usesHTTPS ? "https" : "http")  (not verified by key)")
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
