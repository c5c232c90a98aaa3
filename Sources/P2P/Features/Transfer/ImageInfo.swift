import Foundation

/// The type and pixel size of an image, read from its first bytes (its signature), not its name.
public struct ImageInfo: Sendable, Equatable {
    /// What the signature shows: `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    public var mediaType: String
    /// The width in pixels, as the header states it.
    public var width: Int
    /// The height in pixels, as the header states it.
    public var height: Int

    /// Reads the header of `url`; `nil` when the file is not a PNG, JPEG, GIF or WebP image.
    public init?(contentsOf url: URL) {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        // JPEG dimensions may sit after large metadata segments; 1 MiB is plenty for real files.
        guard let data = try? handle.read(upToCount: 1 << 20) else { return nil }
        self.init(header: [UInt8](data))
    }

    /// Reads type and size from a file's first bytes; nil unless they are a PNG, JPEG, GIF or WebP header.
    public init?(header b: [UInt8]) {
        func be16(_ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
        func le16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func be32(_ i: Int) -> Int { be16(i) << 16 | be16(i + 2) }
        func le24(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 }
        if b.count >= 24, b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), Array(b[12..<16]) == Array("IHDR".utf8) {
            self.init(mediaType: "image/png", width: be32(16), height: be32(20))
        } else if b.count >= 10, b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) {
            self.init(mediaType: "image/gif", width: le16(6), height: le16(8))
        } else if b.count >= 30, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) {
            switch String(decoding: b[12..<16], as: UTF8.self) {
            case "VP8 " where b.count >= 30:
                self.init(mediaType: "image/webp", width: le16(26) & 0x3FFF, height: le16(28) & 0x3FFF)
            case "VP8L" where b.count >= 25:
                let bits = Int(b[21]) | Int(b[22]) << 8 | Int(b[23]) << 16 | Int(b[24]) << 24
                self.init(mediaType: "image/webp", width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
            case "VP8X" where b.count >= 30:
                self.init(mediaType: "image/webp", width: le24(24) + 1, height: le24(27) + 1)
            default:
                return nil
            }
        } else if b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 {
            // Walk the JPEG segments to a start-of-frame marker, which carries the size.
            var i = 2
            while i + 9 < b.count {
                guard b[i] == 0xFF else { return nil }
                let marker = b[i + 1]
                if marker == 0xFF { i += 1; continue }
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                    self.init(mediaType: "image/jpeg", width: be16(i + 7), height: be16(i + 5))
                    return
                }
                i += 2 + be16(i + 2)
            }
            return nil
        } else {
            return nil
        }
        guard width > 0, height > 0 else { return nil }
    }

    private init(mediaType: String, width: Int, height: Int) {
        self.mediaType = mediaType
        self.width = width
        self.height = height
    }
}
