import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// LocalSend's multicast discovery (224.0.0.167:53317): announces this node on each interface in use (or
/// those named), hears other devices' announcements into `LocalSendDevices`, and answers an announcement
/// that asks for answers (`announce: true`) with `POST /api/localsend/v2/register` to the announcer, or,
/// when that fails, with a multicast answer (`announce: false`).
///
/// Bounded against a flood: a datagram over 16 KiB or not a device description is dropped; the device list
/// is bounded (`LocalSendDeviceList`); a device is answered at most once per `answerInterval`, and at most
/// `maxAnswersInFlight` answers run at once (others are dropped; the device announces again).
public final class LocalSendDiscovery: Sendable {
    /// The interfaces to use: names, or nil for every IPv4 interface that is up, not loopback, and multicast-capable.
    public let interfaces: [String]?
    let devices: LocalSendDevices
    private let describe: @Sendable () -> LocalSendDeviceInfo
    private let client: HTTPClient
    private let state = NIOLockedValueBox(State())
    /// How often a device is answered at most.
    let answerInterval: Duration = .seconds(5)
    /// Answers running at once, at most.
    let maxAnswersInFlight = 8

    private struct State {
        var receiver: (any Channel)?
        var senders: [(name: String, channel: any Channel)] = []
        var answered: [String: ContinuousClock.Instant] = [:]
        var answering = 0
        var timer: Task<Void, Never>?
    }

    /// A discovery for the node `describe` describes; `client` answers announcements with `register`.
    public init(devices: LocalSendDevices, interfaces: [String]?, client: HTTPClient, describe: @escaping @Sendable () -> LocalSendDeviceInfo) {
        self.devices = devices
        self.interfaces = interfaces
        self.client = client
        self.describe = describe
    }

    /// The IPv4 interfaces discovery uses (`--interface` names, or every one in use): name and address.
    public static func devices(named names: [String]?) throws -> [(name: String, address: String, device: NIONetworkDevice)] {
        try System.enumerateDevices().compactMap { device in
            guard case .v4 = device.address, let ip = device.address?.ipAddress else { return nil }
            if let names { return names.contains(device.name) ? (device.name, ip, device) : nil }
            guard device.multicastSupported, !ip.hasPrefix("127.") else { return nil }
            return (device.name, ip, device)
        }
    }

    /// Joins the group on each interface, announces (at once, after 1 s and 3 s, then every `every`), and
    /// listens. Throws when no interface fits or the group cannot be joined.
    public func start(every: Duration = .seconds(60)) async throws {
        let chosen = try Self.devices(named: interfaces)
        guard !chosen.isEmpty else {
            throw HTTPClient.Failure(description: interfaces.map { "no IPv4 address on \($0.joined(separator: ", "))" }
                                     ?? "no IPv4 interface with multicast is up")
        }
        let group = try SocketAddress(ipAddress: LocalSendDeviceInfo.multicastGroup, port: LocalSendDeviceInfo.defaultPort)
        let receiver = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramReader { [self] data, from in heard(data, from: from) })
                }
            }
            .bind(host: "0.0.0.0", port: LocalSendDeviceInfo.defaultPort).get()
        state.withLockedValue { $0.receiver = receiver }
        for (_, _, device) in chosen {
            try await (receiver as! MulticastChannel).joinGroup(group, device: device).get()
        }
        for (name, address, _) in chosen {
            let sender = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(host: address, port: 0).get()
            if case .v4(let v4) = try SocketAddress(ipAddress: address, port: 0) {
                try await (sender as! SocketOptionProvider).setIPMulticastIF(v4.address.sin_addr).get()
            }
            try await (sender as! SocketOptionProvider).setIPMulticastTTL(1).get()
            state.withLockedValue { $0.senders.append((name, sender)) }
        }
        let timer = Task { [self] in
            for delay in [Duration.zero, .seconds(1), .seconds(2)] {
                try? await Task.sleep(for: delay)
                guard !Task.isCancelled else { return }
                announce()
            }
            while (try? await Task.sleep(for: every)) != nil { announce() }
        }
        state.withLockedValue { $0.timer = timer }
    }

    /// Leaves the group and stops announcing.
    public func stop() async {
        let (receiver, senders, timer) = state.withLockedValue { state in
            defer { state.receiver = nil; state.senders = []; state.timer = nil }
            return (state.receiver, state.senders, state.timer)
        }
        timer?.cancel()
        try? await receiver?.close()
        for sender in senders { try? await sender.channel.close() }
    }

    /// Sends this node's description to the group on every interface: `announce` true asks for answers.
    public func announce(asking: Bool = true) {
        guard let data = try? JSONEncoder().encode(describe().announcing(asking)),
              let group = try? SocketAddress(ipAddress: LocalSendDeviceInfo.multicastGroup, port: LocalSendDeviceInfo.defaultPort) else { return }
        for sender in state.withLockedValue({ $0.senders }) {
            sender.channel.writeAndFlush(AddressedEnvelope(remoteAddress: group, data: ByteBuffer(bytes: data)), promise: nil)
        }
    }

    /// A datagram from `address`.
    private func heard(_ data: ByteBuffer, from address: String) {
        guard data.readableBytes <= 16 << 10,
              let info = try? JSONDecoder().decode(LocalSendDeviceInfo.self, from: Data(data.readableBytesView)),
              !info.hasFingerprint(devices.ownFingerprint) else { return }
        devices.record(info, address: address)
        guard info.announce == true else { return }
        let now = ContinuousClock.now
        let due = state.withLockedValue { state -> Bool in
            let key = LocalSendDeviceInfo.fingerprintKey(info.fingerprint)
            if let last = state.answered[key], now - last < answerInterval { return false }
            guard state.answering < maxAnswersInFlight else { return false }
            if state.answered.count >= 1024 { state.answered = state.answered.filter { now - $0.value < answerInterval } }
            guard state.answered.count < 1024 else { return false }
            state.answered[key] = now
            state.answering += 1
            return true
        }
        guard due else { return }
        Task { [self] in
            defer { state.withLockedValue { $0.answering -= 1 } }
            await answer(info, at: address)
        }
    }

    /// `register` to an announcer; a multicast answer when that fails.
    private func answer(_ info: LocalSendDeviceInfo, at address: String) async {
        if let body = try? JSONEncoder().encode(describe().announcing(nil)),
           let response = try? await HTTPClient(tls: info.usesHTTPS ? client.tls : nil, group: client.group)
            .request(.POST, host: address, port: info.effectivePort, path: LocalSendPath.register,
                     headers: ["content-type": "application/json"], body: .bytes(ByteBuffer(bytes: body)), timeout: .seconds(4), responseLimit: 64 << 10),
           response.status == .ok {
            if let answered = try? JSONDecoder().decode(LocalSendDeviceInfo.self, from: Data(response.body.readableBytesView)) {
                var seen = answered
                seen.fingerprint = response.serverFingerprint ?? info.fingerprint
                if seen.port == nil { seen.port = info.effectivePort }
                if seen.protocol == nil { seen.protocol = info.protocol }
                devices.record(seen, address: address, fingerprintSeen: response.serverFingerprint != nil)
            }
            return
        }
        announce(asking: false)
    }
}

/// Hands each datagram's bytes and sender address to a closure.
private final class DatagramReader: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let received: @Sendable (ByteBuffer, String) -> Void

    init(_ received: @escaping @Sendable (ByteBuffer, String) -> Void) { self.received = received }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        guard let address = envelope.remoteAddress.ipAddress else { return }
        received(envelope.data, address)
    }
}
