import Crypto
import Foundation

/// What a verified, encrypted transfer must spend on cryptography alone, per GiB, on one core: SHA-256,
/// AES-128-GCM and ChaCha20-Poly1305 over `mebibytes` of memory in 1 MiB pieces (the transfer's chunk),
/// with the library p2p itself uses (swift-crypto on BoringSSL). Each figure is the median of `runs`, in
/// CPU seconds of the measuring thread per GiB.
public struct CryptoBench: Sendable {
    /// One primitive's cost.
    public struct Figure: Sendable {
        /// "SHA-256", "AES-128-GCM seal", …
        public var name: String
        /// Its key in the JSON object: `sha256_cpu_s_per_gib`, …
        public var key: String
        public var cpuSecondsPerGiB: Double
    }

    public let mebibytes: Int
    public let runs: Int

    public init(mebibytes: Int, runs: Int) {
        self.mebibytes = mebibytes
        self.runs = runs
    }

    /// Measures each primitive.
    public func measure() throws -> [Figure] {
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        for index in piece.indices { piece[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
        let pieces = mebibytes
        let aesKey = SymmetricKey(size: .bits128), chachaKey = SymmetricKey(size: .bits256)
        return try [
            Figure(name: "SHA-256", key: "sha256_cpu_s_per_gib", cpuSecondsPerGiB: median {
                var hasher = SHA256()
                for _ in 0..<pieces { hasher.update(data: piece) }
                _ = hasher.finalize()
            }),
            Figure(name: "AES-128-GCM seal", key: "aes128gcm_cpu_s_per_gib", cpuSecondsPerGiB: median {
                for _ in 0..<pieces { _ = try AES.GCM.seal(piece, using: aesKey) }
            }),
            Figure(name: "ChaCha20-Poly1305 seal", key: "chacha20poly1305_cpu_s_per_gib", cpuSecondsPerGiB: median {
                for _ in 0..<pieces { _ = try ChaChaPoly.seal(piece, using: chachaKey) }
            }),
        ]
    }

    /// The median CPU time of `body` over `runs`, scaled to seconds per GiB.
    private func median(_ body: () throws -> Void) throws -> Double {
        var seconds: [Double] = []
        for _ in 0..<runs {
            let start = threadCPUSeconds()
            try body()
            seconds.append(threadCPUSeconds() - start)
        }
        return P2PBench.median(seconds) * 1024 / Double(mebibytes)
    }
}

/// CPU time of this thread only, in seconds: a figure for one core, whatever else the process runs.
public func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
