import ArgumentParser
import Foundation
import P2PBench

/// `p2p bench crypto`: what a verified, encrypted transfer must spend on cryptography alone, per GiB,
/// on one core of this machine: the floor under any transfer's CPU time.
struct CryptoBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crypto",
        abstract: "Measure SHA-256 and AES-GCM per GiB on one core: the cryptography floor of a verified, encrypted transfer.",
        discussion: """
            Hashes --size MiB of memory with SHA-256 and seals it with AES-128-GCM and ChaCha20-Poly1305, \
            in 1 MiB pieces (the transfer's chunk), one thread, with the library p2p itself uses \
            (swift-crypto on BoringSSL, which uses SHA and AES instructions where the CPU has them). \
            Each figure is the median of --runs and is given as CPU seconds per GiB. A transfer hashes \
            every byte on both ends and encrypts and decrypts it once (TLS 1.3 picks AES-128-GCM on \
            CPUs with AES instructions), so two SHA-256 and two AES-GCM passes are the least it adds \
            to what a plain copy (socat) spends. Benchmarks/transfer.sh prints that floor beside the \
            transfer figures.
            """
    )

    @Option(help: "MiB of data per measurement.")
    var size = 1024

    @Option(help: "Measurements of each primitive (the median is reported).")
    var runs = 3

    @Flag(help: "Print one JSON object with all figures.")
    var json = false

    func validate() throws {
        guard size > 0, runs > 0 else { throw ValidationError("--size and --runs must be positive") }
    }

    func run() async throws {
        let figures = try CryptoBench(mebibytes: size, runs: runs).measure()
        if json {
            var object = ["mib": "\(size)", "runs": "\(runs)"]
            for figure in figures { object[figure.key] = String(format: "%.4f", figure.cpuSecondsPerGiB) }
            let body = object.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
            print("{\(body)}")
        } else {
            print("One core, \(size) MiB in 1 MiB pieces, median of \(runs):")
            for figure in figures {
                let perGiB = figure.cpuSecondsPerGiB
                print("  \(figure.name): \(String(format: "%.3f", perGiB)) CPU-s per GiB (\(String(format: "%.0f", 1024 / perGiB)) MiB/s)")
            }
        }
    }
}
