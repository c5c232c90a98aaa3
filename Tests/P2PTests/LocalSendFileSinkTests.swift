import Foundation
import NIOCore
import Testing
@testable import P2P

/// A LocalSend upload's delivery says how it was checked: by the sender's SHA-256 when it gave one (and a
/// mismatch keeps nothing), by its size only when it gave none, so that no summary calls it verified.
struct LocalSendFileSinkTests {
    private let bytes = Data((0 ..< 70_000).map { UInt8($0 % 253) })

    private func sink(_ directory: URL, _ name: String, sha256: String?) -> LocalSendFileSink {
        LocalSendFileSink(destination: directory.appendingPathComponent(name), size: UInt64(bytes.count), sha256: sha256, overwrite: false,
                          sender: PeerID(hex: "0123456789abcdef0123456789abcdef")!)
    }

    private func upload(_ sink: LocalSendFileSink, _ name: String) async throws(TransferError) -> Delivery {
        try await sink.open()
        try await sink.write(ByteBuffer(bytes: bytes))
        return try await sink.finish(name: name)
    }

    @Test func theDeliverySaysWhetherTheSendersHashWasChecked() async throws {
        let directory = TestFiles.temporaryDirectory.appendingPathComponent("p2p-ls-sink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sha = Array(LocalSendHashing.sha256(bytes)).hex

        let hashed = try await upload(sink(directory, "hashed.bin", sha256: sha.uppercased()), "hashed.bin")
        #expect(hashed.check == .sha256 && hashed.isHashVerified && hashed.sha256 == sha)

        let bare = try await upload(sink(directory, "bare.bin", sha256: nil), "bare.bin")
        #expect(bare.check == .size && !bare.isHashVerified)
        #expect(bare.sha256 == sha)  // computed here all the same, and reported as ours
        #expect(try Data(contentsOf: directory.appendingPathComponent("bare.bin")) == bytes)

        let empty = try await upload(sink(directory, "empty-hash.bin", sha256: ""), "empty-hash.bin")
        #expect(empty.check == .size)

        let wrong = sink(directory, "wrong.bin", sha256: String(repeating: "0", count: 64))
        await #expect(throws: TransferError.self) { _ = try await upload(wrong, "wrong.bin") }
        await wrong.discard()
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("wrong.bin").path))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("wrong.bin.part").path))
    }

    @Test func theLedgerCountsFilesCheckedBySizeOnly() {
        var counts = ReceiveLedger.Counts()
        counts.add(Delivery(name: "a", size: 1, sha256: "x", resumedFrom: 0, url: nil))
        var bare = Delivery(name: "b", size: 2, sha256: "y", resumedFrom: 0, url: nil)
        bare.check = .size
        counts.add(bare)
        #expect(counts.files == 2 && counts.sizeOnly == 1 && counts.bytes == 3)
    }
}
