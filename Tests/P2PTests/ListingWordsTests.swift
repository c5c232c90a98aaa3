import Foundation
import Testing
@testable import P2P

/// The lines and JSON events of a listing of peers (`p2p peers`) and of a checkup (`p2p doctor`), as
/// the library words them: peer text only sanitized, every field the README documents.
struct ListingWordsTests {
    let bob = PeerID(bytes: Array(repeating: 2, count: 16))

    func service(_ name: String, addresses: [String]) -> DiscoveredService {
        DiscoveredService(name: name, txt: ServiceAnnouncement.txtRecord(peerID: bob, sessionID: "chat"),
                          host: "bob.local.", port: 4000, addresses: addresses.compactMap { IPAddress($0) }, interfaceIndex: 1)
    }

    @Test func aPeersLineAndEventCarryWhatItAnnounced() {
        let found = service("bo\u{1B}[2Jb", addresses: ["10.0.0.2"])
        let line = PeerListing.line(found)
        #expect(line.name == "bo\u{FFFD}[2Jb")
        #expect(line.rest == "\(bob.fingerprint)  id=\(bob.hex)  session=chat  bob.local.:4000  10.0.0.2")
        #expect(PeerListing.line(found, adding: [IPAddress("192.168.1.7")!]).rest == "also at 192.168.1.7")
        let json = PeerListing.json(found)
        #expect(json["event"] as? String == "peer-found" && json["id"] as? String == bob.hex && json["session"] as? String == "chat")
        #expect(json["addresses"] as? [String] == ["10.0.0.2"] && json["port"] as? Int == 4000)
    }

    @Test func aPinnedPeerNotShownAndAnAddedAddressSayWhereToTry() {
        let known = KnownPeer(id: bob, name: "bob", method: .paired, pinnedAt: Date(), lastAddresses: ["10.0.0.2:24242"], lastSeen: nil)
        #expect(PeerListing.line(known: known) == ("bob", "\(bob.fingerprint)  known, not announced now; last reached ? at 10.0.0.2:24242"))
        #expect(PeerListing.json(known: known)["last-seen"] is NSNull && PeerListing.json(known: known)["event"] as? String == "peer-known")
        let added = AddedAddress(address: "10.0.0.9:24242", added: Date(timeIntervalSince1970: 0))
        #expect(PeerListing.line(added: added)
            == "10.0.0.9:24242  added by hand 1970-01-01T00:00:00Z; tried for --to NAME when multicast DNS does not show NAME")
        #expect(PeerListing.json(added: added)["added"] as? String == "1970-01-01T00:00:00Z")
    }

    @Test func aLocalSendDeviceSaysNothingTiesItToAKey() {
        let info = LocalSendDeviceInfo(alias: "Pixel\u{7}", deviceModel: "Pixel 7", deviceType: "mobile", fingerprint: "abc", port: 53317)
        let entry = LocalSendDeviceList.Entry(info: info, address: "10.0.0.4", lastSeen: .now, fingerprintSeen: false)
        #expect(entry.listingLine.name == "Pixel\u{FFFD}")
        #expect(entry.listingLine.rest == "LocalSend \(info.version)  Pixel 7 mobile  abc  10.0.0.4:53317 https  (not verified by key)")
        #expect(entry.listingJSON["kind"] as? String == "localsend" && entry.listingJSON["address"] as? String == "10.0.0.4:53317")
    }

    @Test func eachFindingOfTheCheckupSaysWhatToDo() {
        #expect(DiscoveryCheckup.Finding.daemonAnswers.said! == ("mDNS daemon", "answers (DNS-SD browse started)"))
        let silence = DiscoveryCheckup.Finding.otherPeers([], waited: .seconds(3)).said!.detail
        #expect(silence.hasPrefix("none answered within 3 s; likely causes, most likely first: nobody else runs p2p on this network; "))
        #expect(silence.hasSuffix("--connect HOST:PORT skips discovery (the other side's `p2p receive` prints it), and a peer reached once is then found by name"))
        let lost = DiscoveryCheckup.Finding.peerReachable(name: "bob", reached: "10.0.0.2:24242", silentByMDNS: true).said!
        #expect(lost.check == "peer bob" && lost.detail.contains("it runs and takes connections, so its announcements are lost on the way"))
        #expect(DiscoveryCheckup.Finding.peerAmbiguous(query: "bob", count: 2).said!.detail == "2 peers fit; name one by its fingerprint")
        #expect(DiscoveryCheckup.Finding.checkingLastAddress(name: "bob").said == nil)
        #expect(DiscoveryCheckup.Finding.checkingLastAddress(name: "bob").note == "bob did not answer; checking where it was last reached")
        #expect(DiscoveryCheckup.Finding.daemonAnswers.note == nil)
    }
}
