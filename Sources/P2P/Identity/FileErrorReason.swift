import Foundation
import NIOCore

/// The short reason behind a file or socket error, as a person reads it ("Read-only file system",
/// "No space left on device", "Address already in use"), instead of Foundation's or NIO's debug dump.
func readableReason(_ error: any Error) -> String {
    if let io = error as? IOError { return String(cString: strerror(io.errnoCode)) }
    if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
    let nsError = error as NSError
    if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
    if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
        return String(cString: strerror(Int32(underlying.code)))
    }
    if let cocoa = error as? CocoaError {
        switch cocoa.code {
        case .fileWriteOutOfSpace: return String(cString: strerror(ENOSPC))
        case .fileWriteVolumeReadOnly: return String(cString: strerror(EROFS))
        case .fileWriteNoPermission, .fileReadNoPermission: return String(cString: strerror(EACCES))
        case .fileNoSuchFile, .fileReadNoSuchFile: return String(cString: strerror(ENOENT))
        default: break
        }
    }
    return "\(error)"
}

/// `errno` as text, for the calls that report through it.
func errnoReason() -> String { String(cString: strerror(errno)) }
