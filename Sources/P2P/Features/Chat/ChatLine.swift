import Foundation

/// What a chat line's text means. TEXT carries plain text; `p2p chat` marks two kinds of line inside it,
/// as IRC does, so no wire change was needed and an older chat shows the marker as text:
/// `/me waves` is an action ("* alice waves"), `/private hi` a line sent to one member only (`/msg`).
public struct ChatLine: Sendable, Equatable {
    /// What kind of line it is.
    public enum Kind: String, Sendable {
        /// An ordinary line.
        case said
        /// `/me waves`: shown as "* alice waves".
        case action
        /// A `/msg` line: only its one receiver got it.
        case privateLine = "private"
    }

    public var kind: Kind
    /// The line without its marker. Peer text: sanitise it before printing.
    public var body: String

    static let actionMarker = "/me "
    static let privateMarker = "/private "

    public init(kind: Kind, body: String) {
        self.kind = kind
        self.body = body
    }

    /// Reads the marker of a TEXT's text.
    public init(text: String) {
        if text.hasPrefix(Self.actionMarker) {
            self.init(kind: .action, body: String(text.dropFirst(Self.actionMarker.count)))
        } else if text.hasPrefix(Self.privateMarker) {
            self.init(kind: .privateLine, body: String(text.dropFirst(Self.privateMarker.count)))
        } else {
            self.init(kind: .said, body: text)
        }
    }

    /// The text a TEXT carries for this line.
    public var text: String {
        switch kind {
        case .said: body
        case .action: Self.actionMarker + body
        case .privateLine: Self.privateMarker + body
        }
    }

    /// Whether the line names `name` as a word, in any case: "Bob, look" and "hi @bob!" mention bob,
    /// "bobby" does not. An empty name is never mentioned.
    public func mentions(_ name: String) -> Bool {
        let name = name.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return false }
        var searchRange = body.startIndex..<body.endIndex
        while let found = body.range(of: name, options: [.caseInsensitive], range: searchRange) {
            let before = found.lowerBound == body.startIndex ? nil : body[body.index(before: found.lowerBound)]
            let after = found.upperBound == body.endIndex ? nil : body[found.upperBound]
            if !Self.isWordCharacter(before) && !Self.isWordCharacter(after) { return true }
            searchRange = body.index(after: found.lowerBound)..<body.endIndex
        }
        return false
    }

    /// Whether the person called `name` should be alerted (`p2p chat --bell`): the line is private
    /// to them, or mentions them.
    public func wantsAttention(of name: String) -> Bool {
        kind == .privateLine || mentions(name)
    }

    private static func isWordCharacter(_ character: Character?) -> Bool {
        guard let character else { return false }
        return character.isLetter || character.isNumber || character == "_"
    }
}
