import ArgumentParser

/// An error the command line reports as one line, with its exit code.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    let code: ExitCode
    init(_ description: String, code: ExitCode) {
        self.description = description
        self.code = code
    }
}
