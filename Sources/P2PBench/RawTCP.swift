import Foundation
import P2P
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time in nanoseconds (vDSO `clock_gettime`, no allocation).
@inline(__always)
public func benchNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A benchmark that could not run, with the reason.
public struct BenchError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The "raw TCP" baselines: a plain blocking POSIX socket pair on loopback with TCP_NODELAY,
/// one thread per end, no event loop, no framing code.
public enum RawTCP {
    /// A connected loopback pair: (client end, accepted server end).
    public static func socketPair() throws -> (Int32, Int32) {
        #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
        #else
        let stream = SOCK_STREAM
        #endif
        let listener = socket(AF_INET, stream, 0)
        guard listener >= 0 else { throw BenchError("socket: errno \(errno)") }
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard bound == 0, listen(listener, 1) == 0 else { throw BenchError("bind/listen: errno \(errno)") }
        var actual = sockaddr_in()
        var actualLength = length
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &actualLength) }
        }
        let client = socket(AF_INET, stream, 0)
        guard client >= 0 else { throw BenchError("socket: errno \(errno)") }
        let connected = withUnsafePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
        }
        guard connected == 0 else { throw BenchError("connect: errno \(errno)") }
        let server = accept(listener, nil, nil)
        guard server >= 0 else { throw BenchError("accept: errno \(errno)") }
        for fd in [client, server] {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        return (client, server)
    }

    public static func writeAll(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int) -> Bool {
        var done = 0
        while done < count {
            let n = send(fd, base + done, count - done, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    public static func readExactly(_ fd: Int32, _ base: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        var done = 0
        while done < count {
            let n = recv(fd, base + done, count - done, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    /// Sequential ping-pong of `size`-byte messages; returns the measured round trips in nanoseconds.
    public static func pingPong(size: Int, warmup: Int, count: Int) async throws -> [UInt64] {
        let (client, server) = try socketPair()
        defer { close(client); close(server) }
        let total = warmup + count
        let echo = Thread {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            defer { buffer.deallocate() }
            for _ in 0..<total {
                guard readExactly(server, buffer, size), writeAll(server, buffer, size) else { return }
            }
        }
        echo.start()
        return try await onThread {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            defer { buffer.deallocate() }
            buffer.initializeMemory(as: UInt8.self, repeating: 0xAB, count: size)
            var samples = [UInt64](repeating: 0, count: count)
            for i in 0..<total {
                let start = benchNow()
                guard writeAll(client, buffer, size), readExactly(client, buffer, size) else {
                    throw BenchError("raw ping-pong: connection failed (errno \(errno))")
                }
                if i >= warmup { samples[i - warmup] = benchNow() - start }
            }
            return samples
        }
    }

    /// Streams `stream` one way in `chunk`-byte blocking sends; the reader counts bytes.
    /// Returns nanoseconds from the first send until the reader has every byte.
    public static func oneWay(stream: [UInt8], chunk: Int = 64 * 1024) async throws -> UInt64 {
        let (client, server) = try socketPair()
        defer { close(client); close(server) }
        let started = DispatchSemaphore(value: 0)
        let writer = Thread {
            started.wait()
            stream.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = min(chunk, bytes.count - offset)
                    guard writeAll(client, bytes.baseAddress! + offset, n) else { return }
                    offset += n
                }
            }
        }
        writer.start()
        let expected = stream.count
        return try await onThread {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 8)
            defer { buffer.deallocate() }
            let start = benchNow()
            started.signal()
            var received = 0
            while received < expected {
                let n = recv(server, buffer, chunk, 0)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw BenchError("raw one-way: connection failed") }
                received += n
            }
            return benchNow() - start
        }
    }
}

/// Runs blocking `body` on its own thread (never on the concurrency pool) and awaits its result.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

extension RawTCP {
    /// `count` DATA frames of `payload` bytes, exactly as the session puts them on the wire.
    public static func framedStream(count: Int, payload: Int) -> [UInt8] {
        var frame: [UInt8] = [WireFormat.magic.0, WireFormat.magic.1, WireFormat.protocolVersion, MessageType.data.rawValue, 0, 0]
        let length = UInt32(payload)
        frame += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        frame += [UInt8](repeating: 0xCD, count: payload)
        var stream: [UInt8] = []
        stream.reserveCapacity(count * frame.count)
        for _ in 0..<count { stream += frame }
        return stream
    }
}
