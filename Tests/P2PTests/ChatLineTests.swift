import Foundation
import Testing
@testable import P2P

/// What a chat line's text means (`/me`, `/private`), and who it calls for (`p2p chat --bell`).
@Suite struct ChatLineTests {
    @Test func markersAreReadAndWrittenBack() {
        #expect(ChatLine(text: "/me waves") == ChatLine(kind: .action, body: "waves"))
        #expect(ChatLine(text: "/private see you at 5") == ChatLine(kind: .privateLine, body: "see you at 5"))
        #expect(ChatLine(text: "hello") == ChatLine(kind: .said, body: "hello"))
        // Without the space it is no marker: "/meh" and "/privately" are plain lines.
        #expect(ChatLine(text: "/meh").kind == .said)
        #expect(ChatLine(text: "/privately").kind == .said)
        for text in ["/me waves", "/private hi", "plain", ""] { #expect(ChatLine(text: text).text == text) }
    }

    @Test func aMentionIsTheNameAsAWordInAnyCase() {
        #expect(ChatLine(text: "Bob, look at this").mentions("bob"))
        #expect(ChatLine(text: "hi @bob!").mentions("bob"))
        #expect(ChatLine(text: "ask BOB").mentions("bob"))
        #expect(ChatLine(text: "/me pokes bob").mentions("bob"))
        #expect(ChatLine(text: "bobby bob_2 kebob").mentions("bob") == false)
        #expect(ChatLine(text: "bobby and then bob").mentions("bob"))
        #expect(ChatLine(text: "Dr. Who is here").mentions("dr. who"))
        #expect(ChatLine(text: "anything").mentions("") == false)
    }

    @Test func privateLinesAndMentionsWantAttention() {
        #expect(ChatLine(text: "/private lunch?").wantsAttention(of: "bob"))
        #expect(ChatLine(text: "lunch, bob?").wantsAttention(of: "bob"))
        #expect(ChatLine(text: "lunch anyone?").wantsAttention(of: "bob") == false)
    }

    @Test func filesAreKeptAmongTheImagesAndToldApart() throws {
        let path = TestFiles.databaseDirectory().appendingPathComponent("p2p-history-\(UUID().uuidString)/history.sqlite").path
        let history = try ChatHistory(path: path)
        let bob = PeerInfo(id: PeerID(hex: "0123456789abcdef0123456789abcdef")!, displayName: "bob", sessionID: "chat")
        try history.recordFile(named: "notes.txt", mediaType: "text/plain", path: "/dl/notes.txt", direction: .received, peer: bob)
        let stored = try history.images(with: bob.id)
        #expect(stored.map(\.name) == ["notes.txt"])
        #expect(stored.first?.isImage == false)
        #expect(stored.first?.mediaType == "text/plain")
    }
}
