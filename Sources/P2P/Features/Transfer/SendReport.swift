/// How a send ended, as an app reports it, worked out from its ``SendRun/Outcome``s and its events (a
/// ``TransferTally`` fed every one of them): a line per receiver (delivered, with its time and rate, or
/// why not, in the words a person acts on), this side's Ctrl-C that ended the one send, and the verdict
/// that stands for the whole send. Pure: the app prints it and maps verdicts to what it reports (an exit
/// status); the words are ``SendWording``'s.
///
/// ```swift
/// let report = SendReport(outcomes, payload: payload, tally: tally, command: "p2p send notes.txt --to bob")
/// for line in report.lines { print(line.text) }
/// ```
public struct SendReport: Sendable {
    /// This side cancelled the one send (its Ctrl-C).
    public struct Interruption: Sendable, Equatable, CustomStringConvertible {
        /// Whether the receiver had said yes: then the send is cancelled and the line says what it kept;
        /// before that nothing was sent.
        public let afterAccepted: Bool
        /// What the person reads.
        public let description: String
    }

    /// How the send to one receiver ended.
    public struct Line: Sendable {
        /// The receiver.
        public let peer: PeerInfo
        /// The category of its end.
        public let verdict: SendRun.Verdict
        /// What a person reads: `Delivered …`, or why not (after the receiver's name when there are several).
        public let text: String
        /// A text delivered: its `text-sent` event for programs (keys `peer`, `id`, `characters`, `size`, `sha256`).
        public let textSent: [String: any Sendable]?
    }

    /// Set when this side's Ctrl-C ended the one send: then ``lines`` is empty.
    public let interruption: Interruption?
    /// A line per receiver, in the order their sends ended.
    public let lines: [Line]
    /// The worst verdict of the send (``SendRun/worst(_:)``).
    public let verdict: SendRun.Verdict

    /// The report of `outcomes`, the ends of sending `payload`; `tally` has recorded every event of the
    /// send; `command` is the command that runs the send again (said when something is left to send).
    public init(_ outcomes: [SendRun.Outcome], payload: SendRun.Payload, tally: TransferTally, command: String) {
        verdict = SendRun.worst(outcomes)
        if let peer = SendRun.interrupted(outcomes) {
            let name = peer.displayName.description
            interruption = tally.started(with: peer.id)
                ? Interruption(afterAccepted: true,
                               description: SendWording.interrupted(files: 0, bytes: 0, to: name, meter: tally.meter(for: peer.id), command: command))
                : Interruption(afterAccepted: false, description: "interrupted before \(name) accepted; nothing was sent")
            lines = []
            return
        }
        interruption = nil
        lines = outcomes.map { outcome in
            let peer = outcome.peer
            switch outcome.result {
            case .success(let deliveries):
                guard case .text(_, let characters) = payload else {
                    let text = SendWording.delivered(deliveries, to: peer.displayName.description, timing: tally.timing(of: peer.id))
                    return Line(peer: peer, verdict: .delivered, text: text, textSent: nil)
                }
                let event: [String: any Sendable] = ["event": "text-sent", "peer": peer.displayName, "id": peer.id.hex, "characters": characters,
                                                     "size": deliveries.first?.size ?? 0, "sha256": deliveries.first?.sha256 ?? ""]
                return Line(peer: peer, verdict: .delivered, text: SendWording.deliveredText(characters: characters, to: peer.displayName.description),
                            textSent: event)
            case .failure(let error):
                // The receiver's Ctrl-C (or its quitting): what it kept, and the command that sends the rest.
                let text = outcome.cancelledByReceiver
                    ? SendWording.cancelledByReceiver(peer.displayName.description, meter: tally.meter(for: peer.id), command: command)
                    : outcomes.count > 1 ? "\(peer.displayName): \(error)" : error.description
                return Line(peer: peer, verdict: outcome.verdict, text: text, textSent: nil)
            }
        }
    }
}
