import ArgumentParser
import Foundation
import NIOCore
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

    func run() async throws {
        var failed = false
        func verdict(_ ok: Bool?, _ check: String, _ detail: String) {
            let mark = ok == true ? Terminal.paint("ok  ", .green) : ok == false ? Terminal.paint("FAIL", .red) : Terminal.paint("??  ", .yellow)
            if ok == false { failed = true }
            Output.line("\(mark) \(check): \(detail)")
        }

        // 1. The daemon, and everything it shows meanwhile.
        let driver = CommandDriver<PeersBrowseModel.Event>()
        let feed = driver.feed
        let browser = ServiceBrowser { feed.send(.browse($0)) }
        do {
            try browser.start()
            verdict(true, "mDNS daemon", "answers (DNS-SD browse started)")
        } catch {
            verdict(false, "mDNS daemon", "\(error): start it (`sudo systemctl start avahi-daemon`, or scripts/setup.sh); "
                + "meanwhile peers can still be reached with --connect HOST:PORT")
        }

        // 2. Interfaces.
        let interfaces = Self.interfaces()
        if interfaces.isEmpty {
            verdict(false, "interfaces", "no network interface is up besides loopback: connect to a network")
        } else {
            verdict(true, "interfaces", interfaces.map { "\($0.name) \($0.addresses.joined(separator: " "))" }.joined(separator: "; "))
        }

        // 3. Our own announcement, from a session of its own; 4. others, from the browse.
        let session = Session(sessionID: "p2p-doctor-\(UInt32.random(in: 0...UInt32.max))", displayName: "p2p-doctor-\(getpid())",
                              mode: .peer, identity: .ephemeral())
        try? await session.start()
        try? session.setAvailable(true)
        let ownID = session.peerID
        var others: [String: DiscoveredService] = [:]
        driver.timers.after(.seconds(timeout), .browseOver)
        _ = await driver.run { input in
            switch input {
            case .event(.browse(.found(let service))) where service.peerID != ownID: others[service.name] = service
            case .event(.browseOver): return .success
            default: break
            }
            return nil
        }
        browser.stop()
        await driver.drain(closing: {})
        if session.discoverySeesItself {
            verdict(true, "own announcement", "this machine's test announcement came back: the daemon and this host work")
        } else {
            verdict(false, "own announcement", "this machine's test announcement did not come back within \(PeerTarget.duration(timeout)): "
                + "the daemon may not use this interface (avahi's allow-interfaces), a firewall on this machine drops mDNS "
                + "(UDP port 5353), or the daemon is overloaded")
        }
        await session.close()
        // Announcements from this machine say nothing about the network: only other hosts' do.
        let local = Set(interfaces.flatMap(\.addresses).compactMap { IPAddress($0) })
        let remote = others.values.filter { !$0.addresses.contains(where: local.contains) }
        if remote.isEmpty {
            // Silence is not a failure by itself (nobody may run p2p); a peer asked for is checked below.
            verdict(nil, "other peers", "none answered within \(PeerTarget.duration(timeout)); "
                + PeerTarget.causes(counterpart: nil, evidence: .none)
                + ". " + PeerTarget.workaround(counterpart: "p2p receive"))
        } else {
            let names = remote.sorted { $0.name < $1.name }.map { "\(Terminal.sanitize($0.name)) (\($0.addresses.map(\.description).joined(separator: ", ")))" }
            verdict(true, "other peers", "\(remote.count) answered from other machines: \(names.joined(separator: "; "))")
        }

        // 5. A peer's address and port.
        var endpoints: [Endpoint] = []
        var who = address ?? ""
        /// The --to peer did not answer by mDNS; its last address is checked instead.
        var silentByMDNS = false
        if let address, let endpoint = Endpoint(address) { endpoints = [endpoint] }
        if let to {
            let candidates = others.values.compactMap { service in
                service.peerID.map { PeerInfo(id: $0, displayName: service.name, sessionID: service.sessionID ?? "",
                                              host: service.host, port: Int(service.port), addresses: service.addresses) }
            }
            switch PeerMatcher(to).match(in: candidates) {
            case .one(let peer):
                who = peer.displayName.description
                endpoints = peer.addresses.map { Endpoint(address: $0, port: peer.port ?? SessionConfiguration.standardPort) }
            case .none:
                let known = (try? TrustStore.standard()).flatMap { try? PeerLookup(to, pins: $0.all).pinnedPeer() }
                if let known, !known.lastEndpoints.isEmpty {
                    who = known.name
                    endpoints = known.lastEndpoints
                    silentByMDNS = true
                    Output.line(Terminal.paint("     \(Terminal.sanitize(known.name)) did not answer; checking where it was last reached", .dim))
                } else {
                    verdict(false, "peer \(Terminal.sanitize(to))", "not among the peers that answered, and not a pinned peer with a known address")
                }
            case .ambiguous(let peers):
                verdict(false, "peer \(Terminal.sanitize(to))", "\(peers.count) peers fit; name one by its fingerprint")
            }
        }
        if !endpoints.isEmpty {
            switch await Reachability.probe(endpoints) {
            case .success(let reached) where silentByMDNS:
                // Reached, but not found: `--to` works here (pinned) and nowhere else.
                verdict(false, "peer \(Terminal.sanitize(who))", "did not answer by mDNS, though \(reached), where it was last reached, "
                    + "takes a connection: \(PeerTarget.causes(counterpart: nil, evidence: .peerReachable)). "
                    + "This machine still reaches it by name (its key is pinned here); others cannot find it")
            case .success(let reached):
                verdict(true, "peer \(Terminal.sanitize(who))", "\(reached) takes a connection")
            case .failure(let error):
                verdict(false, "peer \(Terminal.sanitize(who))", Terminal.sanitize(error.description))
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// Interfaces that are up and running, besides loopback, with their addresses.
    static func interfaces() -> [(name: String, addresses: [String])] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var found: [(name: String, addresses: [String])] = []
        var next = first
        while let entry = next?.pointee {
            defer { next = entry.ifa_next }
            let flags = Int32(bitPattern: entry.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_RUNNING) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                  let raw = entry.ifa_addr, [AF_INET, AF_INET6].contains(Int32(raw.pointee.sa_family)) else { continue }
            let length = socklen_t(Int32(raw.pointee.sa_family) == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(raw, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let name = String(cString: entry.ifa_name)
            let address = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let index = found.firstIndex(where: { $0.name == name }) { found[index].addresses.append(address) } else { found.append((name, [address])) }
        }
        return found
    }
}
