import Foundation

/// A short text sent as a transfer (`p2p send --text`): a one-file OFFER whose media type is
/// ``mediaType`` (TRANSFER.md, "Texts"). No new message: the receiver is asked as for any file, the
/// bytes are verified by SHA-256 the same way, and an older receiver simply stores it as a file.
public enum TextTransfer {
    /// The media type that marks an offer as a text to show rather than a file to keep.
    public static let mediaType = "text/vnd.p2p.text; charset=utf-8"
    /// The name it is offered under (what an older receiver stores it as).
    public static let fileName = "text.txt"
    /// The most bytes a text may have: beyond that, it is a file.
    public static let byteLimit = 64 << 10

    /// Whether an offer is a text.
    public static func isText(_ info: TransferInfo) -> Bool { !info.isTree && info.mediaType == mediaType }

    /// Why `text` cannot be sent as a text (empty, too long, not UTF-8), or nil when it can.
    public static func problem(with bytes: Data) -> String? {
        if bytes.isEmpty { return "the text is empty; nothing was sent" }
        if bytes.count > byteLimit {
            return "the text has \(ByteCount.describe(UInt64(bytes.count))), more than a text's \(ByteCount.describe(UInt64(byteLimit))); "
                + "save it to a file and send the file"
        }
        if String(data: bytes, encoding: .utf8) == nil { return "the text is not UTF-8; send it as a file" }
        return nil
    }

    /// Why an offered text is refused before anyone is asked (too big to be one), or nil.
    public static func refusal(of info: TransferInfo) -> String? {
        info.size > UInt64(byteLimit) ? "a text of more than \(ByteCount.describe(UInt64(byteLimit))) is not taken; send it as a file" : nil
    }

    /// Where an incoming text is written: ``fileName`` in a new folder under the temporary directory (a
    /// text never lands in the download directory, so no option there, `overwrite` included, applies to it).
    static func destination() throws(TransferError) -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-text-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(folder.path, "\(error)")
        }
        return folder.appendingPathComponent(fileName)
    }

    /// The bytes of a text that arrived (`TransferEvent.finished` of a text offer), read at most up to
    /// ``byteLimit``; its folder is removed. Nil if it cannot be read.
    public static func take(_ delivery: Delivery) -> Data? {
        guard let url = delivery.url else { return nil }
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        guard let reader = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? reader.close() }
        return try? reader.read(upToCount: byteLimit) ?? Data()
    }

    /// A peer's text as it may be printed: lines and tabs kept (a CR LF is a line break), every other
    /// character a terminal would obey replaced as ``PeerText/sanitized(_:)`` does; bytes that are not
    /// UTF-8 are replaced by U+FFFD.
    public static func printable(_ bytes: Data) -> String {
        let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.split(separator: "\t", omittingEmptySubsequences: false).map { PeerText.sanitized(String($0)) }.joined(separator: "\t") }
            .joined(separator: "\n")
    }
}
