import Foundation

/// One transfer's progress as both ends show it, in the same words: files n/N (a send of several files),
/// bytes of the whole, the percentage, the rate and the time left; and the time and rate a summary gives.
/// A value fed numbers and instants: it reads no clock and draws nothing (an app draws its line, `p2p`
/// on its status line), so what a person reads is tested without a terminal. Peer-given names are
/// sanitized in the line.
public struct TransferMeter: Sendable {
    /// Which way the bytes go, seen from this side: `↑ many/ to bob`, `↓ many/ from alice`.
    public let direction: TransferDirection
    /// What was offered (`many/`, `big.bin`, `3 items`) and the other side: peer text, sanitized here.
    public let name: String, peer: String
    /// The whole send's bytes, and its files (1 for a single file).
    public let size: UInt64, files: Int
    /// When the bytes started to flow.
    public let began: ContinuousClock.Instant
    /// Bytes of the send done (arrived, or held already by the receiver), and files done (nil: not known).
    public var done: UInt64 = 0, filesDone: Int?
    /// Bytes that travelled since `began` (not those held already): the rate's.
    public var moved: UInt64 = 0

    /// A meter for a transfer that started at `began`, nothing done yet.
    public init(_ direction: TransferDirection, name: String, peer: String, size: UInt64, files: Int, began: ContinuousClock.Instant) {
        (self.direction, self.name, self.peer, self.size, self.files, self.began) = (direction, name, peer, size, files, began)
    }

    /// Whole percent of the bytes done (100 for an empty send).
    public var percent: Int { size == 0 ? 100 : Int(Double(min(done, size)) * 100 / Double(size)) }

    /// Mean bytes per second of what travelled since `began`.
    public func rate(at now: ContinuousClock.Instant) -> Double {
        let seconds = Self.seconds(now - began)
        return seconds > 0 ? Double(moved) / seconds : 0
    }

    /// Seconds left at the mean rate; nil while nothing has travelled.
    public func secondsLeft(at now: ContinuousClock.Instant) -> Int? {
        let rate = rate(at: now)
        guard rate > 0 else { return nil }
        return Int((Double(size - min(done, size)) / rate).rounded(.up))
    }

    /// The progress line: `↑ many/ to bob: 812/2,000 files, 3.1 MiB of 7.8 MiB, 40%, 2.4 MiB/s, 2 s left`;
    /// a single file has no file count, and rate and time left wait for the first bytes to travel.
    public func line(at now: ContinuousClock.Instant) -> String {
        let arrow = direction == .sending ? "↑" : "↓"
        let toward = direction == .sending ? "to" : "from"
        var parts: [String] = []
        if files > 1 { parts.append("\(ByteCount.describeCount(min(filesDone ?? 0, files)))/\(ByteCount.describeCount(files, "file"))") }
        parts.append("\(ByteCount.describe(min(done, size))) of \(ByteCount.describe(size))")
        parts.append("\(percent)%")
        if let left = secondsLeft(at: now) {
            parts.append("\(ByteCount.describe(UInt64(rate(at: now))))/s")
            parts.append("\(Self.duration(left)) left")
        }
        let label = String(PeerText.sanitized(name).suffix(40))
        return "\(arrow) \(label) \(toward) \(PeerText.sanitized(peer)): " + parts.joined(separator: ", ")
    }

    /// A summary's time and rate: `in 3.2 s (2.4 MiB/s)`; only the time when nothing travelled.
    public static func timeAndRate(seconds: Double, moved: UInt64) -> String {
        let time = "in " + String(format: "%.1f", seconds) + " s"
        guard moved > 0 else { return time }
        let rate = seconds > 0 ? Double(moved) / seconds : 0
        return time + " (\(ByteCount.describe(UInt64(rate)))/s)"
    }

    /// `42 s`, `3 min 5 s`, `2 h 10 min`.
    public static func duration(_ seconds: Int) -> String {
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min \(seconds % 60) s" }
        return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }

    /// A duration in seconds.
    public static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

extension ByteCount {
    /// "812", "2,000": a count grouped as the file counts are.
    public static func describeCount(_ number: Int) -> String {
        number.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
    }

    /// "1 file", "2,000 files".
    public static func describeCount(_ number: Int, _ noun: String) -> String {
        "\(describeCount(number)) \(noun)\(number == 1 ? "" : "s")"
    }
}

extension ReceiveLedger.Sender {
    /// The sender's progress line: its transfer under way (`↓ many/ from alice: 1/4 files, …`), or what it
    /// sent so far between two (`↓ alice: 3 files, 1.2 MiB, 400.0 KiB/s`).
    public func progressLine(at now: ContinuousClock.Instant) -> String {
        let inFlight = (current?.done ?? 0) - min(current?.done ?? 0, spared)
        guard let current else {
            let seconds = TransferMeter.seconds(now - began)
            let rate = UInt64(seconds > 0 ? Double(counts.moved) / seconds : 0)
            return "↓ \(PeerText.sanitized(name)): \(ByteCount.describeCount(counts.files, "file")), \(ByteCount.describe(counts.bytes)), \(ByteCount.describe(rate))/s"
        }
        var meter = TransferMeter(.receiving, name: current.name.description, peer: name, size: current.size, files: tree?.files ?? 1, began: began)
        meter.done = current.done
        meter.filesDone = tree?.done
        meter.moved = counts.moved + inFlight
        return meter.line(at: now)
    }
}
