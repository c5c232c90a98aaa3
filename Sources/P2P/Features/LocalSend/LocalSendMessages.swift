import Foundation

/// One file as a LocalSend sender describes it in `prepare-upload` (and a sharer in `prepare-download`).
/// Every string is the peer's claim: `fileName` goes through `SafePath` before it names anything.
public struct LocalSendFileInfo: Codable, Sendable, Equatable {
    /// The sender's ID for the file, unique within the request.
    public var id: String
    /// The name, possibly a relative path (`folder/photo.jpg`) when a folder is sent.
    public var fileName: String
    /// Bytes.
    public var size: UInt64
    /// A media type (`image/jpeg`), as the sender guessed it.
    public var fileType: String
    /// Lower- or upper-case hex SHA-256 of the bytes; optional.
    public var sha256: String?
    /// For a text message, the text itself; otherwise a thumbnail or nothing.
    public var preview: String?
    /// Times the sender gives; p2p does not apply them.
    public var metadata: Metadata?

    /// File times, ISO 8601.
    public struct Metadata: Codable, Sendable, Equatable {
        /// Last modification.
        public var modified: String?
        /// Last access.
        public var accessed: String?
        /// A metadata value.
        public init(modified: String? = nil, accessed: String? = nil) {
            self.modified = modified
            self.accessed = accessed
        }
    }

    /// A file description.
    public init(id: String, fileName: String, size: UInt64, fileType: String, sha256: String? = nil,
                preview: String? = nil, metadata: Metadata? = nil) {
        self.id = id
        self.fileName = fileName
        self.size = size
        self.fileType = fileType
        self.sha256 = sha256
        self.preview = preview
        self.metadata = metadata
    }
}

/// The body of `POST /api/localsend/v2/prepare-upload`: who sends, and which files.
public struct LocalSendPrepareUpload: Codable, Sendable, Equatable {
    /// The sender.
    public var info: LocalSendDeviceInfo
    /// The files, by their IDs.
    public var files: [String: LocalSendFileInfo]

    /// A request.
    public init(info: LocalSendDeviceInfo, files: [String: LocalSendFileInfo]) {
        self.info = info
        self.files = files
    }
}

/// The answer to an accepted `prepare-upload`: the session, and a token per file to upload.
public struct LocalSendUploadSession: Codable, Sendable, Equatable {
    /// Names the upload session in `upload` and `cancel`.
    public var sessionId: String
    /// A token per accepted file ID; a file left out is not wanted.
    public var files: [String: String]

    /// An answer.
    public init(sessionId: String, files: [String: String]) {
        self.sessionId = sessionId
        self.files = files
    }
}

/// The answer to `POST /api/localsend/v2/prepare-download`: who shares, the session, and the files.
public struct LocalSendDownloadSession: Codable, Sendable, Equatable {
    /// The sharer.
    public var info: LocalSendDeviceInfo
    /// Names the download session in `download`.
    public var sessionId: String
    /// The files, by their IDs.
    public var files: [String: LocalSendFileInfo]

    /// An answer.
    public init(info: LocalSendDeviceInfo, sessionId: String, files: [String: LocalSendFileInfo]) {
        self.info = info
        self.sessionId = sessionId
        self.files = files
    }
}

/// The paths of LocalSend's HTTP API (v2).
public enum LocalSendPath {
    /// `POST`: discovery's answer, and the legacy scan.
    public static let register = "/api/localsend/v2/register"
    /// `GET`: a device's description (debugging).
    public static let info = "/api/localsend/v2/info"
    /// `POST`: an offer of files.
    public static let prepareUpload = "/api/localsend/v2/prepare-upload"
    /// `POST`: the bytes of one file.
    public static let upload = "/api/localsend/v2/upload"
    /// `POST`: the sender ends its session.
    public static let cancel = "/api/localsend/v2/cancel"
    /// `POST`: the list of shared files (download API).
    public static let prepareDownload = "/api/localsend/v2/prepare-download"
    /// `GET`: the bytes of one shared file.
    public static let download = "/api/localsend/v2/download"
}
