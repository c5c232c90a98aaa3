import ArgumentParser

/// `p2p bench`: the benchmarks; without a subcommand, the session one (round trip, messages/s, discovery).
struct BenchGroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure round trip, throughput and discovery time (session), a many-peer mesh (mesh), or the cryptography floor of a transfer (crypto).",
        subcommands: [BenchCommand.self, MeshBenchCommand.self, CryptoBenchCommand.self],
        defaultSubcommand: BenchCommand.self
    )
}
