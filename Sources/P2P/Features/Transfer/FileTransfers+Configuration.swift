import Dispatch

extension FileTransfers {
    /// Tunables; the defaults suit a LAN.
    public struct Configuration: Sendable {
        /// Unacknowledged bytes the sender may have in flight; at most ``ChannelMessage/maxWindow``
        /// less the largest DATA, since one DATA may pass it and a receiver enforces the maximum.
        public var window = 4 << 20
        /// The receiver acknowledges after every this many bytes written.
        public var acknowledgeEvery = 1 << 20
        /// Replace existing files instead of writing `name (1).ext`.
        public var overwrite = false
        /// Receiving: a file offered as a chat image type (`MediaType.images`) must really be that image,
        /// by its signature, or it is deleted and the sender gets CANCEL with the reason instead of
        /// RESULT, so its transfer fails (TRANSFER.md, "Images in chat"). For receivers that show images;
        /// a plain file store keeps bytes whatever type they were offered as.
        public var checksImageSignatures = false
        /// Unread events each `events()` stream holds; beyond that its consumer gets `.eventsDropped`.
        /// A transfer of many files makes several events per file.
        public var eventBufferLimit = 65_536
        /// Offers (files and trees, manifests still arriving included) one peer may have waiting for an
        /// answer at once. More are denied at once, unasked: a peer cannot fill memory or the screen with
        /// questions.
        public var undecidedOffersPerPeer = 16
        /// Memory one peer's tree manifests may hold while they arrive and wait for an answer
        /// (`PeerHoldings.manifestBytes`: every entry, an empty path too). A tree OPEN that would pass
        /// it is denied at once; ENTRIES whose paths pass it end the connection.
        public var manifestBytesPerPeer = 128 << 20
        /// Where received files' disk queues run (tests suspend one to play a disk slower than the link).
        var diskQueueTarget: DispatchQueue?
        /// How long an offer waits for an answer; then it is denied ("not answered within …"), so no
        /// sender waits for ever and no question is kept for ever.
        public var decisionTimeout: Duration = .seconds(600)
        /// Sending: how long a send waits for the receiver's answer (a person may be asked); then the
        /// offer is withdrawn (CANCEL) and the send fails with `.notAnswered`, nothing sent.
        public var answerTimeout: Duration = .seconds(600)
        /// Sending: how long a running transfer waits for the receiver's next acknowledgement or result;
        /// then it is cancelled and fails with `.receiverSilent` (resumable, like a disconnect).
        public var silenceLimit: Duration = .seconds(120)
        /// Receiving: how long an accepted transfer waits for the sender's next message; then it is
        /// cancelled and fails with `.senderSilent` (the `.part` stays). Longer than `silenceLimit`: a
        /// sender resuming a large file hashes what the receiver already holds before sending more.
        public var incomingSilenceLimit: Duration = .seconds(600)
        /// What a yes from a `Bool` offer handler lets through: files under hidden paths
        /// (`IncomingOffer.hiddenPaths`). Off, they are skipped (a single file so named is denied).
        public var allowsHiddenPaths = false
        /// What a yes from a `Bool` offer handler lets through: the execute bits of a tree's files. Off,
        /// they arrive without them.
        public var allowsExecutableModes = false
        /// The defaults: a 4 MiB window, an acknowledgement per MiB written, no overwriting, 16 offers
        /// waiting per peer, 10 minutes to answer one (either way), 2 minutes of a silent receiver, no
        /// hidden paths and no execute bits written.
        public init() {}
    }
}
