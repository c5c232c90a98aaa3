import ArgumentParser
import P2P

/// What `p2p peers` decides while it browses: which announcements to list (one entry per peer,
/// whatever interfaces and addresses it was seen on; listed again only with addresses not listed yet),
/// which losses to report, and when the browse is over (its time is up: the known peers are listed
/// next) or cut short (Ctrl-C: 130, nothing more is listed).
struct PeersBrowseModel: DrivenModel {
    enum Event: Sendable {
        case browse(ServiceBrowser.Event)
        /// The browse's time (`--timeout`) is up.
        case browseOver
    }

    enum Effect: Sendable {
        /// A peer not listed yet.
        case list(DiscoveredService)
        /// A listed peer showed addresses not listed yet (`service` has them all, `added` the new ones).
        case listAgain(DiscoveredService, added: [IPAddress])
        /// A listed peer's announcement went away.
        case lost(name: String)
        case error(DiscoveryError)
        /// The browse is over: list what else is known.
        case finish
        case exit(ExitCode)
    }

    /// `--session-id`: only peers of this session.
    let sessionID: String?
    /// The peers listed, by announced name.
    private(set) var seen: [String: DiscoveredService] = [:]
    /// How many peers were listed.
    private(set) var found = 0

    init(sessionID: String?) { self.sessionID = sessionID }

    mutating func handle(_ input: DriverInput<Event>) -> [Effect] {
        switch input {
        case .event(.browse(.found(let service))):
            guard sessionID == nil || service.sessionID == sessionID else { return [] }
            guard var known = seen[service.name], known.port == service.port else {
                seen[service.name] = service
                found += 1
                return [.list(service)]
            }
            let added = service.addresses.filter { !known.addresses.contains($0) }
            guard !added.isEmpty else { return [] }
            known.addresses = IPAddress.dialOrder(known.addresses + added)
            seen[service.name] = known
            return [.listAgain(known, added: added)]
        case .event(.browse(.lost(let name))):
            return seen.removeValue(forKey: name) != nil ? [.lost(name: name)] : []
        case .event(.browse(.failed(let error))):
            return [.error(error)]
        case .event(.browse(.daemonLost)):
            return [.error(.daemonLost)]
        case .event(.browse(.restored)), .keys, .line, .endOfInput, .withdrawn:
            return []
        case .question(let asked):
            asked.answer.resume(returning: false)  // nobody asks here
            return []
        case .event(.browseOver):
            return [.finish]
        case .interrupt:
            // What was found is printed already; the exit code says it was cut short.
            return [.exit(ExitStatus.interrupted)]
        }
    }
}
