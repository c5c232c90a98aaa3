import Foundation

/// Why a directory given on the command line (`receive --dir`, `chat --downloads`) cannot take files, in
/// the words the person needs: it is missing, it is a file, or it cannot be written.
public enum WritableDirectory {
    /// nil when files can be written into `path`; otherwise the line to print.
    public static func problem(at path: String, fileManager: FileManager = .default) -> String? {
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return "cannot write into \(path): it does not exist (create it with mkdir -p, or choose another directory)"
        }
        guard isDirectory.boolValue else { return "cannot write into \(path): it is a file, not a directory" }
        guard fileManager.isWritableFile(atPath: path) else { return "cannot write into \(path): permission denied" }
        return nil
    }
}
