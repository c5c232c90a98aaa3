import NIOConcurrencyHelpers

/// Tunables of sending a snapshot.
public struct RecordSendOptions: Sendable {
    /// How long the receiver may take to accept or deny the offer (a person may be asked).
    public var decisionTimeout: Duration = .seconds(120)
    /// How long without an acknowledgement before the transfer is given up.
    public var progressTimeout: Duration = .seconds(30)
    /// How long the receiver may take to validate and merge after the last byte.
    public var resultTimeout: Duration = .seconds(600)
    /// Bytes in flight beyond the receiver's last ACK (a receiver ends a channel that passes 8 MiB).
    public var window = 1 << 20

    /// The defaults: 120 s to decide, 30 s between acknowledgements, 600 s to validate and merge, 1 MiB in flight.
    public init() {}
}

/// Tunables of receiving snapshots.
public struct RecordReceiveOptions: Sendable {
    /// Offers of bigger snapshots are denied without asking; this bounds the memory a peer can claim.
    public var maxSnapshotBytes = 256 << 20
    /// Snapshots one peer may have under way at once (waiting for an answer or arriving); more are
    /// denied unasked, so one peer holds at most this many times `maxSnapshotBytes`.
    public var snapshotsPerPeer = 1
    /// How long an offer waits for an answer (a person may be asked); then it is denied.
    public var decisionTimeout: Duration = .seconds(120)

    /// The defaults: snapshots up to 256 MiB, one at a time per peer, 120 s to decide.
    public init() {}
}

