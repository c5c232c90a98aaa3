import Foundation

/// Media types by file extension, and image signatures for checking that a file is what it claims.
public enum MediaType {
    /// The media types of chat images (TRANSFER.md, "Images in chat"): the ones `ImageInfo` recognises.
    public static let images: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp"]

    /// The media type for a file's extension (images, text, JSON, PDF, ZIP), `application/octet-stream`
    /// for anything else. A guess from the name only: check images with `ImageInfo`.
    public static func guess(_ url: URL) -> String {
        switch url.pathExtension.lowercased() {
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "txt", "md": "text/plain"
        case "json": "application/json"
        case "pdf": "application/pdf"
        case "zip": "application/zip"
        default: "application/octet-stream"
        }
    }
}
