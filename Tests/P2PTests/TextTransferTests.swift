import Foundation
import Testing

@testable import P2P

/// `p2p send --text`: what may be sent as a text, what a receiver refuses unasked, and what reaches its screen.
@Suite("Text messages")
struct TextTransferTests {
    let alice = PeerInfo(id: PeerID(hex: "fedcba9876543210fedcba9876543210")!, displayName: "alice", sessionID: "files")

    func offer(size: UInt64, mediaType: String = TextTransfer.mediaType, tree: Bool = false) -> TransferInfo {
        var info = TransferInfo(id: 1, peer: alice, name: "text.txt", size: size, mediaType: mediaType, direction: .receiving)
        info.isTree = tree
        return info
    }

    @Test func aTextUpTo64KiBOfUTF8MayBeSentAndNothingElse() {
        #expect(TextTransfer.problem(with: Data("héllo\n".utf8)) == nil)
        #expect(TextTransfer.problem(with: Data(repeating: 0x61, count: 64 << 10)) == nil)
        #expect(TextTransfer.problem(with: Data()) == "the text is empty; nothing was sent")
        #expect(TextTransfer.problem(with: Data(repeating: 0x61, count: (64 << 10) + 1))?.contains("save it to a file and send the file") == true)
        #expect(TextTransfer.problem(with: Data([0xFF, 0xFE])) == "the text is not UTF-8; send it as a file")
    }

    @Test func onlyAnOfferOfTheTextTypeIsATextAndOneOver64KiBIsRefused() {
        #expect(TextTransfer.isText(offer(size: 5)))
        #expect(!TextTransfer.isText(offer(size: 5, mediaType: "text/plain")))
        #expect(!TextTransfer.isText(offer(size: 5, tree: true)))
        #expect(TextTransfer.refusal(of: offer(size: 64 << 10)) == nil)
        #expect(TextTransfer.refusal(of: offer(size: (64 << 10) + 1))?.contains("send it as a file") == true)
    }

    @Test func linesTabsAndOtherScriptsAreKeptEscapesAreNot() {
        #expect(TextTransfer.printable(Data("one\ttwo\nüñï 日本\n".utf8)) == "one\ttwo\nüñï 日本\n")
        #expect(TextTransfer.printable(Data("a\r\nb".utf8)) == "a\nb")
        #expect(TextTransfer.printable(Data("red \u{1B}[31mX\u{1B}]52;c;aGk=\u{07} \r".utf8)) == "red \u{FFFD}[31mX\u{FFFD}]52;c;aGk=\u{FFFD} \u{FFFD}")
        #expect(TextTransfer.printable(Data([0x61, 0xFF, 0x62])) == "a\u{FFFD}b")
    }

    @Test func anArrivedTextIsReadAndItsFolderRemoved() throws {
        let url = try TextTransfer.makeDestination()
        try Data("hi".utf8).writeUnsynced(to: url)
        let delivery = Delivery(name: "text.txt", size: 2, sha256: "", resumedFrom: 0, url: url)
        #expect(TextTransfer.take(delivery) == Data("hi".utf8))
        #expect(!FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path))
    }
}

/// `Protocol/vectors/text.json` (written by `Protocol/tools/gen_text_vectors.py`): how a text is shown,
/// which media types make an offer a text (compared byte for byte), which sizes are refused unasked.
@Suite struct TextVectorTests {
    struct Vectors: Decodable {
        struct Display: Decodable { var name: String; var hex: String; var shown: String }
        struct MediaType: Decodable { var mediaType: String; var isText: Bool }
        struct Size: Decodable { var size: UInt64; var refused: Bool }
        var display: [Display]
        var mediaTypes: [MediaType]
        var sizes: [Size]
    }

    static let vectors: Vectors? = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Protocol/vectors/text.json")
        return try? JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()

    static func offer(_ mediaType: String, size: UInt64 = 5) -> TransferInfo {
        TransferInfo(id: 1, peer: PeerInfo(id: PeerID(bytes: Array(repeating: 9, count: 16)), displayName: "alice", sessionID: "s"),
                     name: "text.txt", size: size, mediaType: mediaType, direction: .receiving)
    }

    @Test func aTextIsShownAsTheVectorsSay() throws {
        let vectors = try #require(Self.vectors)
        #expect(vectors.display.count >= 15)
        for vector in vectors.display {
            let bytes = try #require(ChannelVectorTests.bytes(hex: vector.hex))
            #expect(TextTransfer.printable(Data(bytes)) == vector.shown, "\(vector.name)")
        }
    }

    @Test func onlyTheExactMediaTypeIsAText() throws {
        let vectors = try #require(Self.vectors)
        for vector in vectors.mediaTypes {
            #expect(TextTransfer.isText(Self.offer(vector.mediaType)) == vector.isText, "\(vector.mediaType)")
        }
    }

    @Test func aTextOverTheLimitIsRefusedUnasked() throws {
        let vectors = try #require(Self.vectors)
        for vector in vectors.sizes {
            #expect((TextTransfer.refusal(of: Self.offer(TextTransfer.mediaType, size: vector.size)) != nil) == vector.refused, "\(vector.size)")
        }
    }
}
