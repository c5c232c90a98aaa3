import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p receive`'s one loop: transfer and session events, keys, and the questions connection requests
/// and offers raise, handled in arrival order. It stays up for any number of senders (`--once`: until
/// the first one leaves), asks about a folder once, and shows one progress line and one summary per sender.
final class ReceiveLoop {
    enum Input: Sendable {
        case transfer(TransferEvent)
        case session(SessionEvent)
        case keys([Key])
        case question(AskedQuestion)
        case withdrawn(token: UInt64)
        case interrupt
        /// A second after Ctrl-C: stop waiting for the cancelled transfers to report their end.
        case cancellationsOverdue
    }

    let session: Session
    let transfers: FileTransfers
    let options: ReceiveCommand
    let directory: URL
    let view: TransferView
    let interactive: Bool
    let inputs: AsyncStream<Input>
    let feed: AsyncStream<Input>.Continuation
    /// What the transfers came to, per sender and in all.
    var ledger = ReceiveLedger()
    /// When each sender's progress line was drawn last (it is redrawn at most every 100 ms).
    var lastDrawn: [PeerID: ContinuousClock.Instant] = [:]
    var questions = PeerQuestions()
    var policy: ConnectionPolicy
    /// Answers that stand for later offers: a folder's (key: sender and folder), or "a" for a sender's
    /// loose files (key: sender). Forgotten when the sender leaves.
    var standing: [String: Bool] = [:]
    /// Whether the progress line is on the screen (lines printed under it take it off first).
    var progressDrawn = false
    /// Whether a question is drawn as the input line (render erases it once it is answered).
    var questionDrawn = false
    /// Offers (peer ID/transfer ID) whose question named their hidden paths and execute bits: a yes to
    /// that question allows them. Filled by the loop, read by the offer handler once answered.
    let named = NIOLockedValueBox<Set<String>>([])

    init(session: Session, transfers: FileTransfers, options: ReceiveCommand, directory: URL) {
        self.session = session
        self.transfers = transfers
        self.options = options
        self.directory = directory
        interactive = Terminal.stdinIsTTY && !options.json
        view = TransferView(json: options.json, perFile: options.network.verbose)
        policy = ConnectionPolicy(acceptsEveryone: options.yes, asksAlways: false, canAsk: Terminal.stdinIsTTY && !options.json)
        (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        // --text: standard output is the text's alone, for a pipe.
        if options.text && !options.json { Output.keepStdoutForData() }
    }

    /// Runs until Ctrl-C (or, with `--once`, until the first sender left); throws the exit status.
    func run(listen: () async throws -> Void) async throws {
        let feed = self.feed
        let trusted = Self.trusted(everyone: options.yes, from: options.from)
        session.setConnectionRequestHandler { request in
            if trusted(request.peer) { return true }
            return await Self.ask(.connection(request), through: feed)
        }
        let (allowsHidden, allowsExecutable, named) = (options.allowHidden, options.allowExecutable, named)
        let (textsOnly, json) = (options.text, options.json)
        transfers.setOfferHandler(answers: { offer in
            if textsOnly && !TextTransfer.isText(offer.info) {
                if !json {
                    Output.error(Terminal.paint("p2p: declined \(Terminal.sanitize(offer.info.name)) from \(Terminal.sanitize(offer.info.peer.displayName)): "
                                                + "this receive --text takes texts only", .yellow))
                }
                return .declined
            }
            // Accepted unasked: hidden paths and execute bits only as the flags say.
            if trusted(offer.info.peer) { return OfferAnswer(accepted: true, allowsHidden: allowsHidden, allowsExecutable: allowsExecutable) }
            let yes = await Self.ask(.offer(offer), through: feed)
            // A yes to a question that named them allows them; a standing answer ("a", a folder) did not.
            let shown = named.withLockedValue { $0.remove(Self.key(offer.info)) != nil }
            return OfferAnswer(accepted: yes, allowsHidden: allowsHidden || shown, allowsExecutable: allowsExecutable || shown)
        })
        let transferPump = EventPump(transfers.events()) { feed.yield(.transfer($0)) }
        let sessionPump = EventPump(session.events()) { feed.yield(.session($0)) }
        Signals.onInterrupt { feed.yield(.interrupt) }
        if interactive { RawTerminal.feedKeys { feed.yield(.keys($0)) } }

        var failure: (any Error)?
        do {
            try await listen()
            loop: for await input in inputs {
                switch input {
                case .transfer(let event):
                    show(event)
                    if options.text && ledger.textArrived { break loop }
                    guard event.isEnd, options.once || ledger.leaving else { break }
                    // Transfer and session events come through separate streams: the sender may have left before
                    // its last transfer's end reached us. Then this was the last.
                    if ledger.leaving ? ledger.active == 0 : ledger.settled && session.connectedPeers.isEmpty { break loop }
                case .session(let event):
                    show(event)
                    if options.once, case .peerChanged(_, .disconnected, _) = event, ledger.decided > 0, ledger.settled,
                       session.connectedPeers.isEmpty { break loop }
                case .keys(let keys):
                    for case .character(let character) in keys {
                        if let answer = questions.queue.answer(for: character) { answerShown(answer) }
                    }
                case .question(let asked):
                    queue(asked)
                case .withdrawn(let token):
                    withdraw(token)
                case .interrupt:
                    if ledger.leaving || ledger.active == 0 { break loop }  // idle, or a second Ctrl-C: wait no longer
                    transfers.cancelAll()
                    ledger.leave()
                    try? await Task.sleep(for: .milliseconds(100))  // let the CANCEL frames go out
                    if ledger.active == 0 { break loop }
                    // Transfers in flight report their end (after their CANCEL) from their own queues: wait
                    // a second at most for those events, so that they are shown.
                    Task {
                        try? await Task.sleep(for: .seconds(1))
                        feed.yield(.cancellationsOverdue)
                    }
                case .cancellationsOverdue:
                    break loop
                }
                if interactive { render() }
            }
        } catch {
            failure = error
        }
        if interactive {
            Output.setInputLine(nil)
            RawTerminal.restore()
        }
        questions.refuseAll()
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left). The transfers' events are shown up to the close: a
        // transfer ended by it or by Ctrl-C reports that before the exit status does.
        await sessionPump.drain()
        await session.close()
        await transferPump.drain()
        feed.finish()
        for await input in inputs {
            switch input {
            case .transfer(let event): show(event)
            case .session(let event): show(event)
            case .question(let asked): asked.answer.resume(returning: false)
            case .keys, .withdrawn, .interrupt, .cancellationsOverdue: break
            }
        }
        // Ctrl-C while waiting for a vanished sender: those files did not arrive.
        let (summaries, outcome) = ledger.close()
        for (peer, sender) in summaries { summarize(peer, sender) }
        if let failure { throw failure }
        switch outcome {
        case .cancelled: throw CLIError("cancelled", code: ExitStatus.cancelled)
        case .failed: throw ExitStatus.transferFailed
        case .denied: throw ExitStatus.denied
        case .received: break
        }
    }

    /// `--yes`, or `--from` naming the peer (`PeerTarget.fits`: its pinned name for a pinned key, never a
    /// name pinned to another key; or an ID or fingerprint prefix of at least four characters).
    static func trusted(everyone: Bool, from: String?) -> @Sendable (PeerInfo) -> Bool {
        { peer in
            everyone || from.map { PeerTarget.fits(from: $0, peer) } ?? false
        }
    }

    static func ask(_ question: PeerQuestion, through feed: AsyncStream<Input>.Continuation) async -> Bool {
        await AskedQuestion.ask(question, deliver: { feed.yield(.question($0)) }, withdraw: { feed.yield(.withdrawn(token: $0)) })
    }
}
