/// What a listing of the peers on the network shows (`p2p peers`) as announcements come and go: one
/// entry per peer, whatever interfaces and addresses it is seen on (listed again only with addresses
/// not listed yet), its loss once its announcement goes, only the peers of one session when asked; and,
/// when the browse is over, the pinned peers it did not show, with where they were last reached (a
/// search by name dials them there). Pure: fed the browser's events, it says what changed.
public struct PeerListing: Sendable {
    /// What an announcement changed in the listing.
    public enum Change: Sendable, Equatable {
        /// A peer not listed yet.
        case new(DiscoveredService)
        /// A listed peer showed addresses not listed yet (`service` has them all, `added` the new ones).
        case moreAddresses(DiscoveredService, added: [IPAddress])
        /// A listed peer's announcement went away.
        case lost(name: String)
    }

    /// Only peers of this session (nil: every session).
    public let sessionID: String?
    /// The peers listed and still announced, by announced name.
    public private(set) var seen: [String: DiscoveredService] = [:]
    /// How many peers were listed.
    public private(set) var listedCount = 0

    /// A listing of the peers of `sessionID` (nil: of every session).
    public init(sessionID: String?) { self.sessionID = sessionID }

    /// What a (re)solved announcement changes: nil when nothing (another session's, or nothing new).
    public mutating func found(_ service: DiscoveredService) -> Change? {
        guard sessionID == nil || service.sessionID == sessionID else { return nil }
        guard var known = seen[service.name], known.port == service.port else {
            seen[service.name] = service
            listedCount += 1
            return .new(service)
        }
        let added = service.addresses.filter { !known.addresses.contains($0) }
        guard !added.isEmpty else { return nil }
        known.addresses = IPAddress.dialOrder(known.addresses + added)
        seen[service.name] = known
        return .moreAddresses(known, added: added)
    }

    /// A lost announcement: reported only for a peer that was listed.
    public mutating func lost(_ name: String) -> Change? {
        seen.removeValue(forKey: name) != nil ? .lost(name: name) : nil
    }

    /// The pinned peers (of `pins`) this browse did not show and that have a last address, by name.
    public func knownNotSeen(pins: [KnownPeer]) -> [KnownPeer] {
        let shown = Set(seen.values.compactMap(\.peerID))
        return pins.filter { !shown.contains($0.id) && !($0.lastAddresses ?? []).isEmpty }.sorted { $0.name < $1.name }
    }
}
