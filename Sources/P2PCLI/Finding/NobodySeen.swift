/// Why no peer showed up, said as far as it is known and no further: the likely causes in the order
/// they are met (nobody runs p2p in this session, multicast does not cross the network, a firewall
/// drops mDNS), unless something seen rules some out. Shared by `--to` errors and `p2p doctor`.
enum NobodySeen {
    /// What else was seen that narrows the causes down.
    enum Evidence: Equatable {
        /// Nothing beyond the silence (the daemon showing this machine's own announcement rules out
        /// only the daemon, which is said apart).
        case none
        /// The peer asked for took a TCP connection where it was last reached: it runs and is routed to,
        /// so only its mDNS announcements are lost on the way.
        case peerReachable
    }

    static let multicast = "multicast does not get through between the machines (guest Wi-Fi and access-point isolation block it)"
    static let firewall = "a firewall drops mDNS (UDP port 5353) on this machine or the other"

    /// "nobody runs `p2p receive` …; multicast …; a firewall …": the causes left by `evidence`, most
    /// likely first. `counterpart`: the command the other machine would run (nil: any p2p command).
    static func causes(counterpart: String?, evidence: Evidence) -> String {
        let nobody = counterpart.map { "nobody runs `\($0)` with this session ID on the network (start it on the other machine)" }
            ?? "nobody else runs p2p on this network"
        switch evidence {
        case .none:
            return "likely causes, most likely first: \(nobody); \(multicast); \(firewall)"
        case .peerReachable:
            return "it runs and takes connections, so its announcements are lost on the way: \(multicast), or \(firewall)"
        }
    }

    /// What to do whatever the cause: skip discovery.
    static func workaround(counterpart: String) -> String {
        "--connect HOST:PORT skips discovery (the other side's `\(counterpart)` prints it), and a peer reached once is then found by name"
    }
}
