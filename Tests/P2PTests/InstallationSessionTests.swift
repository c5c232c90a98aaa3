import Foundation
import P2P
import Testing

/// A session as the `p2p` commands make one (`Session.ofInstallation`), the names its pins judge
/// (`Session.namePins`), and the pins as `p2p trust` lists them (`KnownPeer.listingLine`/`listingJSON`).
@Suite struct InstallationSessionTests {
    @Test func aSessionHasTheInstallationsKeyPinsAndTheOptionsItWasGiven() throws {
        let home = try TransferTests.temporaryDirectory()
        let session = try Session.ofInstallation(sessionID: "files", name: nil, port: nil, bulk: true, answerWait: .seconds(5), directory: home)
        // The key is made on first use, and the same key is the installation's next time.
        let again = try Session.ofInstallation(sessionID: "files", name: "bob", port: 0, pinning: false, directory: home)
        #expect(session.peerID == again.peerID)
        #expect(session.displayName == Identity.defaultDisplayName(for: session.peerID) && again.displayName == "bob")
        #expect(session.configuration.port == SessionConfiguration.standardPort && session.configuration.fallsBackToAnyPort)
        #expect(again.configuration.port == 0 && !again.configuration.fallsBackToAnyPort)
        #expect(session.configuration.maxPayload == WireFormat.absoluteMaxPayload && session.configuration.requestDecisionTimeout == .seconds(5))
        #expect(session.configuration.trustStore != nil && again.configuration.trustStore == nil)
        #expect(session.configuration.transportSecurity == .tls)
    }

    @Test func aKeyThatCannotBeStoredSaysWhereAndWhatToDo() throws {
        let file = try TransferTests.temporaryDirectory().appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: file)
        #expect {
            try Session.ofInstallation(sessionID: "files", name: nil, port: nil, pinning: false, directory: file)
        } throws: { error in
            guard case .identity = error as? InstallationError else { return false }
            return "\(error)".contains(file.path)
        }
    }

    @Test func namesAreJudgedByThePinsOnlyOverTLS() throws {
        let home = try TransferTests.temporaryDirectory()
        let session = try Session.ofInstallation(sessionID: "files", name: nil, port: nil, directory: home)
        let bob = Identity.ephemeral().peerID
        try session.configuration.trustStore?.pin(bob, name: "bob", method: .paired)
        #expect(session.namePins.map(\.name) == ["bob"])
        let plaintext = try Session.ofInstallation(sessionID: "files", name: nil, port: nil, insecure: true, directory: home)
        #expect(plaintext.configuration.trustStore?.all.count == 1)
        #expect(plaintext.namePins.isEmpty, "over plaintext keys prove nothing, so no name is judged by a pin")
    }

    @Test func aPinIsListedWithItsNameSanitizedAndItsJSONWhole() {
        let id = PeerID(hex: "0123456789abcdef0123456789abcdef")!
        let pinnedAt = Date(timeIntervalSince1970: 1_700_000_000)
        let pin = KnownPeer(id: id, name: "bob\u{1B}[2J", method: .paired, pinnedAt: pinnedAt)
        #expect(pin.listingLine == "\(PeerText.sanitized("bob\u{1B}[2J"))  \(id.fingerprint)  paired  \(pinnedAt.iso8601)")
        #expect(!pin.listingLine.contains("\u{1B}"))
        let json = pin.listingJSON
        #expect(json["name"] as? String == "bob\u{1B}[2J" && json["id"] as? String == id.hex && json["method"] as? String == "paired")
        #expect(json["fingerprint"] as? String == id.fingerprint && json["pinned"] as? String == pinnedAt.iso8601)
    }
}
