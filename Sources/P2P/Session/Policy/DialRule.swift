import Crypto

/// In a room, which side of each pair of peers dials the other (`Protocol/PROTOCOL.md`, "Who dials in a
/// room"); the other side waits for the link.
///
/// The rule is on the two DNS-SD instance names, which the browse gives before anything is resolved: the
/// side that will be dialled never resolves the other (a resolve costs every host's mDNS daemon queries;
/// in a room of 32 hosts on one machine that was what the mesh waited for). A hash of the pair picks the
/// side, so each peer dials about half the room, not the lowest name all of it. A peer that announces
/// no `dial=names` (an older p2p) decides by the lower peer ID, which needs its TXT record; with it the
/// ID rule is kept.
public enum DialRule {
    /// Whether the peer announced as `name` dials the one announced as `other` under the name rule.
    /// Names are compared with ASCII letters folded to lower case (mDNS names are case-insensitive); two
    /// names equal that way both dial (each side dials, the duplicate-link rule keeps one link).
    public static func dials(name: String, other: String) -> Bool {
        let own = folded(name), theirs = folded(other)
        guard own != theirs else { return true }
        let (lower, higher) = own.lexicographicallyPrecedes(theirs) ? (own, theirs) : (theirs, own)
        let digest = SHA256.hash(data: lower + [0] + higher)
        let lowerDials = digest.withUnsafeBytes { $0[0] & 1 == 0 }
        return lowerDials == (own == lower)
    }

    /// The rule of peers without `dial=names`: the lower peer ID dials.
    public static func dials(id: PeerID, other: PeerID) -> Bool { id < other }

    /// Whether this side (`localID`, announced as `localName`) dials `peer` by itself: by the names when
    /// the peer announces the name rule, else by the IDs.
    public static func dials(localID: PeerID, localName: String, _ peer: PeerInfo) -> Bool {
        peer.dialsByName ? dials(name: localName, other: peer.displayName.raw) : dials(id: localID, other: peer.id)
    }

    private static func folded(_ name: String) -> [UInt8] {
        name.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    }
}
