import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import P2P

/// Sending and counting: every peer sends to every other, every receiver counts each message by ID.
extension MeshBench {
    /// The message ID: run tag, phase, sender index, sequence number.
    public func messageID(phase: UInt8, sender: Int, sequence: Int) -> UInt64 {
        UInt64(runTag) << 48 | UInt64(phase) << 40 | UInt64(sender) << 32 | UInt64(sequence)
    }

    public func deliver(phase: UInt8, senders: [Int], perSender: Int) async -> DeliveryResult {
        let others = options.peers - 1
        let expected = senders.count * perSender * others
        let total = NIOLockedValueBox(TotalDeliveries(expected: expected))
        for tally in tallies {
            tally.reset(runTag: runTag, phase: phase, peers: options.peers, perSender: perSender, total: total)
        }
        let errors = NIOLockedValueBox<[String]>([])
        let peerIDs = sessions.map(\.peerID)
        let padding = String(repeating: "x", count: max(0, options.textBytes - 16))
        let rssBefore = Memory.residentBytes()
        Memory.resetPeak()
        let start = benchNow()
        let paced = options.paced
        await withTaskGroup(of: Void.self) { group in
            for sender in senders {
                let session = sessions[sender]
                let targets = peerIDs.enumerated().filter { $0.offset != sender }.map(\.element)
                group.addTask { [self] in
                    @Sendable func text(_ sequence: Int) -> TextMessage {
                        TextMessage(id: messageID(phase: phase, sender: sender, sequence: sequence), text: "\(sender)/\(sequence) " + padding)
                    }
                    do {
                        if paced {
                            for sequence in 0..<perSender { try await session.sendWhenWritable(text(sequence), to: targets) }
                            if options.injectDuplicate && phase == 1 && sender == 0 && perSender > 0 {
                                try await session.sendWhenWritable(text(0), to: targets)
                            }
                        } else {
                            // From an application thread, as fast as `send` returns: what the sockets cannot take yet queues.
                            try await onThread {
                                for sequence in 0..<perSender { try session.send(text(sequence), to: targets) }
                            }
                        }
                    } catch {
                        errors.withLockedValue { $0.append("peer \(sender): \(error)") }
                    }
                }
            }
        }
        let sendDone = benchNow()
        let deadline = start + UInt64(options.deliveryTimeout * 1e9)
        var finishedAt: UInt64?
        while true {
            let (count, at) = total.withLockedValue { ($0.count, $0.finishedAt) }
            if count >= expected { finishedAt = at; break }
            if benchNow() > deadline { break }
            try? await Task.sleep(for: .milliseconds(2))
        }
        // Anything still in flight (a duplicate after the last expected message) gets a moment to arrive.
        try? await Task.sleep(for: .milliseconds(200))
        let growth = Memory.peakResidentBytes().flatMap { peak in rssBefore.map { max(0, peak - $0) } }
        var result = DeliveryResult(sent: senders.count * perSender, expectedDeliveries: expected, deliveries: 0, missing: 0, duplicates: 0,
                                    strays: 0, misattributed: 0, nanoseconds: (finishedAt ?? benchNow()) - start,
                                    sendNanoseconds: sendDone - start, peakRSSGrowth: growth, sendErrors: errors.withLockedValue { $0 })
        for (receiver, tally) in tallies.enumerated() {
            let counts = tally.summary(receiver: receiver, senders: Set(senders))
            result.deliveries += counts.deliveries
            result.missing += counts.missing
            result.duplicates += counts.duplicates
            result.strays += counts.strays
            result.misattributed += counts.misattributed
        }
        return result
    }
}

/// Deliveries counted by every receiver together, and when the last expected one arrived.
public struct TotalDeliveries: Sendable {
    public var expected: Int
    public var count = 0
    public var finishedAt: UInt64?
}

/// One receiver's count of each message of the current phase, by sender and sequence number.
/// Written from the receiving session's event loops, read after the phase.
public final class DeliveryTally: Sendable {
    private struct Tally {
        public var runTag: UInt16 = 0
        public var phase: UInt8 = 0
        public var perSender = 0
        /// counts[sender * perSender + sequence]; a byte is enough to tell 0, 1 and "more than once".
        public var counts: [UInt8] = []
        public var strays = 0
        public var misattributed = 0
        public var total: NIOLockedValueBox<TotalDeliveries>?
    }
    private let tally = NIOLockedValueBox(Tally())

    public func reset(runTag: UInt16, phase: UInt8, peers: Int, perSender: Int, total: NIOLockedValueBox<TotalDeliveries>) {
        tally.withLockedValue { tally in
            tally = Tally(runTag: runTag, phase: phase, perSender: perSender,
                          counts: [UInt8](repeating: 0, count: peers * perSender), total: total)
        }
    }

    /// Counts one received message; `from` is the index of the peer whose link it came on.
    public func count(_ id: UInt64, from link: Int?) {
        let tag = UInt16(id >> 48), phase = UInt8(id >> 40 & 0xFF), sender = Int(id >> 32 & 0xFF), sequence = Int(id & 0xFFFF_FFFF)
        let total: NIOLockedValueBox<TotalDeliveries>? = tally.withLockedValue { tally in
            guard tag == tally.runTag, phase == tally.phase, sequence < tally.perSender,
                  sender * tally.perSender + sequence < tally.counts.count else {
                tally.strays += 1
                return nil
            }
            if link != sender { tally.misattributed += 1 }
            let slot = sender * tally.perSender + sequence
            tally.counts[slot] &+= tally.counts[slot] == .max ? 0 : 1
            return tally.total
        }
        total?.withLockedValue { total in
            total.count += 1
            if total.count == total.expected { total.finishedAt = benchNow() }
        }
    }

    public func summary(receiver: Int, senders: Set<Int>) -> (deliveries: Int, missing: Int, duplicates: Int, strays: Int, misattributed: Int) {
        tally.withLockedValue { tally in
            var deliveries = 0, missing = 0, duplicates = 0
            let perSender = tally.perSender
            for sender in 0..<(perSender == 0 ? 0 : tally.counts.count / perSender) {
                let range = sender * perSender ..< (sender + 1) * perSender
                for count in tally.counts[range] {
                    deliveries += Int(count)
                    // Nothing should come from a peer that did not send in this phase, nor from ourselves.
                    if senders.contains(sender) && sender != receiver {
                        if count == 0 { missing += 1 } else if count > 1 { duplicates += Int(count) - 1 }
                    } else {
                        duplicates += Int(count)
                    }
                }
            }
            return (deliveries, missing, duplicates, tally.strays, tally.misattributed)
        }
    }
}
