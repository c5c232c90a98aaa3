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

    /// Where an offered text would land, for the question: nothing is made until it is accepted
    /// (`makeDestination()`), so an offer that is denied, withdrawn or never answered leaves nothing.
    static func plannedDestination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("p2p-text-XXXXXX", isDirectory: true).appendingPathComponent(fileName)
    }

    /// Where an accepted text is written: ``fileName`` in a new private folder under the temporary
    /// directory (a text never lands in the download directory, so no option there, `overwrite`
    /// included, applies to it). The folder is 0700 and the file is made 0600: a text is often a
    /// clipboard's content, and other users of the machine must not read it. It is removed when the
    /// text is taken, when the transfer fails, and at the latest when the process exits.
    static func makeDestination() throws(TransferError) -> URL {
        try PrivateFolder.make(prefix: "p2p-text-").appendingPathComponent(fileName)
    }

    /// Writes a text to send in a new private folder (0700, the file 0600) and returns the file; the
    /// folder goes with `discard(_:)`, and at the latest when the process exits.
    public static func stage(_ bytes: Data) throws(TransferError) -> URL {
        let url = try makeDestination()
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            discard(url)
            throw .unwritable(url.path, reason)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: bytes)
            try handle.close()
        } catch {
            discard(url)
            throw .unwritable(url.path, "\(error)")
        }
        return url
    }

    /// Removes the private folder of a text (its file and any `.part` beside it).
    public static func discard(_ url: URL) {
        PrivateFolder.remove(url.deletingLastPathComponent())
    }

    /// The bytes of a text that arrived (`TransferEvent.finished` of a text offer), read at most up to
    /// ``byteLimit``; its folder is removed. Nil if it cannot be read.
    public static func take(_ delivery: Delivery) -> Data? {
        guard let url = delivery.url else { return nil }
        defer { discard(url) }
        guard let reader = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? reader.close() }
        return try? reader.read(upToCount: byteLimit) ?? Data()
    }

    /// A peer's text as it may be printed (`Protocol/TRANSFER.md`, "Texts"; `vectors/text.json`): bytes
    /// that are not UTF-8 become U+FFFD (one per maximal ill-formed subsequence); a CR LF becomes a LF;
    /// LF and TAB stay; every other character a terminal would obey (``PeerText/isUnsafe(_:)``: C0, DEL,
    /// C1, U+2028/U+2029, bidi overrides and isolates; a lone CR included) becomes U+FFFD. Scalar by
    /// scalar, so that "\r\r\n" keeps its line break (as characters, "\r\n" is one and a split at "\n"
    /// would miss it).
    public static func printable(_ bytes: Data) -> String {
        let scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        var shown = String.UnicodeScalarView()
        for (position, scalar) in scalars.enumerated() {
            if scalar == "\r", position + 1 < scalars.count, scalars[position + 1] == "\n" { continue }
            shown.append(scalar == "\n" || scalar == "\t" || !PeerText.isUnsafe(scalar) ? scalar : "\u{FFFD}")
        }
        return String(shown)
    }
}
