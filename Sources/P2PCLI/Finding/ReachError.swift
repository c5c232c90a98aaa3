import ArgumentParser
import P2P

extension ReachError {
    /// The documented exit status (the library's `CommandExitCode(_:denial:)`); `denial` is the command's
    /// own (6 for `send`, where the receiver denies an offer; 4 where a denied connection is one more way
    /// of not getting through).
    func exitCode(denial: ExitCode) -> ExitCode {
        ExitStatus.code(CommandExitCode(self, denial: CommandExitCode(rawValue: denial.rawValue) ?? .denied))
    }

    /// As a `CLIError`, for commands that print errors as one line on stderr.
    func cliError(denial: ExitCode) -> CLIError { CLIError(description, code: exitCode(denial: denial)) }
}
