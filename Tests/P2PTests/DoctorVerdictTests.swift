import P2P
import Testing

/// `p2p doctor`'s exit status is the library's: a checkup passes only when no finding failed.
@Suite struct DoctorVerdictTests {
    /// The loopback daemon answers; a peer address that refuses connections is a failed check, so the
    /// checkup does not pass, whatever the other checks found.
    @Test func aPeerThatRefusesConnectionsFailsTheCheckup() async {
        let checkup = DiscoveryCheckup(peer: .address(Endpoint("127.0.0.1:1")!), timeout: .milliseconds(200))
        var findings: [DiscoveryCheckup.Finding] = []
        let passed = await checkup.run { findings.append($0) }
        #expect(!passed)
        #expect(findings.contains { if case .peerUnreachable = $0 { true } else { false } })
        #expect(findings.contains { $0.verdict == .failed })
    }
}
