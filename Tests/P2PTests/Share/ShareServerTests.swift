import Foundation
import NIOCore
@testable import P2P
import Testing

/// `p2p share`'s server on loopback, through the HTTP client: the page, the PIN, the download API with the
/// files' exact bytes, `--once` ending the share, and a file changed on disk refused rather than cut.
@Suite struct ShareServerTests {
    let client = HTTPClient(tls: nil)

    func makeFiles() throws -> (URL, [SharedFile]) {
        let root = try TransferTests.temporaryDirectory()
        try FileManager.default.createDirectory(at: root.appendingPathComponent("dir"), withIntermediateDirectories: true)
        try Data("small\n".utf8).writeUnsynced(to: root.appendingPathComponent("a.txt"))
        try Data((0..<(600 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).writeUnsynced(to: root.appendingPathComponent("dir/b.bin"))
        return (root, try SharedFile.collect([root.appendingPathComponent("a.txt"), root.appendingPathComponent("dir")]))
    }

    @Test func aBrowsersWayThroughTheShareEndsWithOnce() async throws {
        let (root, files) = try makeFiles()
        let server = ShareServer(files: files, pin: try SharePIN("2468"), once: true, alias: "tester")
        let port = try await server.start(hosts: ["127.0.0.1"], port: 0, fallsBack: true)

        let page = try await client.request(.GET, host: "127.0.0.1", port: port, path: "/")
        #expect(page.status == .ok && page.text.contains("id=\"pin\""))

        let wrong = try await client.request(.POST, host: "127.0.0.1", port: port, path: LocalSendPath.prepareDownload + "?pin=1357")
        #expect(wrong.status == .unauthorized)
        let listed = try await client.request(.POST, host: "127.0.0.1", port: port, path: LocalSendPath.prepareDownload + "?pin=2468")
        #expect(listed.status == .ok)
        let session = try JSONDecoder().decode(LocalSendDownloadSession.self, from: Data(bufferBytes: listed.body))
        #expect(session.info.alias == "tester" && session.info.download == true && session.info.protocol == "http")
        #expect(session.files.values.map(\.fileName).sorted() == ["a.txt", "dir/b.bin"])
        #expect(session.files["f2"]?.size == 600 << 10)

        for (id, path) in [("f1", "a.txt"), ("f2", "dir/b.bin")] {
            let download = try await client.request(.GET, host: "127.0.0.1", port: port,
                                                     path: LocalSendPath.download + "?sessionId=\(session.sessionId)&fileId=\(id)")
            #expect(download.status == .ok)
            #expect(Data(bufferBytes: download.body) == (try Data(contentsOf: root.appendingPathComponent(path))))
        }
        var seen: [ShareServer.Event] = []
        for await event in server.events {
            seen.append(event)
            if event == .over { break }
        }
        #expect(seen.first == .wrongPIN(from: "127.0.0.1"))
        #expect(seen.contains(.sent(files[0], to: "127.0.0.1")) && seen.contains(.sent(files[1], to: "127.0.0.1")))
        await server.finish()
        await #expect(throws: (any Error).self) {
            _ = try await client.request(.GET, host: "127.0.0.1", port: port, path: "/")
        }
    }

    @Test func aFileChangedOnDiskIsRefusedNotCut() async throws {
        let (root, files) = try makeFiles()
        let server = ShareServer(files: files, pin: try SharePIN("2468"), once: false, alias: "tester")
        let port = try await server.start(hosts: ["127.0.0.1"], port: 0, fallsBack: true)
        let listed = try await client.request(.POST, host: "127.0.0.1", port: port, path: LocalSendPath.prepareDownload + "?pin=2468")
        let session = try JSONDecoder().decode(LocalSendDownloadSession.self, from: Data(bufferBytes: listed.body))
        try Data("shorter".utf8).writeUnsynced(to: root.appendingPathComponent("dir/b.bin"))
        let changed = try await client.request(.GET, host: "127.0.0.1", port: port,
                                               path: LocalSendPath.download + "?sessionId=\(session.sessionId)&fileId=f2")
        #expect(changed.status == .conflict && changed.text.contains("changed on disk"))
        let foreign = try await client.request(.GET, host: "127.0.0.1", port: port, path: LocalSendPath.download + "?sessionId=nope&fileId=f1")
        #expect(foreign.status == .forbidden)
        await server.stop()
    }
}

private extension Data {
    init(bufferBytes buffer: ByteBuffer) { self.init(buffer.readableBytesView) }
}
