import Foundation
@testable import P2P
import Testing
@testable import P2PCLI

/// What a typed chat line asks for.
@Suite struct ChatInputTests {
    @Test func linesCommandsAndMistakes() {
        #expect(ChatInput.parse("hello") == .text("hello"))
        #expect(ChatInput.parse("42") == .text("42"))
        #expect(ChatInput.parse("//etc/hosts is a file") == .text("/etc/hosts is a file"))
        #expect(ChatInput.parse("/msg bob see you at 5") == .privateMessage(to: "bob", text: "see you at 5"))
        #expect(ChatInput.parse("/me waves") == .action("waves"))
        #expect(ChatInput.parse("/image ~/cat.png") == .image(path: "~/cat.png"))
        #expect(ChatInput.parse("/quit") == .quit)
        #expect(ChatInput.parse("") == .nothing)
        for mistake in ["/foo", "/image", "/image   ", "/msg bob", "/me"] {
            guard case .mistake = ChatInput.parse(mistake) else { Issue.record("\(mistake) must be refused, not sent"); continue }
        }
    }
}
