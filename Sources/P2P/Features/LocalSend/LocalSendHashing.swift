@preconcurrency import Crypto
import Foundation

/// SHA-256 of what p2p sends to a LocalSend device, computed on a queue of its own (a large file takes
/// seconds; the cooperative pool is never held by it).
enum LocalSendHashing {
    private static let queue = DispatchQueue(label: "p2p.localsend.hash", attributes: .concurrent)

    /// Lower-case hex SHA-256 of the file's bytes.
    static func sha256(of url: URL) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    let handle = try FileHandle(forReadingFrom: url)
                    defer { try? handle.close() }
                    var hasher = SHA256()
                    while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty { hasher.update(data: block) }
                    continuation.resume(returning: Array(hasher.finalize()).hex)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// SHA-256 of bytes in memory (a text).
    static func sha256(_ bytes: Data) -> [UInt8] { Array(SHA256.hash(data: bytes)) }
}
