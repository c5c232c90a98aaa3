import Foundation
import Testing
@testable import P2PCLI

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
            ["event": "error", "message": "quote \" backslash \\ tab \t newline \n bell \u{07} del \u{7F} é 🙂 ‏", "nested": ["b": [1, 2, 3], "a": true]],
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
}
