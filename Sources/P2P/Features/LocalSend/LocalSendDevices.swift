import Foundation
import NIOConcurrencyHelpers

/// The LocalSend devices this node heard of, shared by its discovery (announcements, `register` answers)
/// and its server (`register` calls), with a stream of what changed. Bounded by `LocalSendDeviceList`.
public final class LocalSendDevices: Sendable {
    private let list: NIOLockedValueBox<LocalSendDeviceList>
    private let hub = EventHub<LocalSendEvent>(limit: 1024) { .eventsDropped(count: $0) }
    /// The node's own fingerprint: announcements carrying it are its own, looped back.
    public let ownFingerprint: String

    /// An empty set of devices.
    public init(ownFingerprint: String, capacity: Int = 64) {
        self.ownFingerprint = ownFingerprint
        list = NIOLockedValueBox(LocalSendDeviceList(capacity: capacity))
    }

    /// Records a device heard from `address` (its own looped-back announcements are ignored); reports it
    /// when new or changed.
    public func record(_ info: LocalSendDeviceInfo, address: String, fingerprintSeen: Bool = false) {
        guard !info.hasFingerprint(ownFingerprint) else { return }
        let changed = list.withLockedValue { $0.record(info, address: address, fingerprintSeen: fingerprintSeen) }
        if changed, let entry = device(fingerprint: info.fingerprint) { hub.emit(.deviceSeen(entry)) }
    }

    /// The devices heard of recently, by alias.
    public var all: [LocalSendDeviceList.Entry] {
        list.withLockedValue { list in
            list.prune()
            return list.devices
        }
    }

    /// The device with this fingerprint (any case).
    public func device(fingerprint: String) -> LocalSendDeviceList.Entry? { list.withLockedValue { $0.device(fingerprint: fingerprint) } }

    /// What happens: devices seen, upload sessions ended.
    public func events() -> AsyncStream<LocalSendEvent> { hub.stream() }

    func emit(_ event: LocalSendEvent) { hub.emit(event) }
}

/// Something that happened on the LocalSend side that the transfer events do not say.
public enum LocalSendEvent: Sendable {
    /// A device was heard of for the first time, or changed (alias, address, port).
    case deviceSeen(LocalSendDeviceList.Entry)
    /// A sender's upload session ended (every file arrived or failed, or it cancelled): its summary is due,
    /// as when a p2p sender disconnects.
    case sessionEnded(PeerInfo)
    /// This stream's consumer fell behind and missed `count` events.
    case eventsDropped(count: Int)
}
