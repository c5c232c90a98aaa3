import ArgumentParser

/// An error the command line reports as one line, with its exit code.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    let code: ExitCode
    init(_ description: String, code: ExitCode) {
        self.description = description
        self.code = code
    }

    /// What `body` returns, or what it threw as one line with exit status 1: a key or a list of pins that
    /// cannot be read or written, a session that cannot start (the library's errors say which file and why).
    static func failing<T>(_ body: () throws -> T) throws(CLIError) -> T {
        do {
            return try body()
        } catch {
            throw CLIError("\(error)", code: ExitStatus.failure)
        }
    }

    /// `failing` for work that waits.
    static func failing<T>(_ body: () async throws -> T) async throws(CLIError) -> T {
        do {
            return try await body()
        } catch {
            throw CLIError("\(error)", code: ExitStatus.failure)
        }
    }
}
