import ArgumentParser

/// `p2p bench`: measures the session against raw TCP on this machine.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Measure round trip, throughput and discovery time.")
    func run() async throws {}
}
