import Foundation

/// Percentiles of nanosecond samples, in microseconds.
public struct LatencySummary {
    public var p50: Double
    public var p99: Double
    public var mean: Double

    public init(_ samples: [UInt64]) {
        let sorted = samples.sorted()
        func at(_ q: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) / 1000
        }
        p50 = at(0.50)
        p99 = at(0.99)
        mean = sorted.isEmpty ? .nan : Double(sorted.reduce(0, +)) / Double(sorted.count) / 1000
    }

    public var json: [String: Any] { ["p50Us": round2(p50), "p99Us": round2(p99), "meanUs": round2(mean)] }
}

/// Messages and bytes per second of one measured run.
public struct Throughput {
    public var messagesPerSecond: Double
    public var megabytesPerSecond: Double

    public init(messages: Int, bytes: Int, nanoseconds: UInt64) {
        let seconds = Double(max(nanoseconds, 1)) / 1e9
        messagesPerSecond = Double(messages) / seconds
        megabytesPerSecond = Double(bytes) / seconds / 1e6
    }

    public var json: [String: Any] { ["msgsPerSec": Int(messagesPerSecond.rounded()), "mbPerSec": round2(megabytesPerSecond)] }

    /// The round with the median message rate.
    public static func median(_ rounds: [Throughput]) -> Throughput {
        let sorted = rounds.sorted { $0.messagesPerSecond < $1.messagesPerSecond }
        return sorted[sorted.count / 2]
    }
}

/// CPU time (user + system) of the whole process, in nanoseconds: what a phase cost regardless of
/// how long other processes kept it waiting.
public func processCPUTime() -> UInt64 {
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func ns(_ t: timeval) -> UInt64 { UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1000 }
    return ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// Runs `body` and also returns the process CPU time it took.
public func cpuTimed<T>(_ body: () async throws -> T) async rethrows -> (T, UInt64) {
    let before = processCPUTime()
    let result = try await body()
    return (result, processCPUTime() - before)
}

/// CPU time spent over a number of round trips or messages.
public struct CPUTally {
    /// An empty one.
    public init() {}

    private var nanoseconds: UInt64 = 0
    private var items = 0
    public mutating func add(_ cpu: UInt64, count: Int) {
        nanoseconds += cpu
        items += count
    }
    public var microsPerItem: Double { items == 0 ? .nan : Double(nanoseconds) / Double(items) / 1000 }
}

public func round2(_ value: Double) -> Double { value.isFinite ? (value * 100).rounded() / 100 : 0 }

public func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// What the figures were measured on: cores, CPU model, load, build configuration.
public enum Machine {
    public static var cpuCount: Int { ProcessInfo.processInfo.activeProcessorCount }

    public static var cpuModel: String {
        #if os(Linux)
        if let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = text.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let colon = line.firstIndex(of: ":") {
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        #endif
        return "unknown CPU"
    }

    /// The 1-minute load average: how busy the machine was (other processes skew the figures).
    public static var loadAverage: Double? {
        var loads = [Double](repeating: 0, count: 3)
        guard getloadavg(&loads, 3) >= 1 else { return nil }
        return round2(loads[0])
    }

    public static var buildConfiguration: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }
}

/// Fixed-width table rows.
public struct Table {
    /// An empty one.
    public init() {}

    private var rows: [[String]] = []
    public mutating func add(_ cells: String...) { rows.append(cells) }

    public func render() -> String {
        let widths = (0..<(rows.map(\.count).max() ?? 0)).map { column in
            rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == 0 ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

extension Double {
    public func formatted(_ digits: Int) -> String { String(format: "%.\(digits)f", self) }

    /// `digits` significant digits: 0.0043, 1.2, 35.
    public func significant(_ digits: Int) -> String { String(format: "%.\(digits)g", self) }

    /// 1234567 → "1,234,567".
    public var grouped: String {
        let digits = String(Int(rounded()))
        var out = ""
        for (i, c) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 && c != "-" { out.append(",") }
            out.append(c)
        }
        return String(out.reversed())
    }
}
