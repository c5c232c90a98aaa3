import Testing

@testable import P2P

/// Discovery's own bookkeeping, without a daemon: a peer seen on several interfaces is one peer whose
/// addresses are in dial order, and a restart on a new port drops what other interfaces said.
@Suite struct PeerDiscoveryTests {
    let bob = Identity.ephemeral().peerID

    func service(port: UInt16 = 4000, addresses: [String], interface: UInt32) -> DiscoveredService {
        DiscoveredService(name: "bob", txt: ServiceAnnouncement.txtRecord(peerID: bob, sessionID: "chat"),
                          host: "bob.local.", port: port, addresses: addresses.map { IPAddress($0)! }, interfaceIndex: interface)
    }

    @Test func aPeerOnTwoLinksIsOnePeerWithBothLinksAddressesInDialOrder() throws {
        var peers = DiscoveredPeers()
        _ = peers.found(service(addresses: ["10.0.0.2"], interface: 2), id: bob)
        let merged = peers.found(service(addresses: ["192.168.1.2", "fe80::2%1"], interface: 1), id: bob)
        #expect(merged.addresses == ["fe80::2%1", "192.168.1.2", "10.0.0.2"].map { IPAddress($0)! },
                "IPv6 link-local first, then interfaces in index order within IPv4")
        #expect(peers.all.count == 1 && peers[bob] == merged)
    }

    @Test func aNewPortForgetsWhatOtherInterfacesSaid() {
        var peers = DiscoveredPeers()
        _ = peers.found(service(addresses: ["10.0.0.2"], interface: 2), id: bob)
        let restarted = peers.found(service(port: 4001, addresses: ["192.168.1.2"], interface: 1), id: bob)
        #expect(restarted.port == 4001 && restarted.addresses == [IPAddress("192.168.1.2")!])
    }

    @Test func aLostNameForgetsThePeerOnce() {
        var peers = DiscoveredPeers()
        _ = peers.found(service(addresses: ["10.0.0.2"], interface: 2), id: bob)
        #expect(peers.lost(name: "bob")?.peerID == bob)
        #expect(peers[bob] == nil && peers.lost(name: "bob") == nil)
    }
}
