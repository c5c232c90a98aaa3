import NIOCore
import NIOPosix

/// Reaches a peer over TCP: the first of its endpoints that answers, tried in order, each next one
/// staggered (`ConnectionRace`, RFC 8305), with Nagle off and `autoRead` off, so nothing is read until
/// the session's handlers are in place (a plaintext acceptor sends its HELLO the moment the connection
/// is up, and a read before the decoder is there would drop it). Only the winner goes on to TLS and HELLO.
struct TCPDialer {
    let loop: any EventLoop
    /// For each attempt's TCP connect and for the race as a whole.
    let timeout: TimeAmount

    /// The winning channel and a line for the log; throws `ConnectionRace.AllFailed` when none answered.
    func dial(_ endpoints: [Endpoint]) async throws -> (channel: Channel, summary: String) {
        let outcome = try await ConnectionRace.run(candidates(endpoints), timeout: timeout, on: loop).value
        return (outcome.channel, outcome.summary)
    }

    private func candidates(_ endpoints: [Endpoint]) -> [ConnectionRace.Candidate] {
        let loop = loop, timeout = timeout
        @Sendable func bootstrap() -> ClientBootstrap {
            ClientBootstrap(group: loop).connectTimeout(timeout).channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelOption(.autoRead, value: false)
        }
        return endpoints.map { endpoint in
            if let address = endpoint.address {
                let socketAddress = address.socketAddress(port: endpoint.port)
                return ConnectionRace.Candidate(label: endpoint.description) { bootstrap().connect(to: socketAddress) }
            }
            return ConnectionRace.Candidate(label: endpoint.description) { bootstrap().connect(host: endpoint.host, port: endpoint.port) }
        }
    }
}
