import ArgumentParser
import P2P

/// What `p2p peers` does while it browses: the library's `PeerListing` says which announcements to
/// list and which losses to report; this model says when the browse is over (its time is up: the known peers are listed
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

    /// What is listed: the library's rules (one entry per peer, again only with new addresses).
    private(set) var listing: PeerListing
    /// The peers listed, by announced name.
    var seen: [String: DiscoveredService] { listing.seen }
    /// How many peers were listed.
    var found: Int { listing.listedCount }

    init(sessionID: String?) { listing = PeerListing(sessionID: sessionID) }

    mutating func handle(_ input: DriverInput<Event>) -> [Effect] {
        switch input {
        case .event(.browse(.found(let service))):
            switch listing.found(service) {
            case .new(let service): return [.list(service)]
            case .moreAddresses(let service, let added): return [.listAgain(service, added: added)]
            case .lost, nil: return []
            }
        case .event(.browse(.lost(let name))):
            return listing.lost(name).map { _ in [.lost(name: name)] } ?? []
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
