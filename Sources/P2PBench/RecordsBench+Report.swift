import Foundation

extension RecordsBench {
    /// The times of one run, the target, and how they were measured.
    public struct Report: Sendable {
        public let records: Int
        public var encodedBytes = 0
        public var build = Duration.zero, encode = Duration.zero
        /// From the offer to the receiver's handler (TLS, SHA-256 check, decode).
        public var transfer = Duration.zero
        /// Validation and merge in one SQLite transaction.
        public var merge = Duration.zero
        /// Send to merged, end to end.
        public var total = Duration.zero
        /// CPU time of the merging thread: what the merge costs whatever else the machine is doing.
        public var mergeCPUSeconds = 0.0

        public var mergedPerSecond: Double { Double(records) / merge.seconds }
        public var mergedPerCPUSecond: Double { Double(records) / mergeCPUSeconds }
        public var endToEndPerSecond: Double { Double(records) / total.seconds }
        /// Target: at least 100,000 records/s merged.
        public var pass: Bool { mergedPerSecond >= 100_000 }

        public var method: String {
            "\(records) Task records (4 attributes, 1 to-one relationship) + 100 Location records, one snapshot of \(encodedBytes) bytes; "
                + "transfer = offer to the receiver's handler (TLS on loopback, 1 MiB window, SHA-256 check, decode); "
                + "merge = validation + table creation + inserts in one SQLite transaction into an empty store; "
                + "machine: nproc=\(Machine.cpuCount), \(Machine.cpuModel); build: \(Machine.buildConfiguration)."
        }

        /// All figures as one JSON object.
        public var json: [String: Any] {
            [
                "records": records, "bytes": encodedBytes,
                "buildMs": round2(build.seconds * 1000), "encodeMs": round2(encode.seconds * 1000),
                "transferMs": round2(transfer.seconds * 1000), "mergeMs": round2(merge.seconds * 1000),
                "totalMs": round2(total.seconds * 1000), "mergeCPUMs": round2(mergeCPUSeconds * 1000),
                "mergedRecordsPerCPUSec": Int(mergedPerCPUSecond.rounded()),
                "mergedRecordsPerSec": Int(mergedPerSecond.rounded()), "endToEndRecordsPerSec": Int(endToEndPerSecond.rounded()),
                "targetAtLeast100kMergedPerSec": pass, "method": method,
            ]
        }

        /// The figures as a table and the lines under it, for a person.
        public var text: String {
            var table = Table()
            table.add("", "time (ms)", "records/s")
            table.add("build snapshot", (build.seconds * 1000).formatted(1), "")
            table.add("encode (\(encodedBytes) bytes)", (encode.seconds * 1000).formatted(1), (Double(records) / encode.seconds).grouped)
            table.add("send + verify + decode", (transfer.seconds * 1000).formatted(1), (Double(records) / transfer.seconds).grouped)
            table.add("validate + merge", (merge.seconds * 1000).formatted(1), mergedPerSecond.grouped)
            table.add("  its thread's CPU time", (mergeCPUSeconds * 1000).formatted(1), mergedPerCPUSecond.grouped)
            table.add("send to merged (end to end)", (total.seconds * 1000).formatted(1), endToEndPerSecond.grouped)
            return [table.render(), "method: " + method,
                    "target ≥ 100,000 records/s merged: " + (pass ? "PASS" : "MISS") + " (\(mergedPerSecond.grouped))"].joined(separator: "\n")
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
