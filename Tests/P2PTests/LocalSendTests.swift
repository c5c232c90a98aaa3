import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import P2P

/// LocalSend's pure parts: the device description as the apps write it, the certificate's fingerprint, the
/// PIN limit, the bounded device list, and a `prepare-upload` read as a p2p offer.
struct LocalSendTests {
    @Test func deviceInfoDecodesWhatTheAppsSendAndKeepsUnknownTypes() throws {
        let minimal = #"{"alias":"Nice Orange","version":"2.0","fingerprint":"abc","deviceType":"fridge"}"#
        let info = try JSONDecoder().decode(LocalSendDeviceInfo.self, from: Data(minimal.utf8))
        #expect(info.alias == "Nice Orange" && info.deviceModel == nil && info.port == nil)
        #expect(info.kind == "desktop" && info.deviceType == "fridge")
        #expect(info.effectivePort == 53317 && info.usesHTTPS && info.majorVersion == 2)
        #expect(info.hasFingerprint("ABC"))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(LocalSendDeviceInfo.self, from: Data(#"{"version":"2.0","fingerprint":"x"}"#.utf8)) }
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(info.announcing(true))) as? [String: Any]
        #expect(encoded?["announce"] as? Bool == true && encoded?["alias"] as? String == "Nice Orange")
    }

    @Test func certificateIsStoredAndItsFingerprintIsTheSHA256OfItsDER() throws {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-ls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let identity = Identity.ephemeral()
        let first = try LocalSendCertificate.load(for: identity, in: directory)
        let again = try LocalSendCertificate.load(for: identity, in: directory)
        #expect(first.fingerprint == again.fingerprint)
        #expect(first.fingerprint == CertificateFingerprint.sha256(der: first.der))
        #expect(first.fingerprint.count == 64 && first.fingerprint == first.fingerprint.uppercased())
        // Another key: the stored certificate does not fit it, a new one is made.
        let other = try LocalSendCertificate.load(for: Identity.ephemeral(), in: directory)
        #expect(other.fingerprint != first.fingerprint)
    }

    @Test func pinGuessingIsLimitedPerAddress() {
        var guardian = LocalSendPinGuard(pin: "4321", attempts: 3, lockout: .seconds(60))
        let start = ContinuousClock.now
        #expect(guardian.check(nil, from: "10.0.0.1", now: start) == .wrong)
        #expect(guardian.check("0000", from: "10.0.0.1", now: start) == .wrong)
        #expect(guardian.check("1111", from: "10.0.0.1", now: start) == .wrong)
        #expect(guardian.check("4321", from: "10.0.0.1", now: start) == .tooMany)
        #expect(guardian.check("4321", from: "10.0.0.2", now: start) == .allowed)
        #expect(guardian.check("4321", from: "10.0.0.1", now: start + .seconds(61)) == .allowed)
        var open = LocalSendPinGuard(pin: nil)
        #expect(open.check(nil, from: "10.0.0.1") == .allowed)
    }

    @Test func aFloodOfFakeDevicesIsBounded() {
        var list = LocalSendDeviceList(capacity: 64, maxAge: .seconds(150))
        let start = ContinuousClock.now
        for index in 0 ..< 1000 {
            let info = LocalSendDeviceInfo(alias: String(repeating: "a", count: 10_000), fingerprint: "F\(index)")
            list.record(info, address: "10.0.\(index / 250).\(index % 250)", now: start + .milliseconds(index))
        }
        #expect(list.devices.count == 64)
        #expect(list.devices.allSatisfy { $0.info.alias.utf8.count <= 128 })
        #expect(list.device(fingerprint: "f999") != nil && list.device(fingerprint: "F0") == nil)
        list.prune(now: start + .seconds(400))
        #expect(list.devices.isEmpty)
    }

    /// Found by the fuzz smoke: Unicode upper-casing does not round-trip (`ϴ` and `ẞ`), so a device recorded
    /// under one case was not found under the other. Case is folded for ASCII only, and a fingerprint is kept
    /// (and keyed) at 128 bytes, so a 16 KiB claim is not a 16 KiB key.
    @Test func aDeviceIsFoundByItsFingerprintInAnyCase() {
        for fingerprint in ["\u{3F4}aB", "\u{1E9E}cD", "aBc0", String(repeating: "e", count: 5000)] {
            let otherCase = String(fingerprint.map { $0.isASCII ? Character($0.isUppercase ? $0.lowercased() : $0.uppercased()) : $0 })
            var list = LocalSendDeviceList(capacity: 2)
            list.record(LocalSendDeviceInfo(alias: "x", fingerprint: fingerprint), address: "10.0.0.1")
            #expect(list.device(fingerprint: fingerprint)?.address == "10.0.0.1")
            #expect(list.device(fingerprint: otherCase)?.address == "10.0.0.1")
            #expect(LocalSendPeer.id(forFingerprint: fingerprint) == LocalSendPeer.id(forFingerprint: otherCase))
        }
        #expect(LocalSendDeviceInfo.fingerprintKey("\u{3F4}ab") != LocalSendDeviceInfo.fingerprintKey("\u{398}AB"))
    }

    private func request(_ files: [LocalSendFileInfo]) -> LocalSendPrepareUpload {
        LocalSendPrepareUpload(info: LocalSendDeviceInfo(alias: "anna", deviceModel: "Pixel 7", deviceType: "mobile", fingerprint: "F"),
                               files: Dictionary(uniqueKeysWithValues: files.map { ($0.id, $0) }))
    }

    @Test func aPrepareUploadIsReadAsAp2pOffer() throws {
        let directory = URL(fileURLWithPath: "/tmp/p2p-ls-offer")
        let peer = LocalSendPeer.info(LocalSendDeviceInfo(alias: "anna", deviceModel: "Pixel 7", fingerprint: "F"), address: "10.0.0.9")
        #expect(peer.kind == .localSend && LocalSendPeer.label(of: peer).raw == #"Pixel 7 "anna" (LocalSend, not verified by key)"#)

        let text = try LocalSendOffer.read(request([.init(id: "t", fileName: "x.txt", size: 5, fileType: "text/plain", preview: "hello")]),
                                           from: peer, id: 1, into: directory)
        #expect(text.content == .text("hello") && TextTransfer.isText(text.offer.info))

        let one = try LocalSendOffer.read(request([.init(id: "a", fileName: "photo.jpg", size: 9, fileType: "image/jpeg")]), from: peer, id: 2, into: directory)
        #expect(!one.offer.info.isTree && one.offer.destination.path == "/tmp/p2p-ls-offer/photo.jpg")

        let tree = try LocalSendOffer.read(request([.init(id: "a", fileName: "trip/a.jpg", size: 1, fileType: "image/jpeg"),
                                                    .init(id: "b", fileName: "trip/.hidden", size: 2, fileType: "text/plain")]),
                                           from: peer, id: 3, into: directory)
        #expect(tree.offer.info.isTree && tree.offer.info.fileCount == 2 && tree.offer.info.size == 3)
        #expect(tree.offer.roots == ["trip/"] && tree.offer.hiddenPaths == ["trip/.hidden"])

        for bad in ["../escape", "/etc/passwd", "a/../../b", "bell\u{07}", ""] {
            #expect(throws: HTTPError.self) {
                try LocalSendOffer.read(request([.init(id: "a", fileName: bad, size: 1, fileType: "x")]), from: peer, id: 4, into: directory)
            }
        }
        #expect(throws: HTTPError.self) { try LocalSendOffer.read(request([]), from: peer, id: 5, into: directory) }
        var mismatched = request([.init(id: "a", fileName: "x", size: 1, fileType: "x")])
        mismatched.files = ["b": mismatched.files["a"]!]
        #expect(throws: HTTPError.self) { try LocalSendOffer.read(mismatched, from: peer, id: 6, into: directory) }
    }
}

/// The HTTP layer on loopback: routing, the JSON limit, a streamed body, and TLS with the fingerprint the
/// client sees. Real sockets, real TLS; nothing leaves 127.0.0.1.
@Suite(.timeLimit(.minutes(1)))
struct LocalSendHTTPTests {
    @Test func routesLimitsAndStreamsOverHTTPS() async throws {
        let certificate = try LocalSendCertificate.load(for: .ephemeral(), store: false)
        var router = HTTPRouter()
        router.on(.POST, "/json") { request, body in
            let info = try await body.decode(LocalSendDeviceInfo.self, limit: 1024, headers: request.headers)
            return .json(["alias": info.alias, "query": request.query["q"] ?? ""])
        }
        router.on(.POST, "/count") { _, body in
            var total = 0, chunks = 0
            while let chunk = try await body.next() {
                total += chunk.readableBytes
                chunks += 1
            }
            return .text(.ok, "\(total) in \(chunks)")
        }
        let server = HTTPServer(configuration: .init(hosts: ["127.0.0.1"], port: 0, tls: try certificate.serverContext()), router: router)
        let port = try await server.start()
        let client = HTTPClient(tls: try LocalSendCertificate.load(for: .ephemeral(), store: false).clientContext())

        let json = ByteBuffer(string: #"{"alias":"anna","version":"2.1","fingerprint":"F"}"#)
        let answer = try await client.request(.POST, host: "127.0.0.1", port: port, path: "/json?q=a%20b", body: .bytes(json))
        #expect(answer.status == .ok && answer.text.contains(#""alias":"anna""#) && answer.text.contains(#""query":"a b""#))
        #expect(answer.serverFingerprint == certificate.fingerprint)

        let big = ByteBuffer(string: #"{"alias":""# + String(repeating: "x", count: 2000) + #"","version":"2","fingerprint":"F"}"#)
        #expect(try await client.request(.POST, host: "127.0.0.1", port: port, path: "/json", body: .bytes(big)).status == .payloadTooLarge)
        #expect(try await client.request(.POST, host: "127.0.0.1", port: port, path: "/json", body: .bytes(ByteBuffer(string: "{"))).status == .badRequest)
        #expect(try await client.request(.GET, host: "127.0.0.1", port: port, path: "/nowhere").status == .notFound)
        #expect(try await client.request(.GET, host: "127.0.0.1", port: port, path: "/json").status == .methodNotAllowed)

        let file = TestFiles.temporaryDirectory.appendingPathComponent("p2p-ls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(repeating: 7, count: 3 << 20).writeUnsynced(to: file)
        let streamed = try await client.request(.POST, host: "127.0.0.1", port: port, path: "/count",
                                                body: .file(path: file.path, length: 3 << 20, progress: { _ in }))
        // Several chunks: the body reached the route as a stream, not as one buffer.
        let parts = streamed.text.split(separator: " ")
        #expect(streamed.status == .ok && parts.first == "\(3 << 20)" && (Int(parts.last ?? "") ?? 0) > 1)
        await server.stop()
    }
}

/// `LocalSendReceiver` on loopback: an offer goes through the `FileTransfers` offer handler and events, the
/// file arrives whole under its name, another offer meanwhile is 409, and a session whose sender went
/// quiet stops blocking the next one.
@Suite(.timeLimit(.minutes(1)))
struct LocalSendReceiverTests {
    @Test func anUploadArrivesThroughTheSameOfferHandlerAndEvents() async throws {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-ls-rx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = Session(sessionID: "files", displayName: "bob", identity: .ephemeral())
        let transfers = FileTransfers(session: session, directory: directory)
        let asked = NIOLockedValueBoxWrapper<[String]>([])
        transfers.setOfferHandler { offer in
            asked.mutate { $0.append(LocalSendPeer.label(of: offer.info.peer).raw + " " + (offer.info.peer.discoveryInfo["fingerprint"] ?? "")) }
            return true
        }
        var configuration = LocalSendReceiver.Configuration(alias: "bob")
        configuration.hosts = ["127.0.0.1"]
        configuration.port = 0
        let receiver = LocalSendReceiver(transfers: transfers, certificate: try LocalSendCertificate.load(for: .ephemeral(), store: false),
                                         configuration: configuration)
        let port = try await receiver.start()
        let events = transfers.events()
        let ended = receiver.devices.events()
        let clientCertificate = try LocalSendCertificate.load(for: .ephemeral(), store: false)
        let client = HTTPClient(tls: try clientCertificate.clientContext())
        let bytes = Data((0 ..< 300_000).map { UInt8($0 % 251) })
        let sender = LocalSendDeviceInfo(alias: "anna", deviceModel: "Pixel 7", deviceType: "mobile", fingerprint: "claimed")
        func prepare(_ name: String, port: Int = port) async throws -> HTTPClient.Response {
            let file = LocalSendFileInfo(id: "f", fileName: name, size: UInt64(bytes.count), fileType: "application/octet-stream",
                                         sha256: Array(LocalSendHashing.sha256(bytes)).hex)
            let body = try JSONEncoder().encode(LocalSendPrepareUpload(info: sender, files: ["f": file]))
            return try await client.request(.POST, host: "127.0.0.1", port: port, path: LocalSendPath.prepareUpload, body: .bytes(ByteBuffer(bytes: body)))
        }

        let first = try await prepare("photo.bin")
        #expect(first.status == .ok)
        let session1 = try JSONDecoder().decode(LocalSendUploadSession.self, from: Data(first.body.readableBytesView))
        // The client showed a certificate: its fingerprint, not the body's claim, names the sender.
        #expect(asked.value == [#"Pixel 7 "anna" (LocalSend, not verified by key) "# + clientCertificate.fingerprint])
        #expect(try await prepare("other.bin").status == .conflict)
        let upload = "\(LocalSendPath.upload)?sessionId=\(session1.sessionId)&fileId=f&token=\(session1.files["f"] ?? "")"
        #expect(try await client.request(.POST, host: "127.0.0.1", port: port, path: upload, body: .bytes(ByteBuffer(bytes: bytes))).status == .ok)
        #expect(try Data(contentsOf: directory.appendingPathComponent("photo.bin")) == bytes)
        var seen: [String] = []
        for await event in events {
            switch event {
            case .offered(let offer): seen.append("offered \(offer.info.name.raw) from \(offer.info.peer.kind.rawValue)")
            case .started: seen.append("started")
            case .finished(_, let delivery): seen.append("finished \(delivery.size)")
            default: break
            }
            if seen.last?.hasPrefix("finished") == true { break }
        }
        #expect(seen == ["offered photo.bin from localsend", "started", "finished 300000"])
        for await event in ended {
            if case .sessionEnded(let peer) = event { #expect(peer.displayName.raw == "anna"); break }
        }

        await receiver.stop()

        // A session whose sender never uploads stops blocking the next one once it counts as abandoned.
        configuration.abandonedAfter = .milliseconds(200)
        let quick = LocalSendReceiver(transfers: transfers, certificate: try LocalSendCertificate.load(for: .ephemeral(), store: false),
                                      configuration: configuration)
        let quickPort = try await quick.start()
        #expect(try await prepare("quiet.bin", port: quickPort).status == .ok)
        var status = HTTPResponseStatus.conflict
        for _ in 0 ..< 100 where status == .conflict {
            try await Task.sleep(for: .milliseconds(50))
            status = try await prepare("next.bin", port: quickPort).status
        }
        #expect(status == .ok)
        await receiver.stop()
    }
}
