import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P

/// `p2p receive`'s one loop: transfer and session events, keys, and the questions connection requests
/// and offers raise, handled in arrival order. It stays up for any number of senders (`--once`: until
/// the first one leaves), asks about a folder once, and shows one progress line and one summary per sender.
final class ReceiveLoop {
    private enum Input: Sendable {
        case transfer(TransferEvent)
        case session(SessionEvent)
        case keys([Key])
        case question(AskedQuestion)
        case withdrawn(token: UInt64)
        case interrupt
        /// A second after Ctrl-C: stop waiting for the cancelled transfers to report their end.
        case cancellationsOverdue
    }

    /// What one sender sent since it connected: its progress line and its summary.
    private struct Batch {
        let name: String
        let began = ContinuousClock.now
        var counts = SummaryCounts()
        /// Its transfers that started and have not ended; and whether it left meanwhile (then its summary
        /// waits for their ends, which come through another stream than its leaving).
        var running = 0, left = false
        /// The tree under way: its files so far and in all (for "n/N files").
        var tree: (done: Int, files: Int)?
        /// Bytes of the transfer under way that were already here (held files, a resumed prefix): its start's
        /// offset, not counted in the rate.
        var spared: UInt64 = 0
        var current: (name: PeerText, done: UInt64, size: UInt64)?
        var lastDrawn = ContinuousClock.now - .seconds(1)
    }

    /// What came of the offers so far, counted from the transfer events.
    private struct Tally {
        var received = 0, failed = 0, denied = 0, active = 0
        var cancelled = false
        /// A text arrived (`--text` exits then).
        var textArrived = false
        /// Ctrl-C was pressed here: only the transfers in flight are waited for, to report their end.
        var leaving = false
        /// Files whose sender vanished mid-way (peer ID and name): kept waiting for, since the same send
        /// run again resumes them; a later success under the same key is not a failure.
        var interrupted: Set<String> = []

        /// Offers decided one way or the other.
        var decided: Int { received + failed + denied }
        /// Nothing in flight and nothing to wait for.
        var settled: Bool { active == 0 && interrupted.isEmpty }
    }

    private let session: Session
    private let transfers: FileTransfers
    private let options: ReceiveCommand
    private let directory: URL
    private let view: TransferView
    private let interactive: Bool
    private let inputs: AsyncStream<Input>
    private let feed: AsyncStream<Input>.Continuation
    private var tally = Tally()
    private var batches: [PeerID: Batch] = [:]
    private var questions = PeerQuestions()
    private var policy: ConnectionPolicy
    /// Answers that stand for later offers: a folder's (key: sender and folder), or "a" for a sender's
    /// loose files (key: sender). Forgotten when the sender leaves.
    private var standing: [String: Bool] = [:]
    /// Whether the progress line is on the screen (lines printed under it take it off first).
    private var progressDrawn = false
    /// Whether a question is drawn as the input line (render erases it once it is answered).
    private var questionDrawn = false
    /// Transfers that started and have not ended.
    private var started: Set<UInt64> = []
    /// Offers (peer ID/transfer ID) whose question named their hidden paths and execute bits: a yes to
    /// that question allows them. Filled by the loop, read by the offer handler once answered.
    private let named = NIOLockedValueBox<Set<String>>([])

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
        if interactive {
            RawTerminal.enable()
            Task { for await keys in RawTerminal.keys() { feed.yield(.keys(keys)) } }
        }

        var failure: (any Error)?
        do {
            try await listen()
            loop: for await input in inputs {
                switch input {
                case .transfer(let event):
                    show(event)
                    if options.text && tally.textArrived { break loop }
                    guard event.isEnd, options.once || tally.leaving else { break }
                    // Transfer and session events come through separate streams: the sender may have left before
                    // its last transfer's end reached us. Then this was the last.
                    if tally.leaving ? tally.active == 0 : tally.settled && session.connectedPeers.isEmpty { break loop }
                case .session(let event):
                    show(event)
                    if options.once, case .peerChanged(_, .disconnected, _) = event, tally.decided > 0, tally.settled,
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
                    if tally.leaving || tally.active == 0 { break loop }  // idle, or a second Ctrl-C: wait no longer
                    transfers.cancelAll()
                    tally.cancelled = true
                    tally.leaving = true
                    try? await Task.sleep(for: .milliseconds(100))  // let the CANCEL frames go out
                    if tally.active == 0 { break loop }
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
        for peer in Array(batches.keys) { summarize(peer) }
        if let failure { throw failure }
        // Ctrl-C while waiting for a vanished sender: those files did not arrive.
        if !tally.interrupted.isEmpty && !tally.cancelled { tally.failed += tally.interrupted.count }
        if tally.cancelled { throw CLIError("cancelled", code: ExitStatus.cancelled) }
        if tally.failed > 0 { throw ExitStatus.transferFailed }
        if tally.received == 0 && tally.denied > 0 { throw ExitStatus.denied }
    }

    /// `--yes`, or `--from` naming the peer (`PeerTarget.fits`: its pinned name for a pinned key, never a
    /// name pinned to another key; or an ID or fingerprint prefix of at least four characters).
    private static func trusted(everyone: Bool, from: String?) -> @Sendable (PeerInfo) -> Bool {
        { peer in
            everyone || from.map { PeerTarget.fits(from: $0, peer) } ?? false
        }
    }

    private static func ask(_ question: PeerQuestion, through feed: AsyncStream<Input>.Continuation) async -> Bool {
        await AskedQuestion.ask(question, deliver: { feed.yield(.question($0)) }, withdraw: { feed.yield(.withdrawn(token: $0)) })
    }

    // MARK: - Questions

    /// The folder an offered path is in ("many/" for "many/a/b.txt"), nil for a loose file.
    static func folder(of path: String) -> String? {
        guard let slash = path.firstIndex(of: "/") else { return nil }
        return String(path[...slash])
    }

    private func queue(_ asker: AskedQuestion) {
        clearProgress()
        guard questions.admit(asker) else { return }
        let peer = asker.question.peer
        let name = PeerTarget.name(peer)
        switch asker.question {
        case .connection(let request):
            switch policy.decide(peer.id, trust: request.trust) {
            case .accept: asker.answer.resume(returning: true)
            case .deny:
                asker.answer.resume(returning: false)
                declined("a connection from \(name) (\(peer.fingerprint)); use --yes, or --from \(PeerTarget.fromName(peer))")
            case .ask:
                let trust = ChatView.trustNote(request.trust, fingerprint: peer.fingerprint)
                    .replacingOccurrences(of: ", now pinned", with: ", pinned if you accept")
                _ = questions.queue.ask("\(name) wants to send you files — \(trust). Accept?", asker: asker)
            }
        case .offer(let offer) where TextTransfer.isText(offer.info):
            guard interactive else {
                asker.answer.resume(returning: false)
                declined("a text from \(name); use --yes, or --from \(PeerTarget.fromName(peer))")
                return
            }
            _ = questions.queue.ask("\(name) wants to send you a text (\(TransferView.bytes(offer.info.size))) — accept?", asker: asker)
        case .offer(let offer) where offer.info.isTree:
            let info = offer.info
            if standing[peer.id.hex + "/"] == true { return asker.answer.resume(returning: true) }
            guard interactive else {
                asker.answer.resume(returning: false)
                declined("\(Terminal.sanitize(info.name)) from \(name); use --yes, or --from \(PeerTarget.fromName(peer))")
                return
            }
            let roots = offer.roots
            var what = info.fileCount == 1 && !info.name.raw.hasSuffix("/")
                ? "\(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size)))"
                : "\(Self.count(info.fileCount, "file")), \(TransferView.bytes(info.size)) in \(Terminal.sanitize(info.name))"
            // Several roots: which ones, not only how many.
            if roots.count > 1 { what += " (\(Self.list(roots)))" }
            named.withLockedValue { _ = $0.insert(Self.key(info)) }
            _ = questions.queue.ask("\(name) offers \(what)\(Self.risks(offer)) — accept?", asker: asker)
        case .offer(let offer):
            let info = offer.info
            let folder = Self.folder(of: info.name.raw)
            let key = peer.id.hex + "/" + (folder ?? "")
            // "a" (all from this sender) covers its folders too.
            if let answer = standing[key] ?? (standing[peer.id.hex + "/"] == true ? true : nil) {
                asker.answer.resume(returning: answer)
                return
            }
            guard interactive else {
                asker.answer.resume(returning: false)
                declined("\(Terminal.sanitize(info.name)) from \(name); use --yes, or --from \(PeerTarget.fromName(peer))")
                return
            }
            if let folder {
                // Later offers of the folder wait behind this question and take its answer.
                if questions.queue.waiting.contains(where: { $0.key == key }) {
                    _ = questions.queue.ask("", key: key, asker: asker)
                    return
                }
                _ = questions.queue.ask("\(name) offers the folder \(Terminal.sanitize(folder)) (first file \(Terminal.sanitize(info.name)), "
                                + "\(TransferView.bytes(info.size))) — accept everything in it?", key: key, asker: asker)
            } else {
                named.withLockedValue { _ = $0.insert(Self.key(info)) }
                _ = questions.queue.ask("\(name) offers \(Terminal.sanitize(info.name)) (\(TransferView.bytes(info.size)), \(Terminal.sanitize(info.mediaType)))\(Self.risks(offer)) — accept? (a: all from \(name))",
                                key: key, asker: asker)
            }
        }
    }

    /// Names what a yes would let through beyond plain files: " — includes hidden paths: .ssh/authorized_keys
    /// — executable: run.sh"; empty when there is nothing of the kind.
    static func risks(_ offer: IncomingOffer) -> String {
        var text = ""
        let hidden = offer.hiddenPaths, executable = offer.executablePaths
        if !hidden.isEmpty { text += " — includes hidden paths: \(list(hidden))" }
        if !executable.isEmpty { text += " — executable: \(list(executable))" }
        return text
    }

    /// Up to `limit` peer-given names, sanitized, then "and N more".
    static func list(_ names: [String], limit: Int = 5) -> String {
        let shown = names.prefix(limit).map { Terminal.sanitize($0) }.joined(separator: ", ")
        return names.count > limit ? "\(shown) and \(names.count - limit) more" : shown
    }

    private static func key(_ info: TransferInfo) -> String { "\(info.peer.id.hex)/\(info.id)" }

    private func declined(_ what: String) {
        if options.json { return }  // The transfer-failed event says it.
        Output.error(Terminal.paint("p2p: declined \(what)", .yellow))
    }

    private func answerShown(_ answer: PromptQueue<AskedQuestion>.Answer) {
        guard let shown = questions.queue.shown else { return }
        let isFolder: Bool
        if case .offer(let offer) = shown.asker.question { isFolder = Self.folder(of: offer.info.name.raw) != nil } else { isFolder = false }
        // A folder's answer covers the whole folder; "a" covers the sender's loose files.
        let all = answer == .all || isFolder
        let yes = answer != .no
        if let key = shown.key, all { standing[key] = yes }
        for prompt in questions.queue.answerShown(all ? .all : answer) {
            if !prompt.question.isEmpty { Output.line(Terminal.paint("\(prompt.question) \(yes ? "yes" : "no")", .yellow)) }
            if yes, case .connection(let request) = prompt.asker.question { policy.accepted(request.peer.id) }
            prompt.asker.answer.resume(returning: yes)
        }
    }

    private func withdraw(_ token: UInt64) {
        guard let (prompt, _) = questions.withdraw(token), !prompt.question.isEmpty, !options.json else { return }
        let name = Terminal.sanitize(prompt.asker.question.peer.displayName)
        switch prompt.asker.question {
        case .connection: Output.line(Terminal.paint("* \(name) gave up waiting for an answer.", .dim))
        case .offer(let offer): Output.line(Terminal.paint("* \(name) withdrew \(Terminal.sanitize(offer.info.name)).", .dim))
        }
    }

    private func render() {
        guard let shown = questions.queue.shown else {
            // Erased only if one was drawn: erasing the line after every event wiped the progress line.
            if questionDrawn { Output.setInputLine(nil) }
            questionDrawn = false
            return
        }
        let choices = shown.key.map(Self.isLooseKey) == true ? "[y/n/a]" : "[y/n]"
        Output.setInputLine(InputLine(prompt: Terminal.paint("\(shown.question) \(choices) ", .yellow)))
        questionDrawn = true
    }

    /// Keys of loose files end right after the sender's ID ("<id>/"); a folder's go on ("<id>/many/").
    private static func isLooseKey(_ key: String) -> Bool { key.firstIndex(of: "/") == key.index(before: key.endIndex) }

    // MARK: - Events

    private func show(_ event: TransferEvent) {
        if let info = event.info, TextTransfer.isText(info), showText(event) { return }
        view.handle(event)
        defer {
            if event.isEnd, let info = event.info, started.remove(info.id) != nil {
                batches[info.peer.id]?.running -= 1
                if let batch = batches[info.peer.id], batch.left, batch.running == 0 { summarize(info.peer.id) }
            }
        }
        // Only the ends of a transfer need it: not built for each of a tree's per-file events.
        var key: String { event.info.map { "\($0.peer.id.hex)/\($0.name)" } ?? "" }
        switch event {
        case .started(let info, let offset):
            started.insert(info.id)
            tally.active += 1
            batches[info.peer.id, default: Batch(name: info.peer.displayName.description)].current = (info.name, 0, info.size)
            batches[info.peer.id]?.spared = offset
            batches[info.peer.id]?.running += 1
            batches[info.peer.id]?.left = false
            if info.isTree { batches[info.peer.id]?.tree = (0, info.fileCount) }
        case .fileFinished(let info, let delivery):
            batches[info.peer.id]?.tree?.done += 1
            batches[info.peer.id]?.counts.add(delivery)
        case .fileFailed(let info, _, .skipped):
            // Left out as the answer said (a hidden path): reported, not a failure here.
            batches[info.peer.id]?.counts.skipped += 1
            batches[info.peer.id]?.tree?.done += 1
        case .fileFailed(let info, _, _):
            tally.failed += 1
            batches[info.peer.id]?.counts.failed += 1
            batches[info.peer.id]?.tree?.done += 1
        case .treeFinished(let info, let report):
            tally.active -= 1
            tally.received += report.deliveries.count
            tally.interrupted.remove(key)
            batches[info.peer.id]?.counts.moved += report.bytesSent
            batches[info.peer.id]?.current = nil
            batches[info.peer.id]?.spared = 0
            batches[info.peer.id]?.tree = nil
            drawProgress(info.peer.id, force: true)
        case .progress(let info, let done):
            batches[info.peer.id]?.current = (info.name, done, info.size)
            drawProgress(info.peer.id)
        case .finished(let info, let delivery):
            tally.active -= 1
            tally.received += 1
            tally.interrupted.remove(key)
            batches[info.peer.id, default: Batch(name: info.peer.displayName.description)].counts.add(delivery)
            batches[info.peer.id]?.counts.moved += info.size - min(info.size, delivery.resumedFrom)
            batches[info.peer.id]?.current = nil
            drawProgress(info.peer.id, force: true)
        case .failed(let info, let error) where !started.contains(info.id):
            // An offer that never started: declined, withdrawn before the answer (its question went away
            // with a note), or refused (a hostile name).
            switch error {
            case .denied, .skipped: tally.denied += 1
            case .cancelledByPeer, .peerDisconnected: break
            default: tally.failed += 1
            }
        case .failed(let info, .peerDisconnected):
            tally.active = max(0, tally.active - 1)
            tally.interrupted.insert(key)
            batches[info.peer.id]?.current = nil
            clearProgress()
            if !options.json && !tally.leaving {
                Output.line(Terminal.paint("* Waiting for \(Terminal.sanitize(info.peer.displayName)) to resume \(Terminal.sanitize(info.name)) (run the same send again; Ctrl-C to stop).", .dim))
            }
        case .failed(let info, let error):
            tally.active = max(0, tally.active - 1)
            tally.failed += 1
            // The files of the transfer that had not arrived: cancelled (by whom), or failed.
            let left = batches[info.peer.id]?.tree.map { $0.files - $0.done } ?? 1
            switch error {
            case .cancelled: batches[info.peer.id]?.counts.cancel(left, by: nil)
            case .cancelledByPeer(let reason) where reason.raw == FileTransfers.senderCancelledReason || reason.raw == FileTransfers.receiverCancelledReason:
                batches[info.peer.id]?.counts.cancel(left, by: info.peer.displayName.description)
            default: batches[info.peer.id]?.counts.failed += left
            }
            if let batch = batches[info.peer.id], let current = batch.current {
                batches[info.peer.id]?.counts.moved += current.done - min(current.done, batch.spared)
            }
            batches[info.peer.id]?.current = nil
            batches[info.peer.id]?.tree = nil
            batches[info.peer.id]?.spared = 0
            if case .cancelledByPeer = error { tally.cancelled = true }
        case .offered, .eventsDropped:
            break
        }
    }

    /// A text's events but its failure (reported like a file's): true when handled.
    private func showText(_ event: TransferEvent) -> Bool {
        switch event {
        case .started(let info, _):
            view.handle(event)  // It knows then that the sender got past its offer.
            started.insert(info.id)
            tally.active += 1
        case .finished(let info, let delivery):
            started.remove(info.id)
            tally.active -= 1
            guard let bytes = TextTransfer.take(delivery) else {
                tally.failed += 1
                Output.error(Terminal.paint("p2p: the text from \(Terminal.sanitize(info.peer.displayName)) arrived but cannot be read", .red))
                return true
            }
            tally.received += 1
            tally.textArrived = true
            clearProgress()
            let text = TextTransfer.printable(bytes)
            if options.json {
                Output.json(["event": "text", "peer": info.peer.displayName, "id": info.peer.id.hex, "text": String(decoding: bytes, as: UTF8.self),
                             "characters": text.count, "sha256": delivery.sha256])
            } else if options.text && !Terminal.stdoutIsTTY {
                Output.data(text)
            } else {
                let (header, footer) = Self.textFrame(from: info.peer.displayName.description)
                Output.line(Terminal.paint(header, .bold))
                let body = text.hasSuffix("\n") ? String(text.dropLast()) : text
                // --text: on standard output, where the text belongs; else a line among the others (above a question).
                if options.text { Output.data(body + "\n") } else { Output.line(body) }
                Output.line(Terminal.paint(footer, .dim))
            }
        case .failed:
            return false
        default:
            break
        }
        return true
    }

    /// The lines around a text shown on a terminal; nothing on its lines, so that it copies as sent.
    static func textFrame(from peer: String) -> (header: String, footer: String) {
        ("\(Terminal.sanitize(peer)) sent a text:", "── end of text ──")
    }

    private func show(_ event: SessionEvent) {
        clearProgress()
        switch event {
        case .peerChanged(let peer, .connected, _):
            if !options.json { Output.line(Terminal.paint("* \(PeerTarget.label(peer)) connected.", .dim)) }
        case .peerChanged(let peer, .disconnected, let reason):
            if let batch = batches[peer.id], batch.running > 0 { batches[peer.id]?.left = true } else { summarize(peer.id) }
            standing = standing.filter { !$0.key.hasPrefix(peer.id.hex + "/") }
            guard !options.json else { break }
            if case .refusedAsUntrusted(let why) = reason {
                // A sender that has this name pinned to another key refused us: say so, not that it left.
                let name = Terminal.sanitize(peer.displayName)
                Output.line(Terminal.paint("* \(name) refused this machine's key; \(name) says: \(Terminal.sanitize(why))", .yellow))
            } else {
                Output.line(Terminal.paint("* \(Terminal.sanitize(peer.displayName)) left\(options.once ? "." : "; waiting for the next sender (Ctrl-C to stop).")", .dim))
            }
        case .advertising(let name):
            // The name DNS-SD registered: "NAME #2" (avahi) or "NAME (2)" when another peer has NAME.
            let requested = options.network.displayName
            if options.json {
                Output.json(["event": "advertising", "name": name, "requested": requested])
            } else if !requested.hasPrefix(name) {  // a prefix: a name over 63 bytes, cut to fit DNS-SD
                Output.line(ConnectProgress.renamed(to: name, from: requested))
            }
        case .discoveryFailed(let error):
            DiscoveryNotice.show(error, json: options.json)
        default:
            break
        }
    }

    /// The one progress line: the sender, files so far, bytes, rate, and the file under way.
    private func drawProgress(_ peer: PeerID, force: Bool = false) {
        guard !options.json, !options.network.verbose, Terminal.stderrIsTTY, questions.queue.shown == nil, var batch = batches[peer] else { return }
        let now = ContinuousClock.now
        guard force || now - batch.lastDrawn >= .milliseconds(100) else { return }
        batch.lastDrawn = now
        batches[peer] = batch
        let inFlight = (batch.current?.done ?? 0) - min(batch.current?.done ?? 0, batch.spared)
        let rate = Self.rate(batch.counts.moved + inFlight, since: batch.began)
        if let tree = batch.tree, let current = batch.current {
            // A tree: files n/N, bytes of the whole, rate and what is left.
            let eta = rate > 0 ? " ETA \(Int(Double(current.size - min(current.done, current.size)) / rate)) s" : ""
            let line = "↓ \(Terminal.sanitize(batch.name)): \(tree.done)/\(Self.count(tree.files, "file")), "
                + "\(TransferView.bytes(current.done))/\(TransferView.bytes(current.size)), \(TransferView.bytes(UInt64(rate)))/s\(eta) · \(Terminal.sanitize(current.name))"
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
            progressDrawn = true
            return
        }
        var line = "↓ \(Terminal.sanitize(batch.name)): \(Self.count(batch.counts.files, "file")), \(TransferView.bytes(batch.counts.bytes + inFlight)), \(TransferView.bytes(UInt64(rate)))/s"
        if let current = batch.current {
            let percent = current.size == 0 ? 100 : Int(Double(current.done) * 100 / Double(current.size))
            line += " · \(Terminal.sanitize(String(current.name.raw.suffix(40)))) \(percent)%"
        }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        progressDrawn = true
    }

    /// Takes the progress line off the screen, so that the next line starts at its beginning.
    private func clearProgress() {
        guard progressDrawn else { return }
        progressDrawn = false
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    /// One line for what a sender sent, when it leaves (or the receiver stops).
    private func summarize(_ peer: PeerID) {
        guard let batch = batches.removeValue(forKey: peer), !options.json, !batch.counts.isEmpty else { return }
        clearProgress()
        let elapsed = ContinuousClock.now - batch.began
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        Output.line(Self.summary(batch.counts, from: batch.name, seconds: seconds, into: directory.path))
    }

    /// What one sender's transfers came to; `summary` words it.
    struct SummaryCounts {
        /// Files that arrived and matched their SHA-256, and their bytes.
        var files = 0, bytes: UInt64 = 0
        /// Bytes that travelled in this run, counted as each transfer ends (not those already here: a resumed
        /// prefix, a file already there): the rate's.
        var moved: UInt64 = 0
        var alreadyThere = 0, skipped = 0, failed = 0
        /// Files that did not arrive because the transfer was cancelled, and by whom (nil: here).
        var cancelled = 0, cancelledBy: String?
        /// The one file, when only one arrived.
        var lastFile: (name: String, path: String?)?

        var isEmpty: Bool { files + alreadyThere + skipped + failed + cancelled == 0 }

        mutating func add(_ delivery: Delivery) {
            if delivery.alreadyThere { alreadyThere += 1; return }
            files += 1
            bytes += delivery.size
            lastFile = (delivery.name, delivery.url?.path)
        }

        mutating func cancel(_ count: Int, by peer: String?) {
            cancelled += count
            cancelledBy = peer
        }
    }

    /// The summary line: what arrived verified (only that is called verified), then what was already there,
    /// skipped, failed and cancelled. The rate counts the bytes that travelled, not those already here.
    static func summary(_ counts: SummaryCounts, from peer: String, seconds: Double, into directory: String) -> String {
        let name = Terminal.sanitize(peer)
        let rate = TransferView.bytes(UInt64(seconds > 0 ? Double(counts.moved) / seconds : 0))
        var notes: [String] = []
        if counts.alreadyThere > 0 { notes.append("\(counts.alreadyThere) already there (same SHA-256), left as they were") }
        if counts.skipped > 0 { notes.append("\(counts.skipped) skipped (hidden paths; --allow-hidden writes them)") }
        if counts.failed > 0 { notes.append("\(counts.failed) failed") }
        if counts.cancelled > 0 {
            let by = counts.cancelledBy.map { "cancelled by \(Terminal.sanitize($0))" } ?? "cancelled here"
            notes.append("\(count(counts.cancelled, "file")) did not arrive (\(by))")
        }
        let rest = notes.isEmpty ? "" : "; " + notes.joined(separator: "; ")
        if counts.files == 0 { return "Received no file from \(name)\(rest)" }
        if counts.files == 1, notes.isEmpty, let file = counts.lastFile {
            return "Received \(Terminal.sanitize(file.name)) (\(TransferView.bytes(counts.bytes)), \(rate)/s) from \(name)"
                + (file.path.map { " → \(Terminal.sanitize($0))" } ?? "") + "; SHA-256 verified"
        }
        let each = counts.files == 1 ? "verified" : "each verified"
        return "Received \(count(counts.files, "file")) (\(TransferView.bytes(counts.bytes))) from \(name) in \(String(format: "%.1f", seconds)) s "
            + "(\(rate)/s) into \(Terminal.sanitize(directory)); \(each) by SHA-256\(rest)"
    }

    /// "1 file", "2,000 files".
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))) \(noun)\(number == 1 ? "" : "s")"
    }

    private static func rate(_ bytes: UInt64, since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(bytes) / seconds : 0
    }
}
