import Testing

@testable import P2P

/// Text a peer chose reaches a screen only sanitized: every error that carries a peer's reason or name
/// prints it with its controls replaced, and keeps the rest of it.
@Suite("Peer text")
struct PeerTextTests {
    /// A window title (OSC 0), a cleared screen (CSI 2J), a clipboard write (OSC 52), a C1 CSI (U+009B),
    /// a bidi override, a newline that would forge a line of its own.
    static let hostile = "bye \u{1B}]0;owned\u{07}\u{1B}[2J\u{1B}]52;c;ZXZpbA==\u{07}\u{9B}31m\u{202E}txt.exe\nalice: fake line"

    static func isObeyedByATerminal(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || [0x2028, 0x2029].contains(scalar.value)
            || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    static func check(_ printed: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!printed.unicodeScalars.contains(where: isObeyedByATerminal), "\(printed.debugDescription)", sourceLocation: sourceLocation)
        for word in ["owned", "ZXZpbA==", "txt.exe", "alice: fake line"] {
            #expect(printed.contains(word), "nothing but the controls is lost: \(word)", sourceLocation: sourceLocation)
        }
    }

    @Test func printingGivesTheSanitizedFormAndRawKeepsTheBytes() {
        let text = PeerText(Self.hostile)
        Self.check("\(text)")
        #expect(text.raw == Self.hostile)
        #expect(PeerText.sanitized("plain ünïcode ✓") == "plain ünïcode ✓")
    }

    @Test func everyErrorThatCarriesPeerTextPrintsItSanitized() {
        let text = PeerText(Self.hostile)
        let id = PeerID(bytes: Array(repeating: 7, count: 16))
        let errors: [any Error & CustomStringConvertible] = [
            SessionError.remoteError(code: 1, reason: text),
            SessionError.denied(by: text),
            SessionError.refusedAsUntrusted(text),
            SessionError.refusedAsUnexpected(text),
            SessionError.sessionMismatch(theirs: text, ours: "chat"),
            SessionError.untrustedIdentity(name: text, pinned: id, presented: id),
            SessionError.contextNotSupported(by: text),
            SessionError.connectFailed(peer: text, attempts: []),
            TransferError.denied(text),
            TransferError.cancelledByPeer(text),
            TransferError.unsafeName(text, "control characters"),
            TransferError.notTheOfferedType(name: text, offered: text, found: nil),
            TransferError.peerTooOld(text, capability: "channel transfers"),
            TransferError.filesFailed(count: 2, first: text),
            TransferError.untruthfulOffer(peer: text, "the total is not the sum of the files"),
            TransferError.skipped(text, "a hidden path"),
            StreamError.denied(text),
            StreamError.cancelledByPeer(text),
            StreamError.notSupported(peer: text),
        ]
        for error in errors { Self.check(error.description) }
    }

    @Test func aPeersNameAndSessionIDPrintSanitizedAndCompareExactly() {
        let peer = PeerInfo(id: PeerID(bytes: Array(repeating: 7, count: 16)), displayName: Self.hostile, sessionID: Self.hostile)
        Self.check("\(peer.displayName) in \(peer.sessionID)")
        #expect(peer.displayName.raw == Self.hostile)
        #expect(peer.sessionID == PeerText(Self.hostile))
    }
}
