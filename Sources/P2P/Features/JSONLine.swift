import Foundation

/// The JSON text of one event of a `--json` line protocol (README's "JSON events", the command line's
/// scripting contract): keys sorted, slashes as they are, as `JSONSerialization` writes it with
/// `.sortedKeys` and `.withoutEscapingSlashes`, but written directly. ``PeerText`` is written as the
/// peer's exact text, and every character a terminal would obey (``PeerText/isUnsafe(_:)``) as a `\u`
/// escape, so a line shown on a terminal stays harmless. A tree of 10,000 files prints an
/// event per file on each side, and going through Foundation's object graph doubled the time of such
/// a transfer.
public enum JSONLine {
    /// The object as one line, nil when a value is not JSON (a number that is not finite, say).
    public static func encode(_ object: [String: Any]) -> String? {
        var text = ""
        text.reserveCapacity(256)
        return append(object, to: &text) ? text : nil
    }

    private static func append(_ value: Any, to text: inout String) -> Bool {
        switch value {
        case let string as String: appendString(string, to: &text)
        // The peer's exact text: the escapes below keep it exact and keep a terminal from obeying it.
        case let peerText as PeerText: appendString(peerText.raw, to: &text)
        case let bool as Bool: text += bool ? "true" : "false"
        case let number as Int: text += String(number)
        case let number as Int64: text += String(number)
        case let number as UInt64: text += String(number)
        case let number as UInt32: text += String(number)
        case let number as Int32: text += String(number)
        case let number as UInt16: text += String(number)
        case let number as UInt8: text += String(number)
        case let number as Double:
            guard number.isFinite else { return false }
            // Whole numbers as integers, as JSONSerialization writes them.
            text += number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case let object as [String: Any]:
            text += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                appendString(key, to: &text)
                text += ":"
                guard append(object[key]!, to: &text) else { return false }
            }
            text += "}"
        case let array as [Any]:
            text += "["
            for (index, element) in array.enumerated() {
                if index > 0 { text += "," }
                guard append(element, to: &text) else { return false }
            }
            text += "]"
        case is NSNull: text += "null"
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else {
                    text += "null"
                    return true
                }
                return append(wrapped, to: &text)
            }
            // Anything else (NSNumber from Foundation, say) goes through JSONSerialization.
            guard let data = try? JSONSerialization.data(withJSONObject: [value], options: [.withoutEscapingSlashes]) else { return false }
            text += String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
        }
        return true
    }

    private static func appendString(_ string: String, to text: inout String) {
        text += "\""
        // Most strings (names, paths, digests) need no escape: those go in whole, not scalar by scalar.
        // 0xC2 and 0xE2 lead the UTF-8 of C1 controls, line separators and bidi controls (and of harmless
        // characters, which then take the slow path).
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += string
            text += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            // C0, DEL, C1, line and paragraph separators, bidi controls: written as \u escapes, so the line
            // is the same JSON and a terminal showing it obeys none of them.
            case _ where PeerText.isUnsafe(scalar):
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
