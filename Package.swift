// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "p2p",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "P2P", targets: ["P2P"]),
        .executable(name: "p2p", targets: ["P2PCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/attaswift/BigInt.git", from: "6.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // `swift package generate-documentation --target P2P` (DocC catalog in Sources/P2P/P2P.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // <dns_sd.h>: avahi's compat layer on Linux, the system's own library on macOS.
        .systemLibrary(
            name: "CDNSSD",
            pkgConfig: "avahi-compat-libdns_sd",
            providers: [.apt(["libavahi-compat-libdnssd-dev"])]
        ),
        // <avahi-client/…>: on Linux, service resolves with their address through one connection to avahi-daemon
        // per process (`AvahiResolver`), instead of the compat layer's connection per request.
        .systemLibrary(
            name: "CAvahiClient",
            providers: [.apt(["libavahi-client-dev"])]
        ),
        // <qrencode.h>: the QR codes `p2p share` draws in the terminal (the CLI only; the library does not
        // link it).
        .systemLibrary(
            name: "CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"]), .brew(["qrencode"])]
        ),
        .target(
            name: "P2P",
            dependencies: [
                "CDNSSD",
                .target(name: "CAvahiClient", condition: .when(platforms: [.linux])),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            linkerSettings: [.linkedLibrary("dns_sd", .when(platforms: [.linux]))]
        ),
        // What `p2p bench` measures (session vs raw TCP, the chat mesh, discovery, cryptography, records):
        // the measurements and their reports (a table or a JSON object); the commands only parse and print.
        .target(
            name: "P2PBench",
            dependencies: [
                "P2P",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The command line: the executable is `p2p`; the target has its own name, because `Sources/p2p`
        // and `Sources/P2P` are one folder on a case-insensitive disk (a Mac's default).
        .executableTarget(
            name: "P2PCLI",
            dependencies: [
                "P2P",
                "P2PBench",
                "CQRencode",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "EchoPeer",
            dependencies: ["P2P"],
            path: "examples/EchoPeer"
        ),
        .executableTarget(
            name: "ChatRoomLog",
            dependencies: ["P2P"],
            path: "examples/ChatRoomLog"
        ),
        .executableTarget(
            name: "TicTacToeBot",
            dependencies: ["P2P"],
            path: "examples/TicTacToeBot"
        ),
        .executableTarget(
            name: "FileDrop",
            dependencies: ["P2P"],
            path: "examples/FileDrop"
        ),
        .testTarget(
            name: "P2PTests",
            dependencies: [
                "P2P",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Tests only: the big-integer reference that FieldElementTests checks the field against.
                .product(name: "BigInt", package: "BigInt"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The command-line layer's pure parts (input loop states, prompt queue, line editor, peer
        // matching), fed keys and events without a terminal.
        .testTarget(
            name: "CommandLineTests",
            dependencies: ["P2PCLI", "P2P"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (Fuzz/, scripts/fuzz.sh). They exist only when P2P_FUZZ=1: they have no `main` of
// their own (libFuzzer's runtime provides it, linked by `-sanitize=fuzzer`), so a normal build, which
// does not pass that flag, could not link them. scripts/fuzz.sh builds them with
// `P2P_FUZZ=1 swift build --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library`.
if Context.environment["P2P_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "P2PFuzz",
            dependencies: [
                "P2P",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Fuzz/P2PFuzz"
        )
    )
}
