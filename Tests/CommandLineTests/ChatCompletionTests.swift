import Foundation
@testable import P2P
import Testing
@testable import P2PCLI

/// Tab in the chat's input line as the terminal takes it: the editor takes the completed line, Tab is a key
/// (what completes is the library's: P2PTests/ChatCompletionModelTests).
@Suite struct ChatCompletionTests {
    let names = ["bob", "bobby", "carol"]

    @Test func theEditorTakesTheCompletedLine() {
        var editor = LineEditor()
        for character in "/msg ca" { _ = editor.apply(.character(character)) }
        #expect(editor.apply(.tab) == .edited)
        #expect(editor.line == "/msg ca")
        let done = ChatCompletion.complete(editor.text, cursor: editor.cursor, names: names) { _ in nil }
        editor.replace(text: done.text, cursor: done.cursor)
        #expect(editor.line == "/msg carol ")
        #expect(editor.cursor == 11)
    }

    @Test func tabIsAKey() {
        var decoder = KeyDecoder()
        #expect(decoder.feed(0x09) == [.tab])
    }
}

/// What a chat line means, and how chat and `p2p history` show it.
@Suite struct ChatLineViewTests {
    @Test func fileIsACommand() {
        #expect(ChatInput.parse("/file ~/notes.txt") == .file(path: "~/notes.txt"))
        #expect(ChatInput.parse("/file") == .mistake("/file wants a path: /file ~/notes.txt"))
    }

    @Test func linesShowTheirKind() {
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        let clock = ChatClock.time(time)
        #expect(strip(ChatView.format("/me waves", by: "alice", at: time)) == "[\(clock)] * alice waves")
        #expect(strip(ChatView.format("/private hi", by: "alice", at: time)) == "[\(clock)] [private] alice> hi")
        #expect(strip(ChatView.format("hi", by: "alice", at: time)) == "[\(clock)] alice> hi")
        #expect(strip(HistoryItem.describe(ChatLine(text: "/me waves"), by: "alice")) == "* alice waves")
        #expect(strip(HistoryItem.describe(ChatLine(text: "/private hi"), by: "me")) == "[private] hi")
    }

    @Test func datesHaveOneFormat() {
        let formatted = ChatClock.dateAndTime(Date(timeIntervalSince1970: 1_700_000_000))
        #expect(formatted.wholeMatch(of: /\d{4}-\d\d-\d\d \d\d:\d\d/) != nil)
        #expect(ChatClock.time(Date()).wholeMatch(of: /\d\d:\d\d/) != nil)
    }

    @Test func historyNamesFilesAndImages() {
        let bob = PeerID(hex: "0123456789abcdef0123456789abcdef")!
        var file = ChatImageEntry(sequence: 1, peer: bob, peerName: PeerText("bob"), direction: .received, name: "notes.txt",
                                  path: "/dl/notes.txt", mediaType: "text/plain", width: 0, height: 0, at: Date())
        #expect(strip(HistoryItem.describe(file)) == "[file] notes.txt /dl/notes.txt")
        (file.mediaType, file.width, file.height, file.name, file.path) = ("image/png", 2, 3, "cat.png", "/dl/cat.png")
        #expect(strip(HistoryItem.describe(file)) == "[image] cat.png (2×3) /dl/cat.png")
    }
}

/// The text without colour sequences (a test run from a terminal paints).
private func strip(_ text: String) -> String {
    text.replacing(/\u{1B}\[[0-9;]*m/, with: "")
}
