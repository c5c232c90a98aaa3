import Foundation
import Testing
@testable import P2P

/// `p2p doctor`'s decisions, without a daemon: which answers count, which peer a name picks, each verdict.
struct DiscoveryCheckupTests {
    let bob = PeerID(bytes: Array(repeating: 2, count: 16))
    let carol = PeerID(bytes: Array(repeating: 3, count: 16))

    func service(_ name: String, id: PeerID, addresses: [String]) -> DiscoveredService {
        DiscoveredService(name: name, txt: ServiceAnnouncement.txtRecord(peerID: id, sessionID: "chat"),
                          host: "\(name).local.", port: 24242, addresses: addresses.compactMap { IPAddress($0) }, interfaceIndex: 1)
    }

    @Test func answersFromThisHostSayNothingAboutTheNetwork() {
        let local = [LocalInterface(name: "eth0", addresses: [IPAddress("10.0.0.1")!])]
        let own = service("me-too", id: carol, addresses: ["10.0.0.1"])
        let other = service("bob", id: bob, addresses: ["10.0.0.2"])
        #expect(DiscoveryCheckup.otherHosts([own, other], local: local) == [other])
    }

    @Test func aNamePicksTheAnsweringPeerElseAPinnedOneWhereLastReached() {
        let answered = [service("bob", id: bob, addresses: ["10.0.0.2"])]
        #expect(DiscoveryCheckup.pick("BOB", among: answered, pins: [])
            == .endpoints(name: "bob", [Endpoint(address: IPAddress("10.0.0.2")!, port: 24242)], lastReached: false))
        let carolPin = KnownPeer(id: carol, name: "carol", method: .paired, pinnedAt: Date(), lastAddresses: ["10.0.0.3:24242"])
        #expect(DiscoveryCheckup.pick("carol", among: answered, pins: [carolPin])
            == .endpoints(name: "carol", carolPin.lastEndpoints, lastReached: true))
        #expect(DiscoveryCheckup.pick("dave", among: answered, pins: [carolPin]) == .notFound)
        let twins = answered + [service("bob", id: carol, addresses: ["10.0.0.3"])]
        #expect(DiscoveryCheckup.pick("bob", among: twins, pins: []) == .ambiguous(count: 2))
    }

    @Test func verdicts() {
        #expect(DiscoveryCheckup.Finding.daemonAnswers.verdict == .passed)
        #expect(DiscoveryCheckup.Finding.daemonFails(.daemonNotRunning(code: -1)).verdict == .failed)
        #expect(DiscoveryCheckup.Finding.interfaces([]).verdict == .failed)
        #expect(DiscoveryCheckup.Finding.ownAnnouncement(cameBack: false, waited: .seconds(3)).verdict == .failed)
        #expect(DiscoveryCheckup.Finding.otherPeers([], waited: .seconds(3)).verdict == .unknown, "nobody may run p2p")
        #expect(DiscoveryCheckup.Finding.checkingLastAddress(name: "bob").verdict == nil)
        #expect(DiscoveryCheckup.Finding.peerReachable(name: "bob", reached: "10.0.0.2:1", silentByMDNS: false).verdict == .passed)
        #expect(DiscoveryCheckup.Finding.peerReachable(name: "bob", reached: "10.0.0.2:1", silentByMDNS: true).verdict == .failed,
                "reachable but silent: its announcements are lost")
    }
}
