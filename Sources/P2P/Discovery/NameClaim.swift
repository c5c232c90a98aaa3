/// How an advertiser claims its name, as a state machine that returns effects (tested without sockets).
///
/// Why a shared TXT record while probing: avahi settles two hosts that probe one name at the same
/// moment record by record (the SRV and the TXT record each compared byte by byte; a loss in either
/// withdraws the name: `incoming_probe` in avahi-core/server.c). Every p2p peer's TXT record differs
/// (its own `id`), and two receivers on the default port differ in their SRV record by host name only,
/// so in about half the pairs each host loses one of the two comparisons: both withdraw, both take the
/// same next name ("NAME #2") at once and lose again, round after round, and nobody is found. Probing
/// with a TXT record that every p2p peer shares (`ServiceAnnouncement.claimTXTRecord`) leaves the SRV
/// record the only one that differs: exactly one host wins each name, as with `avahi-publish`. Once the
/// name is ours the peer's own TXT record replaces the shared one; an update is announced, not probed.
///
/// The name is registered once: a rename avahi makes on its own arrives as another `registered(as:)`
/// and is reported, never answered with a new registration. Only a daemon that went away (taking the
/// registration with it) makes the advertiser register again.
struct NameClaim: Sendable {
    enum Effect: Equatable, Sendable {
        /// Ask the daemon to register `name`, with the shared claim TXT record.
        case register(name: String)
        /// The name is ours: replace the claim TXT record with the peer's own.
        case publishTXT
        /// Tell the observer the name the peer is announced under.
        case report(name: String)
        /// Give up: every candidate was refused.
        case fail(DiscoveryError)
    }

    static let maxAttempts = 20
    let baseName: String
    private(set) var attempt = 1
    /// The claim TXT record has been replaced by the peer's own since the last registration started.
    private(set) var txtPublished = false
    /// The name last reported; nil until the current registration first succeeds.
    private(set) var reported: String?

    init(baseName: String) { self.baseName = baseName }

    /// The name to ask for: the base name, then "NAME (2)", "NAME (3)", … after refusals on this host.
    var candidate: String { attempt == 1 ? baseName : "\(baseName) (\(attempt))" }

    /// Registers the base name (at start, and again once a daemon that went away answers again: the old
    /// registration died with it, so the name is usually free again).
    mutating func start() -> [Effect] {
        attempt = 1
        txtPublished = false
        reported = nil
        return [.register(name: candidate)]
    }

    /// The daemon refused the candidate because a service on this host has it (avahi does not rename
    /// those itself): ask for the next one.
    mutating func refused() -> [Effect] {
        guard attempt < Self.maxAttempts else { return [.fail(.nameConflict(name: baseName))] }
        attempt += 1
        return [.register(name: candidate)]
    }

    /// The daemon registered the service as `name`: the candidate, or a name avahi chose after a
    /// conflict with another host ("NAME #2"). The first time, the peer's own TXT record goes out; a
    /// name is reported when it differs from the last one reported.
    mutating func registered(as name: String) -> [Effect] {
        var effects: [Effect] = []
        if !txtPublished {
            txtPublished = true
            effects.append(.publishTXT)
        }
        if name != reported {
            reported = name
            effects.append(.report(name: name))
        }
        return effects
    }
}
