import ArgumentParser
import P2P

/// What `p2p records receive` decides about each input of its loop: session events are shown, questions
/// (connection requests) are asked and keys answer them, and the command ends on Ctrl-C (0: it runs until
/// interrupted) or, with `--once`, after the first snapshot, with that snapshot's status.
struct RecordsReceiveModel: DrivenModel {
    enum Event: Sendable {
        case session(SessionEvent)
        /// A snapshot was merged, rejected, or failed (and its event shown).
        case finished(RecordTransferResult.Status)
    }

    enum Effect {
        case show(SessionEvent)
        /// Ask the person (the terminal is read from the first question on).
        case ask(AskedQuestion)
        case withdraw(token: UInt64)
        /// Keys that may answer the question shown.
        case answer([Key])
        case exit(ExitCode)
    }

    /// `--once`: the first snapshot ends the command.
    let once: Bool

    mutating func handle(_ input: DriverInput<Event>) -> [Effect] {
        switch input {
        case .event(.session(let event)): [.show(event)]
        case .event(.finished(let outcome)): once ? [.exit(ExitStatus.records(outcome))] : []
        case .interrupt: [.exit(.success)]
        case .question(let asked): [.ask(asked)]
        case .withdrawn(let token): [.withdraw(token: token)]
        case .keys(let keys): [.answer(keys)]
        case .line, .endOfInput: []
        }
    }
}
