@testable import P2P
import Testing
@testable import P2PCLI

/// What `p2p peers` lists while it browses, fed the browser's events without a terminal or a daemon.
@Suite struct PeersBrowseModelTests {
    let bob = PeerID(bytes: Array(repeating: 2, count: 16))

    func service(_ name: String, session: String = "chat", port: UInt16 = 4000, addresses: [String]) -> DiscoveredService {
        DiscoveredService(name: name, txt: ServiceAnnouncement.txtRecord(peerID: bob, sessionID: session),
                          host: "bob.local.", port: port, addresses: addresses.compactMap { IPAddress($0) }, interfaceIndex: 1)
    }

    func listed(_ effects: [PeersBrowseModel.Effect]) -> [String] {
        effects.map { effect in
            switch effect {
            case .list(let service): "list \(service.name) \(service.addresses.map(\.description).joined(separator: ","))"
            case .listAgain(let service, let added): "again \(service.name) +\(added.map(\.description).joined(separator: ","))"
            case .lost(let name): "lost \(name)"
            case .error(let error): "error \(error)"
            case .finish: "finish"
            case .exit(let status): "exit \(status.rawValue)"
            }
        }
    }

    @Test func aPeerSeenOnTwoInterfacesIsListedOnceAndAgainOnlyWithAddressesNotListedYet() {
        var model = PeersBrowseModel(sessionID: nil)
        #expect(listed(model.handle(.event(.browse(.found(service("bob", addresses: ["10.0.0.2"])))))) == ["list bob 10.0.0.2"])
        #expect(listed(model.handle(.event(.browse(.found(service("bob", addresses: ["10.0.0.2"])))))).isEmpty, "the same peer again")
        #expect(listed(model.handle(.event(.browse(.found(service("bob", addresses: ["10.0.0.2", "192.168.1.7"])))))) == ["again bob +192.168.1.7"])
        #expect(model.found == 1)
        #expect(model.seen["bob"]?.addresses.count == 2)
    }

    @Test func onlyTheAskedSessionsPeersAreListedAndOnlyListedPeersAreReportedLost() {
        var model = PeersBrowseModel(sessionID: "game")
        #expect(listed(model.handle(.event(.browse(.found(service("bob", session: "chat", addresses: ["10.0.0.2"])))))).isEmpty)
        #expect(listed(model.handle(.event(.browse(.lost(name: "bob"))))).isEmpty, "never listed")
        #expect(listed(model.handle(.event(.browse(.found(service("carol", session: "game", addresses: ["10.0.0.3"])))))) == ["list carol 10.0.0.3"])
        #expect(listed(model.handle(.event(.browse(.lost(name: "carol"))))) == ["lost carol"])
        #expect(model.seen.isEmpty && model.found == 1)
    }

    @Test func theBrowseEndsWhenItsTimeIsUpOrWith130OnCtrlC() {
        var model = PeersBrowseModel(sessionID: nil)
        #expect(listed(model.handle(.keys([.character("q")]))).isEmpty, "keys are not read")
        #expect(listed(model.handle(.event(.browse(.daemonLost)))) == ["error \(DiscoveryError.daemonLost)"])
        #expect(listed(model.handle(.event(.browseOver))) == ["finish"])
        #expect(listed(model.handle(.interrupt)) == ["exit 130"])
    }
}
