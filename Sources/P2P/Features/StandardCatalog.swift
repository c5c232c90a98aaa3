import NIOCore
import NIOPosix

extension MessageCatalog {
    /// Protocol version 1 (PROTOCOL.md §5): the core messages and every feature's. A session must know
    /// every type the protocol defines, including those of features it does not use, to tell a
    /// malformed frame from one it may ignore.
    public static let standard = MessageCatalog.core
        .registering(TextMessage.self, travelsAsDatagram: true)
        .registering(TextAck.self)
        .registering(PairingMessage.self)
        .registering(GameMessage.self)
        .registering(ChannelMessage.self)
        .announcing(.channels)
        .announcing(.comparesHeldFiles)
        .announcing(.recordChannels)
        // An older p2p's offers are read far enough to be refused in their own layout, naming the version.
        .registering(LegacyTransferStep.self)
        .announcing(.transferTrees)
        .registering(LegacyStreamStep.self)
        .announcing(.byteStreams)
        .registering(LegacyRecordsStep.self)
}

extension Session {
    /// A session that speaks protocol version 1 with every feature's messages (`MessageCatalog.standard`).
    public convenience init(
        sessionID: String,
        displayName: String,
        mode: SessionMode = .peer,
        identity: Identity,
        configuration: SessionConfiguration = SessionConfiguration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.init(sessionID: sessionID, displayName: displayName, mode: mode, identity: identity,
                  configuration: configuration, group: group, catalog: .standard)
    }
}
