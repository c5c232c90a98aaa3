import Foundation
import NIOConcurrencyHelpers

/// Folders of our own under the temporary directory (texts on their way in or out): made 0700 by
/// mkdtemp(3), so no other user reads or plants anything in them, and removed when done or, at the
/// latest, when the process exits (`exit`, Ctrl-C through the CLI's handler, the end of `main`).
enum PrivateFolder {
    private static let live = NIOLockedValueBox<Set<String>>([])
    private static let cleanupAtExit: Void = { atexit { PrivateFolder.removeAll() } }()

    /// A new folder `prefix` + six random characters, 0700.
    static func make(prefix: String) throws(TransferError) -> URL {
        _ = cleanupAtExit
        let template = FileManager.default.temporaryDirectory.appendingPathComponent(prefix + "XXXXXX").path
        var bytes = Array(template.utf8CString)
        let made: String? = bytes.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let made else { throw .unwritable(template, String(cString: strerror(errno))) }
        live.withLockedValue { _ = $0.insert(made) }
        return URL(fileURLWithPath: made, isDirectory: true)
    }

    /// Removes `folder` and what is in it (a text, a `.part`).
    static func remove(_ folder: URL) {
        let path = folder.standardizedFileURL.path
        try? FileManager.default.removeItem(atPath: path)
        live.withLockedValue { _ = $0.remove(path) }
    }

    /// Every folder still here: at exit.
    static func removeAll() {
        for path in live.withLockedValue({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
