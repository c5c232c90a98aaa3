import Foundation
import NIOConcurrencyHelpers

/// What Ctrl-C (SIGINT, or SIGTERM) does in a command that finds a peer and then does one thing with it
/// without a driver loop of its own. One signal handler for the process, whose action the command
/// changes as it moves on: before anything is under way, Ctrl-C cleans up (says goodbye to peers), prints
/// one line saying what was and was not done, and exits 130 (128 + SIGINT, as shells report it); once a
/// transfer runs, the command may take Ctrl-C over and end its own way (a transfer cancelled on both sides: 7).
enum Interruption {
    private enum Action {
        /// Clean up, print the line (if any), exit 130.
        case quit(message: @Sendable () -> String?, cleanup: @Sendable () async -> Void)
        /// The command's own reaction.
        case handle(@Sendable () -> Void)
    }

    private struct State {
        var installed = false
        var action: Action?
        var quitting = false
    }

    private static let state = NIOLockedValueBox(State())

    /// From now on Ctrl-C runs `cleanup`, prints `message()` on stderr and exits 130.
    static func quit(saying message: @escaping @Sendable () -> String?, after cleanup: @escaping @Sendable () async -> Void = {}) {
        set(.quit(message: message, cleanup: cleanup))
    }

    /// From now on Ctrl-C calls `handler` and the command ends by itself.
    static func handle(_ handler: @escaping @Sendable () -> Void) {
        set(.handle(handler))
    }

    /// Whether Ctrl-C is ending the process: errors the cleanup causes (a closed session) are not news.
    static var isQuitting: Bool { state.withLockedValue { $0.quitting } }

    /// Parks the caller while a quit runs, so the main path does not print or exit in its place.
    static func waitIfQuitting() async {
        while isQuitting { try? await Task.sleep(for: .seconds(1)) }
    }

    private static func set(_ action: Action) {
        let install = state.withLockedValue { state -> Bool in
            state.action = action
            defer { state.installed = true }
            return !state.installed
        }
        if install { Signals.onInterrupt { fire() } }
    }

    private static func fire() {
        let (action, again) = state.withLockedValue { state -> (Action?, Bool) in
            if state.quitting { return (nil, true) }
            if case .quit = state.action { state.quitting = true }
            return (state.action, false)
        }
        // A second Ctrl-C while the goodbyes hang (a peer that stopped reading): leave without them.
        if again { exit(ExitStatus.interrupted.rawValue) }
        switch action {
        case .quit(let message, let cleanup):
            Task {
                await cleanup()
                if let line = message() { Output.error("p2p: \(line)") }
                exit(ExitStatus.interrupted.rawValue)
            }
        case .handle(let handler):
            handler()
        case nil:
            break
        }
    }
}
