import Foundation
import Testing
import P2P

/// Tab in a chat's input line, as the library completes it (`ChatCompletion`): names of the room and
/// paths, with the directory listing passed in, so no disk and no terminal.
@Suite struct ChatCompletionModelTests {
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
}
