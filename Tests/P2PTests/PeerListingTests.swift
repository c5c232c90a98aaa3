import Foundation
import Testing
@testable import P2P

/// What a listing of the peers on the network shows (`p2p peers`), fed announcements without a daemon.
struct PeerListingTests {
    let bob = PeerID(bytes: Array(repeating: 2, count: 16))
    let carol = PeerID(bytes: Array(repeating: 3, count: 16))

    func service(_ name: String, id: PeerID? = nil, session: String = "chat", port: UInt16 = 4000, addresses: [String]) -> DiscoveredService {
        DiscoveredService(name: name, txt: ServiceAnnouncement.txtRecord(peerID: id ?? bob, sessionID: session),
                          host: "\(name).local.", port: port, addresses: addresses.compactMap { IPAddress($0) }, interfaceIndex: 1)
    }

    @Test func aPeerOnTwoInterfacesIsOneEntryListedAgainOnlyWithNewAddresses() {
        var listing = PeerListing(sessionID: nil)
        let first = service("bob", addresses: ["10.0.0.2"])
        #expect(listing.found(first) == .new(first))
        #expect(listing.found(first) == nil, "nothing new")
        guard case .moreAddresses(let merged, let added) = listing.found(service("bob", addresses: ["192.168.1.7", "10.0.0.2"])) else {
            Issue.record("another interface's address is news")
            return
        }
        #expect(added == [IPAddress("192.168.1.7")!])
        #expect(Set(merged.addresses) == Set(["10.0.0.2", "192.168.1.7"].compactMap { IPAddress($0) }))
        #expect(listing.listedCount == 1)
    }

    @Test func aNewPortIsANewEntry() {
        var listing = PeerListing(sessionID: nil)
        _ = listing.found(service("bob", addresses: ["10.0.0.2"]))
        let moved = service("bob", port: 4001, addresses: ["10.0.0.2"])
        #expect(listing.found(moved) == .new(moved), "restarted on another port")
        #expect(listing.listedCount == 2)
    }

    @Test func onlyTheAskedSessionAndOnlyListedLosses() {
        var listing = PeerListing(sessionID: "game")
        #expect(listing.found(service("bob", session: "chat", addresses: ["10.0.0.2"])) == nil)
        #expect(listing.lost("bob") == nil, "never listed")
        _ = listing.found(service("carol", id: carol, session: "game", addresses: ["10.0.0.3"]))
        #expect(listing.lost("carol") == .lost(name: "carol"))
        #expect(listing.seen.isEmpty)
    }

    @Test func pinnedPeersNotShownWithALastAddressAreListedByName() {
        var listing = PeerListing(sessionID: nil)
        _ = listing.found(service("bob", addresses: ["10.0.0.2"]))
        let now = Date()
        let pins = [
            KnownPeer(id: bob, name: "bob", method: .firstUse, pinnedAt: now, lastAddresses: ["10.0.0.2:24242"]),
            KnownPeer(id: carol, name: "zed", method: .paired, pinnedAt: now, lastAddresses: ["10.0.0.3:24242"]),
            KnownPeer(id: PeerID(bytes: Array(repeating: 4, count: 16)), name: "amy", method: .firstUse, pinnedAt: now, lastAddresses: ["10.0.0.4:1"]),
            KnownPeer(id: PeerID(bytes: Array(repeating: 5, count: 16)), name: "nowhere", method: .firstUse, pinnedAt: now),
        ]
        #expect(listing.knownNotSeen(pins: pins).map(\.name) == ["amy", "zed"], "bob is shown; nowhere has no address")
        _ = listing.lost("bob")
        #expect(listing.knownNotSeen(pins: pins).map(\.name) == ["amy", "bob", "zed"], "bob's announcement went")
    }
}
