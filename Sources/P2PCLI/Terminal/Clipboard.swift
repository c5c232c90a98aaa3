import Foundation

/// The system clipboard's text, read with the first of wl-paste, xclip, xsel or pbpaste that is installed.
enum Clipboard {
    /// Each tool and the arguments that print the clipboard, in the order they are tried (Wayland first).
    static let readers: [(tool: String, arguments: [String])] = [
        ("wl-paste", ["--no-newline"]), ("xclip", ["-selection", "clipboard", "-out"]), ("xsel", ["--clipboard", "--output"]), ("pbpaste", []),
    ]

    static func read() throws -> Data {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = readers.lazy.compactMap { reader in
            path.split(separator: ":").map { "\($0)/\(reader.tool)" }.first(where: FileManager.default.isExecutableFile).map { ($0, reader) }
        }.first
        guard let (executable, reader) = found else {
            throw CLIError("no clipboard tool found (wl-paste, xclip, xsel or pbpaste); install one, or use --text \"…\"", code: ExitStatus.usage)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = reader.arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw CLIError("cannot run \(reader.tool): \(error)", code: ExitStatus.usage)
        }
        // Read to the end before waiting: a clipboard bigger than the pipe's buffer would block the tool.
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let why = complaint.trimmingCharacters(in: .whitespacesAndNewlines)
            throw CLIError("\(reader.tool) could not read the clipboard\(why.isEmpty ? "" : ": \(why)")", code: ExitStatus.usage)
        }
        return bytes
    }
}
