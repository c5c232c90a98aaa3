/// Why a command on a session ended before its work was done, in the words a person reads: the line
/// (`message`), the JSON event's `code`, and the documented exit code (``CommandExitCode``). A failure
/// with no message (Ctrl-C closed the session under the work) has nothing more to say.
public struct CommandFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON error event's code ("listen", "not-found", "send", …).
    public let code: String
    /// The line a person reads; nil when there is nothing to say (an interruption).
    public let message: String?
    /// The command's exit code.
    public let exitCode: CommandExitCode

    public init(code: String, message: String?, exitCode: CommandExitCode) {
        self.code = code
        self.message = message
        self.exitCode = exitCode
    }

    /// The session could not listen (exit 1).
    public static func listen(_ error: SessionError) -> CommandFailure {
        CommandFailure(code: "listen", message: error.description, exitCode: .failure)
    }

    /// Ctrl-C closed the session under the work: exit 130, and nothing to say.
    public static let interrupted = CommandFailure(code: "interrupted", message: nil, exitCode: .interrupted)

    /// The peer was not found or not reached; `denial`: the command's exit code for a denied connection.
    public init(_ error: ReachError, denial: CommandExitCode = .connectionFailed) {
        self.init(code: error.jsonCode, message: error.description, exitCode: CommandExitCode(error, denial: denial))
    }

    public var description: String { message ?? code }
}
