import Crypto
import Foundation
@testable import P2P
import Testing

/// Which files a share offers and under which names, how a browser is told to save them, and a page that
/// needs nothing from outside.
@Suite struct SharedFileTests {
    func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).writeUnsynced(to: url)
    }

    @Test func foldersGiveTheirFilesWithRelativeNamesAndLinksAreLeftOut() throws {
        let root = try TransferTests.temporaryDirectory()
        try write("one", to: root.appendingPathComponent("note.txt"))
        try write("two!", to: root.appendingPathComponent("pics/b.png"))
        try write("three", to: root.appendingPathComponent("pics/deep/c.bin"))
        try FileManager.default.createDirectory(at: root.appendingPathComponent("pics/empty"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("pics/link").path, withDestinationPath: "/etc/passwd")
        let files = try SharedFile.collect([root.appendingPathComponent("note.txt"), root.appendingPathComponent("pics")])
        #expect(files.map(\.name) == ["note.txt", "pics/b.png", "pics/deep/c.bin"])
        #expect(files.map(\.size) == [3, 4, 5])
        #expect(files.map(\.id) == ["f1", "f2", "f3"])
        #expect(files.map(\.fileType) == ["text/plain", "image/png", "application/octet-stream"])
        #expect(files[2].source.path == root.appendingPathComponent("pics/deep/c.bin").path)
    }

    @Test func nothingToShareAndUnreadablePathsAreClearErrors() throws {
        let root = try TransferTests.temporaryDirectory()
        try FileManager.default.createDirectory(at: root.appendingPathComponent("empty/sub"), withIntermediateDirectories: true)
        #expect(throws: ShareError.nothingToShare) { try SharedFile.collect([root.appendingPathComponent("empty")]) }
        #expect(throws: ShareError.self) { try SharedFile.collect([root.appendingPathComponent("missing")]) }
        try write("x", to: root.appendingPathComponent("a/same.txt"))
        try write("y", to: root.appendingPathComponent("b/same.txt"))
        #expect(throws: ShareError.duplicateName("same.txt")) {
            try SharedFile.collect([root.appendingPathComponent("a/same.txt"), root.appendingPathComponent("b/same.txt")])
        }
    }

    @Test func aDownloadIsSavedUnderItsFlatNameWithAnASCIIFallback() {
        let file = SharedFile(id: "f1", name: "Fotos/Grüße \"1\".jpg", size: 1, fileType: "image/jpeg", source: URL(fileURLWithPath: "/x"))
        #expect(file.downloadName == "Fotos_Grüße \"1\".jpg")
        #expect(file.contentDisposition == "attachment; filename=\"Fotos_Gr__e _1_.jpg\"; filename*=UTF-8''Fotos_Gr%C3%BC%C3%9Fe%20%221%22.jpg")
    }

    @Test func thePageLoadsNothingFromElsewhereAndItsOwnScriptIsTheOnlyOneAllowed() throws {
        let html = SharePage.html
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("//cdn"))
        #expect(!html.contains("<link") && !html.contains("src="))
        #expect(html.contains("<script>\(SharePage.script)</script>"))
        let hash = Data(SHA256.hash(data: Data(SharePage.script.utf8))).base64EncodedString()
        #expect(SharePage.contentSecurityPolicy.contains("script-src 'sha256-\(hash)'"))
        #expect(SharePage.contentSecurityPolicy.hasPrefix("default-src 'none'"))
        // The page speaks the download API this server answers.
        #expect(SharePage.script.contains("/api/localsend/v2/") && SharePage.script.contains("prepare-download?") && SharePage.script.contains("download?sessionId="))
    }

    @Test func theUploadPageLoadsNothingFromElsewhereAndSpeaksTheUploadAPI() throws {
        let html = WebUploadPage.html
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("<link") && !html.contains("src="))
        #expect(html.contains("<script>\(WebUploadPage.script)</script>"))
        let hash = Data(SHA256.hash(data: Data(WebUploadPage.script.utf8))).base64EncodedString()
        let policy = try #require(WebUploadPage.headers.first { $0.0 == "Content-Security-Policy" }?.1)
        #expect(policy.contains("script-src 'sha256-\(hash)'") && policy.contains("connect-src 'self'"))
        #expect(WebUploadPage.script.contains("prepare-upload?pin=") && WebUploadPage.script.contains("upload?"))
        // The two pages' scripts differ, so each policy allows its own only.
        let shareHash = Data(SHA256.hash(data: Data(SharePage.script.utf8))).base64EncodedString()
        #expect(!policy.contains(shareHash))
    }
}
