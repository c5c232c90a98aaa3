import Foundation
@testable import P2P
import Testing

/// `--json` events are written without Foundation's object graph; they must read the same as what
/// `JSONSerialization` (sorted keys, slashes unescaped) wrote before.
@Suite struct JSONLineTests {
    static func foundation(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    @Test func eventsReadAsJSONSerializationWroteThem() throws {
        let events: [[String: Any]] = [
            ["event": "file-received", "name": "many/a b/c.txt", "size": UInt64(4096), "already-there": false, "peer": "bob",
             "path": "/tmp/in/many/a b/c.txt", "resumed-from": 0],
            ["event": "tree-finished", "files": 10_000, "verified": 9_998, "failed": 2, "bytes-per-second": Int64(123_456_789)],
            ["event": "error", "message": "quote \" backslash \\ tab \t newline \n bell \u{07} é 🙂 ‏", "nested": ["b": [1, 2, 3], "a": true]],
            ["event": "records", "errors": [["entity": "task", "rule": "max"], ["entity": "note", "rule": "required"]], "empty": [String]()],
        ]
        for event in events {
            let ours = try #require(JSONLine.encode(event))
            #expect(ours == (try Self.foundation(event)))
            // And it parses back to the same object.
            let parsed = try JSONSerialization.jsonObject(with: Data(ours.utf8)) as? NSDictionary
            #expect(parsed == (event as NSDictionary))
        }
    }

    @Test func missingValuesAreNullAndNonFiniteNumbersAreNoJSON() {
        let absent: String? = nil
        let present: String? = "x"
        #expect(JSONLine.encode(["a": absent as Any, "b": present as Any]) == #"{"a":null,"b":"x"}"#)
        #expect(JSONLine.encode(["rate": Double.infinity]) == nil)
        #expect(JSONLine.encode(["rate": 2.5, "whole": 3.0]) == #"{"rate":2.5,"whole":3}"#)
    }

    /// A peer's name in a `--json` line is its exact text, and a terminal showing the line obeys none of its
    /// controls: DEL, C1, separators and bidi controls are `\u` escapes (Foundation would write them raw).
    @Test func whatATerminalWouldObeyIsEscapedAndTheValueKept() throws {
        let hostile = "name \u{1B}]0;t\u{07} del \u{7F} c1 \u{9B}2J bidi \u{202E} sep \u{2028} fine … é ‏"
        let line = try #require(JSONLine.encode(["peer": PeerText(hostile), "plain": hostile]))
        #expect(!line.unicodeScalars.contains(where: PeerText.isUnsafe), "\(line.debugDescription)")
        #expect(line.contains(#"\u009b"#) && line.contains(#"\u202e"#) && line.contains(#"\u007f"#))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(parsed["peer"] == hostile)
        #expect(parsed["plain"] == hostile)
    }
}
