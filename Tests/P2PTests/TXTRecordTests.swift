import Foundation
import Testing

@testable import P2P

/// One entry of `Protocol/vectors/txt.json`.
struct TXTVector: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    var hex: String
    /// The record bytes are exactly what `TXTRecord(entries).bytes` writes.
    var canonical: Bool?
    var entries: [[String]]
    /// Key → value seen by a lookup; `null` for absent.
    var lookup: [String: String?]
    /// The app's keys a browser reports, and from which an advertiser writes exactly `hex`.
    var discoveryInfo: [String: String]?
    var testDescription: String { name }
}

@Suite("TXT record")
struct TXTRecordTests {
    static let vectors: [TXTVector] = (try? ProtocolVectorTests.load("txt.json")) ?? []
    static let peer = PeerID(hex: "00112233445566778899aabbccddeeff")!

    static func bytes(_ strings: String...) -> [UInt8] {
        strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    @Test func vectorsLoad() throws {
        let vectors: [TXTVector] = try ProtocolVectorTests.load("txt.json")
        #expect(vectors.count >= 8)
        #expect(vectors.count == Self.vectors.count)
    }

    @Test(arguments: vectors)
    func vector(_ vector: TXTVector) throws {
        let bytes = try #require(Self.hexBytes(vector.hex))
        let record = TXTRecord(bytes: bytes)
        #expect(record.entries.map { [$0.key, $0.value] } == vector.entries)
        for (key, value) in vector.lookup {
            #expect(record[key] == value, "lookup \(key)")
        }
        if vector.canonical == true {
            #expect(TXTRecord(vector.entries.map { ($0[0], $0[1]) }).bytes == bytes)
        }
        if let info = vector.discoveryInfo {
            let service = DiscoveredService(name: "x", txt: record, host: "h", port: 1, addresses: [], interfaceIndex: 0)
            #expect(service.discoveryInfo == info)
            let peer = try #require(service.peerID), session = try #require(service.sessionID)
            #expect(try ServiceAnnouncement.txtRecord(peerID: peer, sessionID: session, discoveryInfo: info).bytes == bytes)
        }
    }

    @Test func discoveryInfoFollowsTheRulesOfRFC6763() throws {
        func refusal(_ info: [String: String]) -> String? {
            do throws(DiscoveryError) {
                _ = try ServiceAnnouncement.txtRecord(peerID: Self.peer, sessionID: "chat", discoveryInfo: info)
                return nil
            } catch {
                guard case .invalidDiscoveryInfo(let why) = error else { return "unexpected \(error)" }
                return why
            }
        }
        #expect(refusal([:]) == nil)
        #expect(refusal(["ninechars": "x", "k": ""]) == nil)
        #expect(refusal(["tenletters": "x"])?.contains("1 to 9 characters") == true)
        #expect(refusal(["": "x"])?.contains("1 to 9 characters") == true)
        #expect(refusal(["a=b": "x"])?.contains("printable ASCII") == true)
        #expect(refusal(["café": "x"])?.contains("printable ASCII") == true)
        #expect(refusal(["SID": "other"])?.contains("p2p's own") == true)
        #expect(refusal(["Mode": "a", "mode": "b"])?.contains("appears twice") == true)
        #expect(refusal(["k": String(repeating: "v", count: 254)])?.contains("at most 255") == true)
        // 4 entries of 2 + 1 + 8 + 100 bytes each on top of the 62 bytes p2p uses: over 400.
        let big = Dictionary(uniqueKeysWithValues: (1...4).map { ("key\($0)", String(repeating: "v", count: 100)) })
        #expect(refusal(big)?.contains("within 400") == true)
    }

    @Test func discoveredServicesLeaveP2PsOwnKeysOutOfTheDiscoveryInfo() {
        let txt = TXTRecord([("txtvers", "1"), ("ID", Self.peer.hex), ("sid", "x"), ("color", "red"), ("Color", "blue"), ("flag", "")])
        let service = DiscoveredService(name: "x", txt: txt, host: "h", port: 1, addresses: [], interfaceIndex: 0)
        #expect(service.discoveryInfo == ["color": "red", "flag": ""])
    }

    @Test func buildWritesLengthPrefixedKeyValueStrings() {
        let record = TXTRecord([("txtvers", "1"), ("sid", "chat"), ("empty", "")])
        #expect(record.bytes == Self.bytes("txtvers=1", "sid=chat", "empty="))
        #expect(TXTRecord(bytes: record.bytes) == record)
        #expect(TXTRecord([]).bytes.isEmpty)
    }

    @Test func entriesLongerThan255BytesAreCut() {
        let record = TXTRecord([("sid", String(repeating: "v", count: 300)), ("id", "x")])
        let bytes = record.bytes
        #expect(bytes.first == 255)
        #expect(bytes.count == 1 + 255 + 1 + 4)
        let parsed = TXTRecord(bytes: bytes)
        #expect(parsed["sid"] == String(repeating: "v", count: 251))
        #expect(parsed["id"] == "x")
    }

    @Test func emptyStringsAndLeadingEqualsAreSkipped() {
        let record = TXTRecord(bytes: Self.bytes("", "=nokey", "a=1", "") + [0])
        #expect(record.entries.count == 1)
        #expect(record["a"] == "1")
    }

    @Test func keyWithoutEqualsIsPresentWithEmptyValue() {
        let record = TXTRecord(bytes: Self.bytes("flag", "k=v"))
        #expect(record["flag"] == "")
        #expect(record["k"] == "v")
        #expect(record["absent"] == nil)
    }

    @Test func lookupIsCaseInsensitiveAndFirstOccurrenceWins() {
        let record = TXTRecord(bytes: Self.bytes("Sid=one", "sid=two", "SID=three"))
        #expect(record["sid"] == "one")
        #expect(record["SID"] == "one")
        #expect(record["sId"] == "one")
        #expect(record.entries.count == 3, "later duplicates are kept in the entries but never win a lookup")
    }

    @Test func valueKeepsEverythingAfterTheFirstEquals() {
        #expect(TXTRecord(bytes: Self.bytes("k==a=b"))["k"] == "=a=b")
    }

    @Test func announcementHasTxtversFirstThenProtocolVersionIDSessionAndDialRule() {
        let record = ServiceAnnouncement.txtRecord(peerID: Self.peer, sessionID: "chat")
        #expect(record.entries.map(\.key) == ["txtvers", "pv", "id", "sid", "dial"])
        #expect(record.entries.map(\.value) == ["1", "1", Self.peer.hex, "chat", "names"])
        #expect(record.bytes == Self.bytes("txtvers=1", "pv=1", "id=00112233445566778899aabbccddeeff", "sid=chat", "dial=names"))
        let found = DiscoveredService(name: "x", txt: record, host: "h", port: 1, addresses: [], interfaceIndex: 0)
        #expect(found.dialsByName && found.discoveryInfo.isEmpty)
        #expect(ServiceAnnouncement.serviceType == "_p2p._tcp")
    }

    @Test func discoveredServiceReadsTheAnnouncement() {
        let txt = TXTRecord(bytes: ServiceAnnouncement.txtRecord(peerID: Self.peer, sessionID: "jeu ☕").bytes)
        let service = DiscoveredService(name: "alice", txt: txt, host: "alice.local.", port: 4242, addresses: [IPAddress("192.168.1.2")!], interfaceIndex: 2)
        #expect(service.peerID == Self.peer)
        #expect(service.sessionID == "jeu ☕")
        #expect(service.protocolVersion == 1)
    }

    @Test func discoveredServiceWithoutValidIDHasNoPeer() {
        for id in ["", "0011", "zz112233445566778899aabbccddeeff", "00112233445566778899aabbccddeeff00"] {
            let service = DiscoveredService(name: "x", txt: TXTRecord([("txtvers", "1"), ("id", id)]), host: "h", port: 1, addresses: [], interfaceIndex: 0)
            #expect(service.peerID == nil, "id \(id)")
            #expect(service.sessionID == nil)
        }
        let upper = DiscoveredService(name: "x", txt: TXTRecord([("ID", Self.peer.hex.uppercased())]), host: "h", port: 1, addresses: [], interfaceIndex: 0)
        #expect(upper.peerID == Self.peer)
    }

    static func hexBytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        let bytes = stride(from: 0, to: digits.count, by: 2).compactMap { index in
            UInt8(String(decoding: digits[index ..< index + 2], as: UTF8.self), radix: 16)
        }
        return bytes.count * 2 == digits.count ? bytes : nil
    }
}
