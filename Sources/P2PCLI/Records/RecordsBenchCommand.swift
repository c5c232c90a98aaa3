import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import P2P
import P2PBench

/// `p2p records bench`: a big snapshot built, sent between two loopback sessions and merged, timed.
struct RecordsBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Build, send and merge a large snapshot between two loopback sessions; print records/s.",
        discussion: """
            One run: builds --records Task records (text, priority, due date, done flag, a location out of 100), \
            encodes them, sends them over TLS between two sessions on loopback, and merges them into a new \
            SQLite store in a temporary directory. Target: at least 100,000 records/s merged (validation, \
            migration and inserts in one transaction). Build with `swift build -c release` before trusting the figures.
            """
    )

    @Option(help: "Records in the snapshot.")
    var records = 100_000

    @Flag(help: "Print one JSON object with all figures.")
    var json = false

    func validate() throws {
        guard records > 0 else { throw ValidationError("--records must be positive") }
    }

    func run() async throws {
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let clock = ContinuousClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p2p-records-bench-\(UInt64.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        progress("building \(records) records…")
        let origin = Identity.ephemeral().peerID
        var start = clock.now
        let snapshot = Self.snapshot(records: records, origin: origin)
        let buildTime = clock.now - start
        start = clock.now
        let encodedBytes = SnapshotCodec.encode(snapshot).count
        let encodeTime = clock.now - start

        let pair = try await SessionPair.make(sessionID: "records-bench-" + String(UInt64.random(in: 0 ... .max), radix: 36), transport: .tls)
        let store = try StoreOption.open(directory.appendingPathComponent("bench.sqlite").path)
        let timings = NIOLockedValueBox<(received: ContinuousClock.Instant?, merge: Duration?, mergeCPU: Double?)>((nil, nil, nil))
        let receiving = RecordExchange(session: pair.b)
        receiving.onSnapshot { received, _ in
            timings.withLockedValue { $0.received = clock.now }
            guard case .success(let snapshot) = received else { return RecordTransferResult(error: received.error!) }
            let begin = clock.now, beginCPU = Self.threadCPUSeconds()
            do throws(RecordsError) {
                let outcome = try store.merge(snapshot)
                let cpu = Self.threadCPUSeconds() - beginCPU
                timings.withLockedValue { $0.merge = clock.now - begin; $0.mergeCPU = cpu }
                return RecordTransferResult(outcome)
            } catch {
                return RecordTransferResult(error: error)
            }
        }
        progress("sending and merging…")
        start = clock.now
        let result: RecordTransferResult
        do {
            result = try await RecordExchange(session: pair.a).send(snapshot, to: pair.b.peerID)
        } catch {
            await pair.close()
            throw CLIError("the benchmark transfer failed: \(error)", code: ExitStatus.failure)
        }
        let totalTime = clock.now - start
        await pair.close()
        let (received, mergeTime, mergeCPU) = timings.withLockedValue { ($0.received, $0.merge, $0.mergeCPU) }
        guard result.status == .merged, let received, let mergeTime, let mergeCPU, result.outcome.inserted == snapshot.records.count else {
            throw CLIError("the receiver did not merge the snapshot: \(result.message)", code: ExitStatus.failure)
        }
        let transferTime = received - start
        let mergedPerSecond = Double(records) / mergeTime.seconds
        // CPU time of the merging thread: what the merge costs whatever else the machine is doing.
        let mergedPerCPUSecond = Double(records) / mergeCPU
        let endToEndPerSecond = Double(records) / totalTime.seconds
        let pass = mergedPerSecond >= 100_000
        let method = "\(records) Task records (4 attributes, 1 to-one relationship) + 100 Location records, one snapshot of \(encodedBytes) bytes; "
            + "transfer = offer to the receiver's handler (TLS on loopback, 1 MiB window, SHA-256 check, decode); "
            + "merge = validation + table creation + inserts in one SQLite transaction into an empty store; "
            + "machine: nproc=\(Machine.cpuCount), \(Machine.cpuModel); build: \(Machine.buildConfiguration)."
        if json {
            Output.json([
                "records": records, "bytes": encodedBytes,
                "buildMs": round2(buildTime.seconds * 1000), "encodeMs": round2(encodeTime.seconds * 1000),
                "transferMs": round2(transferTime.seconds * 1000), "mergeMs": round2(mergeTime.seconds * 1000),
                "totalMs": round2(totalTime.seconds * 1000), "mergeCPUMs": round2(mergeCPU * 1000),
                "mergedRecordsPerCPUSec": Int(mergedPerCPUSecond.rounded()),
                "mergedRecordsPerSec": Int(mergedPerSecond.rounded()), "endToEndRecordsPerSec": Int(endToEndPerSecond.rounded()),
                "targetAtLeast100kMergedPerSec": pass, "method": method,
            ])
            return
        }
        var table = Table()
        table.add("", "time (ms)", "records/s")
        table.add("build snapshot", (buildTime.seconds * 1000).formatted(1), "")
        table.add("encode (\(encodedBytes) bytes)", (encodeTime.seconds * 1000).formatted(1), (Double(records) / encodeTime.seconds).grouped)
        table.add("send + verify + decode", (transferTime.seconds * 1000).formatted(1), (Double(records) / transferTime.seconds).grouped)
        table.add("validate + merge", (mergeTime.seconds * 1000).formatted(1), mergedPerSecond.grouped)
        table.add("  its thread's CPU time", (mergeCPU * 1000).formatted(1), mergedPerCPUSecond.grouped)
        table.add("send to merged (end to end)", (totalTime.seconds * 1000).formatted(1), endToEndPerSecond.grouped)
        Output.line(table.render())
        Output.line("method: " + method)
        Output.line("target ≥ 100,000 records/s merged: " + (pass ? "PASS" : "MISS") + " (\(mergedPerSecond.grouped))")
    }

    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private func progress(_ text: String) {
        if !json { Output.error(Terminal.paint(text, .dim)) }
    }

    /// The Tasks example's schema with `count` tasks spread over 100 locations.
    static func snapshot(records count: Int, origin: PeerID) -> RecordSnapshot {
        let schema = RecordSchema(name: "Tasks bench", entities: [
            EntityDescription(name: "Task", attributes: [
                AttributeDescription(name: "text", type: .string, optional: false, defaultValue: .string("Text"), minLength: 1, maxLength: 200),
                AttributeDescription(name: "priority", type: .integer16, optional: false, defaultValue: .integer(0), minimum: 0, maximum: 3),
                AttributeDescription(name: "dueDate", type: .date),
                AttributeDescription(name: "done", type: .boolean, optional: false, defaultValue: .boolean(false)),
                AttributeDescription(name: "isOverdue", type: .boolean, transient: true),
            ], relationships: [
                RelationshipDescription(name: "location", destination: "Location", inverse: "tasks"),
            ]),
            EntityDescription(name: "Location", attributes: [
                AttributeDescription(name: "name", type: .string, optional: false),
            ], relationships: [
                RelationshipDescription(name: "tasks", destination: "Task", toMany: true, inverse: "location"),
            ]),
        ])
        let modified = Date(timeIntervalSince1970: 1_750_000_000)
        let due = Date().addingTimeInterval(30 * 86400)
        var records: [Record] = []
        records.reserveCapacity(count + 100)
        for index in 0..<100 {
            records.append(Record(id: "location-\(index)", entity: "Location", values: ["name": .string("Room \(index)")], modified: modified, origin: origin))
        }
        for index in 0..<count {
            records.append(Record(id: "task-\(index)", entity: "Task", values: [
                "text": .string("Task number \(index)"), "priority": .integer(Int64(index % 3)),
                "dueDate": .date(due.addingTimeInterval(Double(index))), "done": .boolean(index % 2 == 0),
            ], relationships: ["location": "location-\(index % 100)"], modified: modified, origin: origin))
        }
        return RecordSnapshot(schema: schema, records: records, origin: origin)
    }
}

extension Result where Failure == RecordsError {
    fileprivate var error: RecordsError? { if case .failure(let e) = self { e } else { nil } }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
