import Foundation

/// A send to a LocalSend device named by a query (`p2p send --localsend --to NAME`): which device the
/// query names, or the refusal a person reads (several devices fit, a p2p peer fits too, or it fits only
/// by too short a fingerprint prefix), and what the upload says when it is done. Pure: ``LocalSendTarget``
/// listens for the devices, ``LocalSendSender`` uploads.
public enum LocalSendUpload {
    /// Why a query names no device to send to, in the words a person acts on.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The query fits the device only by fewer than 80 bits of its fingerprint: anyone can make a
        /// certificate whose fingerprint starts that way in seconds, so it names nothing (as such a
        /// prefix names no p2p key that is not pinned).
        case shortPrefix(query: String, device: LocalSendDeviceList.Entry)
        /// The query fits p2p peers (their labels) and LocalSend devices: neither is chosen.
        case alsoP2P(query: String, peers: [String], devices: [LocalSendDeviceList.Entry])
        /// The query fits several devices.
        case several(query: String, devices: [LocalSendDeviceList.Entry])

        /// Whether the query fits more than one (a peer not found as one), rather than naming nothing it can trust.
        public var isAmbiguous: Bool {
            if case .shortPrefix = self { return false }
            return true
        }

        public var description: String {
            let several = "; name one by its fingerprint (\(LocalSendBrowser.identifyingFingerprintCharacters) characters at least):\n"
            switch self {
            case .shortPrefix(let query, let entry):
                return "--to \(PeerText.sanitized(query)) fits \(LocalSendPeer.label(of: entry.peer)) only by the start of its fingerprint: anyone can "
                    + "make a certificate whose fingerprint starts that way, so a prefix shorter than "
                    + "\(LocalSendBrowser.identifyingFingerprintCharacters) characters names no LocalSend device; give its alias "
                    + "(--to \(PeerText.sanitized(entry.info.alias))) or its fingerprint (--to \(PeerText.sanitized(entry.info.fingerprint))) "
                    + "after comparing it with the one the device shows"
            case .alsoP2P(let query, let peers, let devices):
                let list = peers.map { "  \($0)  (p2p)" } + devices.map { "  \(LocalSendPeer.label(of: $0.peer))  \(shownFingerprint($0))…" }
                return "\"\(PeerText.sanitized(query))\" fits a p2p peer and a LocalSend device" + several + list.joined(separator: "\n")
            case .several(let query, let devices):
                let list = devices.map { "  \(LocalSendPeer.label(of: $0.peer))  \(shownFingerprint($0))…  \($0.address)" }
                return "several LocalSend devices fit \"\(PeerText.sanitized(query))\"" + several + list.joined(separator: "\n")
            }
        }
    }

    /// The start of a device's fingerprint that names it for a query (80 bits): what the lists show.
    public static func shownFingerprint(_ entry: LocalSendDeviceList.Entry) -> String {
        String(entry.info.fingerprint.prefix(LocalSendBrowser.identifyingFingerprintCharacters))
    }

    /// The device `query` names by `resolution` (``LocalSendTarget/find(_:with:sessionID:lookout:)``); nil
    /// when it names none (the send goes on as a p2p send).
    public static func device(_ query: String, by resolution: LocalSendTarget.Resolution) throws(Refusal) -> LocalSendDeviceList.Entry? {
        switch resolution {
        case .none: return nil
        case .device(let device): return device
        case .shortPrefix(let device): throw .shortPrefix(query: query, device: device)
        case .alsoP2P(let peers, let devices):
            var labels: [String] = []
            for label in peers.map(\.shownLabel) where !labels.contains(label) { labels.append(label) }
            throw .alsoP2P(query: query, peers: labels, devices: devices)
        case .several(let devices): throw .several(query: query, devices: devices)
        }
    }

    /// `Delivered a text (12 characters) to "anna" …`.
    public static func textDeliveredLine(_ text: String, to device: LocalSendDeviceList.Entry) -> String {
        "Delivered a text (\(text.count) characters) to \(LocalSendPeer.label(of: device.peer))."
    }

    /// The event for programs of a text delivered: `text-delivered`.
    public static func textDeliveredEvent(_ text: String, to device: LocalSendDeviceList.Entry) -> [String: any Sendable] {
        ["event": "text-delivered", "peer": device.info.alias, "kind": "localsend", "characters": text.count]
    }

    /// `Sent 2 files (3.0 MiB, 1.5 MiB/s) to "anna" …; LocalSend reports no hash back: delivered as its answers say`.
    public static func sentLine(_ deliveries: [Delivery], seconds: Double, to device: LocalSendDeviceList.Entry) -> String {
        let bytes = deliveries.reduce(UInt64(0)) { $0 + $1.size }
        let rate = ByteCount.describe(UInt64(seconds > 0 ? Double(bytes) / seconds : 0))
        return "Sent \(ByteCount.describeCount(deliveries.count, "file")) (\(ByteCount.describe(bytes)), \(rate)/s) to \(LocalSendPeer.label(of: device.peer)); "
            + "LocalSend reports no hash back: delivered as its answers say"
    }

    /// The events for programs of an upload done: a `file-sent` per file, then `sent`.
    public static func sentEvents(_ deliveries: [Delivery], to device: LocalSendDeviceList.Entry) -> [[String: any Sendable]] {
        let peer = device.info.alias
        return deliveries.map { ["event": "file-sent", "name": $0.name, "size": $0.size, "sha256": $0.sha256, "peer": peer, "kind": "localsend"] }
            + [["event": "sent", "files": deliveries.count, "bytes": deliveries.reduce(UInt64(0)) { $0 + $1.size }, "peer": peer, "kind": "localsend",
                "fingerprint": device.info.fingerprint]]
    }
}
