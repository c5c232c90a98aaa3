import Foundation
@testable import P2P
import Testing
@testable import P2PCLI

/// Tab in the chat's input line: names of the room and paths, without a terminal.
@Suite struct ChatCompletionTests {
    let names = ["bob", "bobby", "carol"]
    let disk: [String: [ChatCompletion.Entry]] = [
        ".": [.init(name: "notes.txt", isDirectory: false), .init(name: "pics", isDirectory: true), .init(name: ".hidden", isDirectory: false)],
        "pics/": [.init(name: "cat.png", isDirectory: false), .init(name: "car.png", isDirectory: false)],
    ]

    func tab(_ line: String, cursor: Int? = nil) -> ChatCompletion {
        ChatCompletion.complete(Array(line), cursor: cursor ?? line.count, names: names) { disk[$0] }
    }

    @Test func aUniquePrefixCompletesTheNameAndASpace() {
        #expect(String(tab("/msg ca").text) == "/msg carol ")
        #expect(tab("/msg ca").cursor == 11)
        #expect(String(tab("hi @ca").text) == "hi @carol ")
        #expect(String(tab("CA").text) == "carol ")
        #expect(String(tab("thanks ca").text) == "thanks carol ")
    }

    @Test func severalExtendToWhatTheyShareThenAreListed() {
        let first = tab("/msg b")
        #expect(String(first.text) == "/msg bob")
        #expect(first.listed.isEmpty)
        let second = tab("/msg bob")
        #expect(String(second.text) == "/msg bob")
        #expect(second.listed == ["bob", "bobby"])
        #expect(tab("/msg ").listed == ["bob", "bobby", "carol"])
    }

    @Test func nothingFitsOrNoWordLeavesTheLine() {
        #expect(String(tab("zz").text) == "zz")
        #expect(tab("zz").listed.isEmpty)
        #expect(String(tab("hi ").text) == "hi ")
        #expect(String(tab("/ms").text) == "/ms")
    }

    @Test func theWordBeforeTheCursorIsCompletedInPlace() {
        let done = tab("ca is here", cursor: 2)
        #expect(String(done.text) == "carol  is here")
        #expect(done.cursor == 6)
    }

    @Test func pathsAfterImageAndFileDirectoriesGetASlash() {
        #expect(String(tab("/file no").text) == "/file notes.txt ")
        #expect(String(tab("/image pi").text) == "/image pics/")
        #expect(String(tab("/image pics/c").text) == "/image pics/ca")
        #expect(tab("/image pics/ca").listed == ["car.png", "cat.png"])
        #expect(String(tab("/image pics/cat").text) == "/image pics/cat.png ")
        // Hidden files only when the word starts with a dot; names are not paths.
        #expect(tab("/file ").listed == ["notes.txt", "pics/"])
        #expect(String(tab("/file .h").text) == "/file .hidden ")
        #expect(String(tab("/file bo").text) == "/file bo")
        #expect(String(tab("/file nowhere/x").text) == "/file nowhere/x")
    }

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
