// libFuzzer entry points for every decoder of peer bytes (run them with scripts/fuzz.sh).
//
// One binary, many targets: P2P_FUZZ_TARGET picks the decoder a run fuzzes (`P2P_FUZZ_TARGET=list`
// prints them). Why not one executable per decoder: each one links the whole P2P module with its
// dependencies under ASan, which costs minutes per binary on a 2-core CI machine; and why not one
// target that picks the decoder by a first input byte: libFuzzer then spreads one corpus and one
// time budget over all decoders, and a report could not say how long each decoder ran. With a table
// (`FuzzTargets.all`) and one run per entry, each decoder keeps its own corpus and budget, and a new
// message type (say a chat ACK) is one line in the table plus its registration in `MessageCatalog.standard`.
//
// Contract failures end in `fatalError`, which libFuzzer reports as a crash with a reproducer file.

import Foundation

/// The target this process runs, chosen once from P2P_FUZZ_TARGET.
nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let name = ProcessInfo.processInfo.environment["P2P_FUZZ_TARGET"] ?? ""
    if name == "list" {
        for target in FuzzTargets.all { print(target.name) }
        exit(0)
    }
    guard let target = FuzzTargets.all.first(where: { $0.name == name }) else {
        FileHandle.standardError.write(Data("P2PFuzz: set P2P_FUZZ_TARGET to one of: \(FuzzTargets.all.map(\.name).joined(separator: " "))\n".utf8))
        exit(64)
    }
    selected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    selected!.run(bytes)
    return 0
}

/// libFuzzer's driver: parses its flags, then calls `callback` with each input.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// The process entry. SwiftPM links executables on Linux with `main` aliased to `<module>_main` (so
/// tests can link the module), which a `-parse-as-library` module does not define; this is that
/// symbol, and it hands over to libFuzzer's driver, as libFuzzer's own `main` would.
@_cdecl("P2PFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return runFuzzerDriver(&argc, &argv) { data, size in fuzzTestOneInput(data, size) }
}
