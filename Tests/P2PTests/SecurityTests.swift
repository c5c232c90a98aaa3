@preconcurrency import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
@testable import P2P

/// TLS, identity binding, pinning and pairing, with real sockets and real TLS.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SecurityTests {
    private func temporaryStore() throws -> TrustStore {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-trust-\(UUID().uuidString)")
        return try TrustStore(file: directory.appendingPathComponent("known-peers.json"))
    }

    /// PROTOCOL.md §11: names compare by canonical equivalence. An NFD "café" looks exactly like a pinned
    /// NFC "café", so it is the same name: a conflict for another key, not a harmless first contact.
    @Test func namesCompareByCanonicalEquivalenceNotBytes() throws {
        let store = try temporaryStore()
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        #expect(Array(nfc.utf8) != Array(nfd.utf8), "the test needs two byte sequences")
        let owner = Identity.ephemeral().peerID, newcomer = Identity.ephemeral().peerID
        try store.pin(owner, name: nfc, method: .firstUse)
        guard case .conflict(let pinned) = store.verdict(for: newcomer, name: nfd) else {
            Issue.record("an NFD name got past the NFC pin: \(store.verdict(for: newcomer, name: nfd))")
            return
        }
        #expect(pinned.id == owner)
        #expect(try store.remove(matching: nfd).map(\.id) == [owner], "`p2p trust remove` finds the pin under either form")
        // HELLO check 6 and the discovery filter follow the same rule for session IDs.
        let policy = HandshakePolicy(ownID: owner, sessionID: nfc)
        let hello = Hello(peerID: newcomer, capabilities: .all, datagramPort: 0, datagramToken: 1, displayName: "bob", sessionID: nfd)
        #expect(policy.check(hello, link: .init(secure: false, provenPeer: nil, expectedPeer: nil), trust: .unknown) == nil)
    }

    @Test func aHelloClaimingSomeoneElsesIDIsRefused() async throws {
        let bob = try await makeSession("bob")
        let victim = Identity.ephemeral().peerID
        let impostor = try await RawPeer.connect(to: bob.endpoint)
        try await impostor.send(impostor.hello(claiming: victim).frame())
        #expect(try await impostor.waitForClose()?.code == .identityMismatch)
        #expect(bob.connectedPeers.isEmpty)
        await bob.close()
    }

    @Test func aRelayWithItsOwnKeysIsDetectedAndRefused() async throws {
        let alice = try await makeSession("alice")
        let bob = try await makeSession("bob")
        let relay = try await TLSRelay.start(forwardingTo: bob.endpoint)
        // Alice means bob, but reaches the relay, which presents its own certificate.
        await #expect(throws: SessionError.self) {
            try await alice.connect(to: relay.endpoint, expecting: bob.peerID)
        }
        #expect(alice.connectedPeers.isEmpty)
        #expect(bob.connectedPeers.isEmpty)
        // Even without knowing whom to expect, the relayed HELLO names a key the relay cannot prove.
        await #expect(throws: SessionError.self) { try await alice.connect(to: relay.endpoint) }
        #expect(alice.connectedPeers.isEmpty)
        try await relay.close()
        await alice.close(); await bob.close()
    }

    @Test func aKnownNameWithAnotherKeyIsRefusedLoudly() async throws {
        let store = try temporaryStore()
        let alice = try await makeSession("alice") { $0.trustStore = store }
        let bob = try await makeSession("bob")
        try await alice.connect(to: bob.endpoint)
        #expect(store.all.map(\.id) == [bob.peerID])  // pinned on first use
        #expect(store.all.first?.method == .firstUse)

        let fakeBob = try await makeSession("bob")  // same name, new key
        let events = EventRecorder(alice)
        await #expect(throws: SessionError.refusedAsUntrusted("the name \"bob\" is pinned to another key on this peer; pair again (p2p pair)")) {
            try await fakeBob.connect(to: alice.endpoint)
        }
        // Alice reports the refusal; had the impostor's link been connected first, she would have said so before.
        _ = try await events.waitFor("alice refusing the impostor") {
            if case .refused(let peer, _) = $0 { peer.id == fakeBob.peerID } else { false }
        }
        #expect(!events.states(of: fakeBob.peerID).contains(.connected))
        #expect(!alice.connectedPeers.contains { $0.id == fakeBob.peerID })
        #expect(store.all.map(\.id) == [bob.peerID])  // the pin is untouched
        // Connecting out to the impostor is refused as well, and the impostor hears why (PROTOCOL.md §12.2)
        // on the connection alice opened: ERROR 15 before it connected (it waits for alice's CONTEXT, which
        // a refusing initiator never sends), a refusal of its key, never a connection.
        let impostorSees = EventRecorder(fakeBob)
        await #expect(throws: SessionError.untrustedIdentity(name: "bob", pinned: bob.peerID, presented: fakeBob.peerID)) {
            try await alice.connect(to: fakeBob.endpoint)
        }
        let reason = try await impostorSees.waitFor(alice.peerID, .disconnected, seconds: 30)
        #expect(reason == .refusedAsUntrusted("the name \"bob\" is pinned to another key on this peer; pair again (p2p pair)"))
        #expect(reason?.keyRefusal == .keyChanged)
        #expect(!impostorSees.states(of: alice.peerID).contains(.connected))
        await alice.close(); await bob.close(); await fakeBob.close()
    }

    @Test func aPlaintextClientIsRefusedWithAReason() async throws {
        let secure = try await makeSession("secure")
        let plain = try await makeSession("plain") { $0.transportSecurity = .insecure }
        await #expect(throws: SessionError.tlsRequired) { try await plain.connect(to: secure.endpoint) }
        #expect(secure.connectedPeers.isEmpty)
        await secure.close(); await plain.close()
    }

    @Test func aStalledTLSHandshakeTimesOut() async throws {
        let bob = try await makeSession("bob") { $0.handshakeTimeout = .milliseconds(300) }
        let events = EventRecorder(bob)
        // TCP only: not a byte of TLS.
        let raw = try await RawPeer.connect(to: bob.endpoint, tls: false)
        _ = try await raw.waitForClose(seconds: 3)
        #expect(events.all.isEmpty)
        await bob.close()
    }

    @Test func pairingWithTheSameCodeSucceedsOnBothSides() async throws {
        let alice = try await makeSession("alice")
        let bob = try await makeSession("bob")
        let (alicePairing, bobPairing) = (Pairing(session: alice), Pairing(session: bob))
        try await alice.connect(to: bob.endpoint)
        let code = PairingCode.random()
        async let fromAlice = alicePairing.pair(with: bob.peerID, code: code)
        async let fromBob = bobPairing.pair(with: alice.peerID, code: code)
        let (a, b) = try await (fromAlice, fromBob)
        #expect(a.id == bob.peerID)
        #expect(b.id == alice.peerID)
        await alice.close(); await bob.close()
    }

    @Test func aWrongPairingCodeFailsOnBothSides() async throws {
        let alice = try await makeSession("alice")
        let bob = try await makeSession("bob")
        let (alicePairing, bobPairing) = (Pairing(session: alice), Pairing(session: bob))
        try await alice.connect(to: bob.endpoint)
        let fromAlice = Task { try await alicePairing.pair(with: bob.peerID, code: PairingCode(typed: "1234-5678")!) }
        let fromBob = Task { try await bobPairing.pair(with: alice.peerID, code: PairingCode(typed: "1234-5679")!) }
        await #expect(throws: PairingError.wrongCode) { _ = try await fromAlice.value }
        await #expect(throws: PairingError.wrongCode) { _ = try await fromBob.value }
        await alice.close(); await bob.close()
    }

    @Test func pairingCodesAreReadAsPeopleTypeThem() {
        #expect(PairingCode(typed: "1234 5678")?.description == "1234-5678")
        #expect(PairingCode(typed: "12345678")?.digits == "12345678")
        #expect(PairingCode(typed: "1234-567") == nil)
        #expect(PairingCode(typed: "1234-567x") == nil)
        #expect(PairingCode.random().digits.count == 8)
    }

    @Test func elligatorMapsOntoTheCurve() {
        // The output must be a curve point's u: u³ + A·u² + u must be a square.
        for seed in 0..<50 {
            let generator = CPace.generator(code: "\(seed)", channelBinding: [UInt8(seed)])
            let u = FieldElement(reducingLittleEndian: generator)
            #expect(u.canonicalBytes == generator)
            #expect(CPace.curve(u).isSquare.revealed)
        }
        #expect(CPace.generator(code: "1", channelBinding: [1]) != CPace.generator(code: "2", channelBinding: [1]))
        #expect(CPace.generator(code: "1", channelBinding: [1]) != CPace.generator(code: "1", channelBinding: [2]))
    }

    @Test func sealedDatagramsRefuseTamperingReplayAndTheWrongKey() throws {
        let key = SymmetricKey(size: .bits256)
        let frame = Frame(type: .data, payload: ByteBuffer(bytes: Array("secret".utf8)))
        let datagram = DatagramCodec.encode(frame, token: 42, counter: 7, key: key)
        #expect(!String(decoding: datagram.readableBytesView, as: UTF8.self).contains("secret"))
        let parsed = try #require(DatagramCodec.parse(datagram, catalog: .standard))
        #expect(parsed.open(with: key)?.payload == ByteBuffer(bytes: Array("secret".utf8)))
        #expect(parsed.open(with: SymmetricKey(size: .bits256)) == nil)
        #expect(parsed.open(with: nil) == nil)  // sealed data never passes as plaintext
        var tampered = datagram
        // Every bit of one byte flipped: setting it to 0xFF left it unchanged whenever it already was
        // (1 run in 256 failed).
        let at = tampered.writerIndex - 20
        tampered.setInteger(tampered.getInteger(at: at, as: UInt8.self)! ^ 0xFF, at: at)
        #expect(DatagramCodec.parse(tampered, catalog: .standard)?.open(with: key) == nil)

        var window = ReplayWindow()
        // 7 new, 7 replayed, 9 and 8 new (out of order), 8 replayed, 200 new, 100 too old to tell.
        let verdicts = [7, 7, 9, 8, 8, 200, 100].map { window.accept(UInt64($0)) }
        #expect(verdicts == [true, false, true, true, false, true, false])
    }
}

/// A man in the middle with its own TLS keys: terminates TLS from the client and opens its own to the server,
/// passing the decrypted bytes through unchanged.
final class TLSRelay: Sendable {
    let channel: Channel
    var endpoint: Endpoint { Endpoint(host: "127.0.0.1", port: channel.localAddress!.port!) }

    static func start(forwardingTo target: Endpoint) async throws -> TLSRelay {
        let contexts = try TLSContexts(identity: .ephemeral())
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { inbound in
                inbound.eventLoop.makeCompletedFuture {
                    try inbound.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: contexts.server, customVerificationCallback: TLSContexts.verify))
                    try inbound.pipeline.syncOperations.addHandler(Pump(target: target, contexts: contexts))
                }
            }
            .bind(host: "127.0.0.1", port: 0).value
        return TLSRelay(channel: channel)
    }

    private init(channel: Channel) { self.channel = channel }
    func close() async throws { try await channel.close().value }

    private final class Pump: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let target: Endpoint
        let contexts: TLSContexts
        var outbound: EventLoopFuture<Channel>?

        init(target: Endpoint, contexts: TLSContexts) {
            self.target = target
            self.contexts = contexts
        }

        func channelActive(context: ChannelHandlerContext) {
            let inbound = context.channel
            let contexts = self.contexts
            outbound = ClientBootstrap(group: context.eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: contexts.client, serverHostname: nil, customVerificationCallback: TLSContexts.verify))
                        try channel.pipeline.syncOperations.addHandler(Back(inbound: inbound))
                    }
                }
                .connect(host: target.host, port: target.port)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            outbound?.whenSuccess { $0.writeAndFlush(bytes, promise: nil) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            outbound?.whenSuccess { $0.close(promise: nil) }
        }
    }

    private final class Back: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let inbound: Channel
        init(inbound: Channel) { self.inbound = inbound }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            inbound.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }
        func channelInactive(context: ChannelHandlerContext) { inbound.close(promise: nil) }
    }
}

@Suite(.serialized, .timeLimit(.minutes(1)))
struct LimitTests {
    @Test func connectionsOverThePerAddressLimitAreClosedAtOnce() async throws {
        let bob = try await makeSession("bob") { $0.limits.connectionsPerAddress = 2 }
        let bobEvents = EventRecorder(bob)
        let first = try await makeSession("first"), second = try await makeSession("second"), third = try await makeSession("third")
        try await first.connect(to: bob.endpoint)
        try await second.connect(to: bob.endpoint)
        await #expect(throws: SessionError.self) { try await third.connect(to: bob.endpoint, timeout: .seconds(2)) }
        #expect(bob.connectedPeers.count == 2)
        await first.close()
        _ = try await bobEvents.waitFor(first.peerID, .disconnected)  // reported once its connection no longer counts
        try await third.connect(to: bob.endpoint)  // a slot is free again
        await bob.close(); await second.close(); await third.close()
    }

    @Test func connectionRequestsOverThePerMinuteLimitAreDeniedWithoutAsking() async throws {
        let bob = try await makeSession("bob") { $0.limits.connectionRequestsPerMinute = 2 }
        let asked = NIOLockedValueBoxWrapper(0)
        bob.setConnectionRequestHandler { _ in
            asked.mutate { $0 += 1 }
            return false
        }
        let alice = try await makeSession("alice")
        for _ in 0..<4 {
            await #expect(throws: SessionError.denied(by: "bob")) { try await alice.connect(to: bob.endpoint) }
        }
        #expect(asked.value == 2, "requests over the limit never reach the person")
        await alice.close(); await bob.close()
    }
}

@Suite struct TrustStoreTests {
    @Test func everyInstanceSeesTheFileAsItIsNow() throws {
        let file = TestFiles.temporaryDirectory.appendingPathComponent("p2p-trust-\(UUID().uuidString)/known-peers.json")
        let chat = try TrustStore(file: file), command = try TrustStore(file: file)
        let bob = Identity.ephemeral().peerID, carol = Identity.ephemeral().peerID
        try chat.pin(bob, name: "bob", method: .firstUse)
        try command.remove(matching: "bob")  // `p2p trust remove` while the chat runs
        #expect(chat.verdict(for: Identity.ephemeral().peerID, name: "bob") == .unknown)
        try chat.pin(carol, name: "carol", method: .firstUse)  // must not bring bob back
        #expect(command.all.map(\.name) == ["carol"])
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    /// Where a pinned peer was reached is kept for dialling it without mDNS: newest first, no
    /// repeats, at most `maxRememberedAddresses`; a peer that is not pinned gets nothing stored.
    @Test func aPinnedPeerRemembersWhereItWasReached() throws {
        let file = TestFiles.temporaryDirectory.appendingPathComponent("p2p-trust-\(UUID().uuidString)/known-peers.json")
        let store = try TrustStore(file: file)
        let bob = Identity.ephemeral().peerID, stranger = Identity.ephemeral().peerID
        try store.pin(bob, name: "bob", method: .firstUse)
        try store.recordContact(bob, at: [Endpoint("10.0.0.2:24242")!])
        try store.recordContact(bob, at: [Endpoint("[fe80::1%1]:24242")!, Endpoint("10.0.0.2:24242")!])
        let known = try #require(store.all.first)
        #expect(known.lastAddresses?.count == 2)
        #expect(known.lastEndpoints.first?.address?.scopeID == 1)
        #expect(known.lastEndpoints.last == Endpoint("10.0.0.2:24242"))
        #expect(known.lastSeen != nil)
        try store.recordContact(bob, at: (1...20).map { Endpoint(host: "10.0.1.\($0)", port: 24242) })
        #expect(store.all.first?.lastAddresses?.count == TrustStore.maxRememberedAddresses)
        try store.recordContact(stranger, at: [Endpoint("10.0.0.9:24242")!])
        #expect(store.all.map(\.id) == [bob])
        // A first contact pins and records where in one write.
        let carol = Identity.ephemeral().peerID
        try store.pin(carol, name: "carol", method: .firstUse, reachedAt: [Endpoint("10.0.0.3:24242")!])
        let pinned = try #require(store.all.first { $0.id == carol })
        #expect(pinned.lastAddresses == ["10.0.0.3:24242"] && pinned.lastSeen != nil)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
        #expect(leftovers.filter { $0.hasSuffix(".tmp") }.isEmpty)
    }

    /// `p2p peers add`: an address is kept once, survives contact with a peer nobody pinned, and moves
    /// to the pin of the peer that answered there.
    @Test func anAddressAddedByHandMovesToThePinOfWhoeverAnsweredThere() throws {
        let store = try TrustStore(file: TestFiles.temporaryDirectory.appendingPathComponent("p2p-trust-\(UUID().uuidString)/known-peers.json"))
        let bob = Identity.ephemeral().peerID, stranger = Identity.ephemeral().peerID
        let address = Endpoint("[fe80::1%1]:24242")!
        #expect(try store.addAddress(address))
        #expect(try !store.addAddress(address))
        #expect(try store.addAddress(Endpoint("10.0.0.7:24242")!))
        #expect(store.addedAddresses.map(\.address) == [address.description, "10.0.0.7:24242"])
        #expect(store.addedAddresses.first?.endpoint == address)
        try store.recordContact(stranger, at: [address])  // not pinned: an address is no reason to trust
        #expect(store.addedAddresses.count == 2)
        try store.pin(bob, name: "bob", method: .firstUse, reachedAt: [address])
        #expect(store.addedAddresses.map(\.address) == ["10.0.0.7:24242"])
        #expect(store.all.first?.lastEndpoints == [address])
        #expect(try !store.removeAddedAddress("10.0.0.8:24242"))
        #expect(try store.removeAddedAddress("10.0.0.7:24242"))
        #expect(store.addedAddresses.isEmpty)
    }

    /// An address dialled for a name: whoever answers there must answer to it, or it is refused before
    /// anything is pinned; the one that does is pinned like any first contact.
    @Test func aPeerDialledByNameAtAnAddressMustAnswerToIt() async throws {
        let store = try TrustStore(file: TestFiles.temporaryDirectory.appendingPathComponent("p2p-trust-\(UUID().uuidString)/known-peers.json"))
        let alice = try await makeSession("alice") { $0.trustStore = store }
        let bob = try await makeSession("bob")
        await #expect(throws: SessionError.notTheNamedPeer(query: "carol", got: "bob")) {
            try await alice.connect(to: [bob.endpoint], peerName: nil, expecting: nil, answeringTo: "carol")
        }
        #expect(store.all.isEmpty)
        #expect(alice.connectedPeers.isEmpty)
        let reached = try await alice.connect(to: [bob.endpoint], peerName: nil, expecting: nil, answeringTo: "Bob")
        #expect(reached.id == bob.peerID)
        try await waitUntil("bob pinned") { store.all.map(\.id) == [bob.peerID] }
        await alice.close(); await bob.close()
    }
}

@Suite struct PathMonitorTests {
    @Test func loopbackIsAlwaysAUsablePath() {
        let usable = PathMonitor.usableLocalAddresses()
        #expect(usable.contains(IPAddress("127.0.0.1")!))
    }
}

@Suite(.serialized, .timeLimit(.minutes(1)))
struct RefusalEventTests {
    @Test func theRefusingSideHearsAboutTheImpostor() async throws {
        let bob = try await makeSession("bob")
        let events = EventRecorder(bob)
        let impostor = try await RawPeer.connect(to: bob.endpoint)
        try await impostor.send(impostor.hello(name: "mallory", claiming: Identity.ephemeral().peerID).frame())
        _ = try await impostor.waitForClose()
        let event = try await events.waitFor("refused") { if case .refused = $0 { true } else { false } }
        guard case .refused(let peer, let reason) = event else { return }
        #expect(peer.displayName == "mallory")
        #expect(reason.isImpersonation)
        await bob.close()
    }
}
