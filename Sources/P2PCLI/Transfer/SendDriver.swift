import P2P

/// The driver's loop of every `p2p send` (files, a text, standard input): the work runs on a task of its
/// own and its end ends the loop; the transfers' events go to the view as they come, the last ones in
/// the drain (before the summary, and before the process exits). Until the work hands over how to
/// cancel what it offered, Ctrl-C says goodbye and leaves: 130, nothing was sent. From then on Ctrl-C
/// cancels on both sides and the send ends as cancelled (7); a second one leaves without the receiver's
/// word (a tree whose every byte is sent still waits for its verdict: it may all have arrived).
enum SendDriver<Value: Sendable> {
    /// What the work and the pump tell the loop.
    enum Event: Sendable {
        /// The first byte is offered: from now on Ctrl-C cancels it (`cancel`) on both sides.
        case offered(cancel: @Sendable () -> Void)
        /// The work ended: its value (or error) is the command's.
        case ended(Result<Value, any Error>)
        /// Ctrl-C's goodbyes are said.
        case closed
        /// One of the transfers' events, for the view.
        case transfer(TransferEvent)
    }

    /// How the work hands over the cancel of what it offered.
    typealias Offered = @Sendable (@escaping @Sendable () -> Void) -> Void

    /// Runs `work` on `session` (closed at the end; nil: the work has no session, as a LocalSend upload)
    /// and returns what it returned; `transfers`' events go to `view`.
    static func run(_ session: Session?, transfers: FileTransfers? = nil, view: TransferView? = nil,
                    _ work: sending @escaping (_ offered: @escaping Offered) async throws -> Value) async throws -> Value {
        let driver = CommandDriver<Event>()
        let feed = driver.feed
        if let transfers { driver.pump(transfers.events()) { .transfer($0) } }
        driver.readInterrupts()
        let task = Task {
            do { feed.send(.ended(.success(try await work { feed.send(.offered(cancel: $0)) }))) } catch { feed.send(.ended(.failure(error))) }
        }
        var cancel: (@Sendable () -> Void)?
        var (presses, quitting) = (0, false)
        var ended: Result<Value, any Error>?
        let status = await driver.run { input in
            switch input {
            case .event(.transfer(let event)):
                view?.handle(event)
            case .event(.offered(let cancelSends)):
                cancel = cancelSends
            case .event(.ended(let outcome)):
                // After Ctrl-C's goodbyes the send ends because the session closed under it: not news.
                guard !quitting else { return nil }
                ended = outcome
                return .success
            case .event(.closed):
                Output.error("p2p: interrupted; nothing was sent")
                return ExitStatus.interrupted
            case .interrupt:
                // A second Ctrl-C while the goodbyes hang (a peer that stopped reading): leave without them.
                if quitting { return ExitStatus.interrupted }
                if let cancel {
                    presses += 1
                    guard presses > 1 else { cancel(); return nil }
                    Output.error("p2p: interrupted again; leaving without the receiver's word on what arrived")
                    return ExitStatus.cancelled
                }
                quitting = true
                Task { await session?.close(); feed.send(.closed) }
            case .keys, .line, .endOfInput, .question, .withdrawn:
                break
            }
            return nil
        }
        guard let ended else {
            task.cancel()
            throw status ?? ExitStatus.interrupted
        }
        await driver.drain(closing: { await session?.close() }, leftover: { input in
            if case .event(.transfer(let event)) = input { view?.handle(event) }
        })
        return try ended.get()
    }
}
