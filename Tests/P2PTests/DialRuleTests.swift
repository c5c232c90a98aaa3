import Foundation
import Testing

@testable import P2P

/// One entry of `Protocol/vectors/dial.json`: which of two instance names dials the other.
struct DialVector: Decodable, Sendable, CustomTestStringConvertible {
    var a: String
    var b: String
    /// "a", "b", or "both" (names equal but for ASCII case).
    var dialer: String
    var testDescription: String { "\(a) / \(b)" }
}

@Suite("Who dials in a room")
struct DialRuleTests {
    static let vectors: [DialVector] = (try? ProtocolVectorTests.load("dial.json")) ?? []

    @Test func vectorsLoad() throws {
        let vectors: [DialVector] = try ProtocolVectorTests.load("dial.json")
        #expect(vectors.count >= 10)
        #expect(Set(vectors.map(\.dialer)) == ["a", "b", "both"])
    }

    @Test(arguments: vectors)
    func vector(_ vector: DialVector) {
        #expect(DialRule.dials(name: vector.a, other: vector.b) == (vector.dialer != "b"))
        #expect(DialRule.dials(name: vector.b, other: vector.a) == (vector.dialer != "a"))
    }

    /// Each of 32 hosts dials about half the others, not the lowest name all of them: the busiest host
    /// of a room is what its mesh waits for.
    @Test func inARoomOf32EachHostDialsAboutHalf() {
        let names = (1 ... 32).map { String(format: "host%02d", $0) }
        for name in names {
            let dialled = names.filter { $0 != name && DialRule.dials(name: name, other: $0) }.count
            #expect((6 ... 25).contains(dialled), "\(name) dials \(dialled) of 31")
        }
    }

    @Test func anOlderPeerDecidesByTheLowerID() {
        let low = PeerID(hex: "00000000000000000000000000000001")!, high = PeerID(hex: "ff000000000000000000000000000000")!
        var older = PeerInfo(id: high, displayName: "bob", sessionID: "chat")
        // "alice" dials "bob" by the names, but an older bob knows only IDs: the lower one dials.
        #expect(DialRule.dials(name: "alice", other: "bob"))
        #expect(DialRule.dials(localID: low, localName: "alice", older))
        #expect(!DialRule.dials(localID: high, localName: "alice", PeerInfo(id: low, displayName: "bob", sessionID: "chat")))
        older.dialsByName = true
        #expect(DialRule.dials(localID: low, localName: "alice", older))
        #expect(!DialRule.dials(localID: low, localName: "bob", PeerInfo(id: high, displayName: "alice", sessionID: "chat", dialsByName: true)))
    }
}

private extension PeerInfo {
    init(id: PeerID, displayName: String, sessionID: String, dialsByName: Bool) {
        self.init(id: id, displayName: displayName, sessionID: sessionID)
        self.dialsByName = dialsByName
    }
}
