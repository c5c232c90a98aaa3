import Foundation

/// A peer whose key this installation has pinned.
public struct KnownPeer: Codable, Sendable, Hashable {
    /// How the key came to be trusted.
    public enum Method: String, Codable, Sendable {
        /// Trust on first use: the user accepted the fingerprint shown at first contact.
        case firstUse = "first-use"
        /// A pairing code authenticated the key exchange.
        case paired
    }

    /// The pinned key's peer ID.
    public var id: PeerID
    /// The display name the key was pinned under; another key using this name is refused.
    public var name: String
    /// Trust on first use or pairing.
    public var method: Method
    /// When the key was pinned.
    public var pinnedAt: Date
    /// Where the peer was last reached or announced itself, newest first (`HOST:PORT` as `Endpoint`
    /// prints it, a link-local IPv6 address with its interface): so it can be dialled by name when
    /// multicast DNS does not get through. Absent in stores written before p2p remembered addresses.
    public var lastAddresses: [String]?
    /// When the peer was last connected.
    public var lastSeen: Date?

    public init(id: PeerID, name: String, method: Method, pinnedAt: Date, lastAddresses: [String]? = nil, lastSeen: Date? = nil) {
        self.id = id
        self.name = name
        self.method = method
        self.pinnedAt = pinnedAt
        self.lastAddresses = lastAddresses
        self.lastSeen = lastSeen
    }

    /// `lastAddresses` as endpoints to dial (entries that no longer parse, such as an interface that
    /// is gone, are left out).
    public var lastEndpoints: [Endpoint] { (lastAddresses ?? []).compactMap(Endpoint.init) }
}

/// An address a person added by hand (`p2p peers add HOST:PORT`) for a peer multicast DNS does not
/// show. It is a place to try, not a trust decision: whoever answers there proves its key, and is
/// accepted or pinned on first contact like any other peer.
public struct AddedAddress: Codable, Sendable, Hashable {
    /// `HOST:PORT` as `Endpoint` prints it (a link-local IPv6 address with its interface).
    public var address: String
    /// When it was added.
    public var added: Date

    public init(address: String, added: Date) {
        self.address = address
        self.added = added
    }

    /// The address as an endpoint to dial; nil if it no longer parses (an interface that is gone).
    public var endpoint: Endpoint? { Endpoint(address) }
}

/// What the trust store says about a peer that proved `id` and calls itself `name`.
///
/// A name is never taken at face value for a key pinned under another name: a pinned key that uses a
/// new name is ``renamed(_:)`` (show its pinned name beside the new one), and one that uses a name
/// pinned to another key is a conflict (``conflictingName(pinnedAs:nameOwner:)``), refused like a
/// stranger using a pinned name (``conflict(pinned:)``).
public enum TrustVerdict: Sendable, Hashable {
    /// The peer's ID is pinned under the name it uses: accept it.
    case known(KnownPeer)
    /// The peer's ID is pinned, but under another name (`KnownPeer.name`), and the name it uses now is
    /// pinned to nobody. Accepted (the key is the one the user trusted), but it must be shown with its
    /// pinned name, `bob (pinned as "alice")`, never as a stranger's or a friend's "bob". The pin keeps
    /// its name: only the user renames a pin (`p2p trust remove`, then a new first contact or pairing).
    case renamed(KnownPeer)
    /// Never seen: first contact, the user decides (trust on first use) or pairs.
    case unknown
    /// The name is pinned to another key, and this key is pinned to nothing: someone else is using it, or
    /// the peer got a new key. Refused until the user removes the old pin or pairs again.
    case conflict(pinned: KnownPeer)
    /// The peer's key is pinned as `pinnedAs.name`, but it calls itself a name pinned to another key
    /// (`nameOwner`): a known peer passing itself off as another known peer. Refused like
    /// ``conflict(pinned:)``; shown as `alice (calls itself "bob", pinned to another key)`.
    case conflictingName(pinnedAs: KnownPeer, nameOwner: KnownPeer)
    /// The connection is not authenticated (``TransportSecurity/insecure``): the ID is a mere claim, so
    /// it was neither checked against the store nor pinned.
    case unauthenticated

    /// The verdict for a peer that proved `id` and calls itself `name`, given the pins `pinned`.
    ///
    /// Names compare by canonical equivalence (PROTOCOL.md §11): Swift's `String ==` is exactly that, so
    /// an NFD "café" is the NFC "café" it looks like and cannot slip past a pin as a stranger. Do not
    /// replace it with a byte comparison (`utf8.elementsEqual`).
    public init(id: PeerID, name: String, pinned: [KnownPeer]) {
        let own = pinned.first { $0.id == id }
        let namesake = pinned.first { $0.name == name && $0.id != id }
        switch (own, namesake) {
        case (let own?, nil) where own.name == name: self = .known(own)
        case (let own?, nil): self = .renamed(own)
        case (let own?, let owner?): self = .conflictingName(pinnedAs: own, nameOwner: owner)
        case (nil, let owner?): self = .conflict(pinned: owner)
        case (nil, nil): self = .unknown
        }
    }

    /// The pin of the peer's own key, whatever name it uses now.
    public var pinnedKey: KnownPeer? {
        switch self {
        case .known(let pin), .renamed(let pin), .conflictingName(let pin, _): pin
        case .unknown, .conflict, .unauthenticated: nil
        }
    }

    /// Whether the name the peer uses belongs to another key: the connection is refused.
    public var isConflict: Bool {
        switch self {
        case .conflict, .conflictingName: true
        case .known, .renamed, .unknown, .unauthenticated: false
        }
    }

    /// The name people know this key by, when it differs from `name` (the name the peer uses now): the
    /// pinned name of a renamed or conflicting key. `nil` when the name can be shown as it is.
    public var pinnedNameIfDifferent: String? {
        switch self {
        case .renamed(let pin), .conflictingName(let pin, _): pin.name
        case .known, .unknown, .conflict, .unauthenticated: nil
        }
    }
}

/// Pinned peer keys, kept as JSON in `known-peers.json` (mode 0600) in the config directory, and beside
/// them the addresses added by hand (`added-addresses.json`).
///
/// The file is the only state: every verdict reads it, and every change is a read-modify-write under
/// an exclusive `flock`, so a running chat sees `p2p trust remove` at once and never writes back a
/// stale copy over a pin made by `p2p pair` meanwhile.
public final class TrustStore: Sendable {
    /// The JSON file this store reads and writes.
    public let file: URL
    /// Beside it: the addresses added by hand (`added-addresses.json`).
    public var addedAddressesFile: URL { file.deletingLastPathComponent().appendingPathComponent("added-addresses.json") }

    /// A store backed by `file`; a missing file is an empty store. Fails if the file exists but cannot be read.
    public init(file: URL) throws(TrustStoreError) {
        self.file = file
        _ = try load([KnownPeer].self, from: file)
    }

    /// The store in the default config directory.
    public static func standard() throws(TrustStoreError) -> TrustStore {
        try TrustStore(file: Identity.configDirectory().appendingPathComponent("known-peers.json"))
    }

    /// Every pinned peer; empty if the file cannot be read.
    public var all: [KnownPeer] { (try? load([KnownPeer].self, from: file)) ?? [] }

    /// The addresses added by hand, oldest first; empty if the file cannot be read.
    public var addedAddresses: [AddedAddress] { (try? load([AddedAddress].self, from: addedAddressesFile)) ?? [] }

    /// Adds an address to try for peers multicast DNS does not show; false if it was there already.
    @discardableResult
    public func addAddress(_ endpoint: Endpoint) throws(TrustStoreError) -> Bool {
        var added = false
        try update([AddedAddress].self, in: addedAddressesFile) { entries in
            guard !entries.contains(where: { $0.address == endpoint.description }) else { return }
            entries.append(AddedAddress(address: endpoint.description, added: Date()))
            added = true
        }
        return added
    }

    /// Forgets an address added by hand; false if it was not there.
    @discardableResult
    public func removeAddedAddress(_ address: String) throws(TrustStoreError) -> Bool {
        var removed = false
        try update([AddedAddress].self, in: addedAddressesFile) { entries in
            let before = entries.count
            entries.removeAll { $0.address == address }
            removed = entries.count != before
        }
        return removed
    }

    /// The verdict for a peer that proved `id` and calls itself `name` (``TrustVerdict/init(id:name:pinned:)``):
    /// known if the ID is pinned under that name, renamed if it is pinned under another name nobody else
    /// holds, a conflict if the name is pinned to another ID, unknown otherwise. An unreadable file gives
    /// `.unknown`.
    public func verdict(for id: PeerID, name: String) -> TrustVerdict {
        // An unreadable store pins nothing, but a name it cannot check is not trusted either.
        guard let peers = try? load([KnownPeer].self, from: file) else { return .unknown }
        return TrustVerdict(id: id, name: name, pinned: peers)
    }

    /// Pins `id` under `name`, replacing any pin of the same ID or name; with `reachedAt`, also records
    /// that contact (``recordContact(_:at:)``) in the same write: a room of 32 pins 31 keys at once.
    public func pin(_ id: PeerID, name: String, method: KnownPeer.Method, reachedAt endpoints: [Endpoint]? = nil) throws(TrustStoreError) {
        try update([KnownPeer].self, in: file) { peers in
            peers.removeAll { $0.id == id || $0.name == name }
            peers.append(KnownPeer(id: id, name: name, method: method, pinnedAt: Date()))
            if let endpoints { Self.record(endpoints, of: peers.count - 1, in: &peers) }
        }
        if let endpoints { try forgetAddedAddresses(reached: endpoints) }
    }

    /// Remembers where a pinned peer was just reached: `endpoints` go first in its `lastAddresses`
    /// (at most `maxRememberedAddresses` kept) and `lastSeen` becomes now. Does nothing for a peer that
    /// is not pinned: an address alone is no reason to trust anyone. An address added by hand that
    /// this peer answered at is now its pin's, and leaves the added ones.
    public func recordContact(_ id: PeerID, at endpoints: [Endpoint]) throws(TrustStoreError) {
        var pinned = false
        try update([KnownPeer].self, in: file) { peers in
            guard let index = peers.firstIndex(where: { $0.id == id }) else { return }
            pinned = true
            Self.record(endpoints, of: index, in: &peers)
        }
        if pinned { try forgetAddedAddresses(reached: endpoints) }
    }

    private static func record(_ endpoints: [Endpoint], of index: Int, in peers: inout [KnownPeer]) {
        let fresh = endpoints.map(\.description)
        let older = (peers[index].lastAddresses ?? []).filter { !fresh.contains($0) }
        peers[index].lastAddresses = Array((fresh + older).prefix(maxRememberedAddresses))
        peers[index].lastSeen = Date()
    }

    /// The addresses added by hand that a pinned peer answered at are now its pin's.
    private func forgetAddedAddresses(reached endpoints: [Endpoint]) throws(TrustStoreError) {
        let reached = Set(endpoints.map(\.description))
        guard addedAddresses.contains(where: { reached.contains($0.address) }) else { return }
        try update([AddedAddress].self, in: addedAddressesFile) { entries in entries.removeAll { reached.contains($0.address) } }
    }

    /// How many addresses a pinned peer keeps: enough for a few links and both families.
    public static let maxRememberedAddresses = 8

    /// Forgets the peers whose name, full ID or ID prefix (at least 4 digits) matches; returns them.
    @discardableResult
    public func remove(matching nameOrID: String) throws(TrustStoreError) -> [KnownPeer] {
        let needle = nameOrID.lowercased()
        var removed: [KnownPeer] = []
        try update([KnownPeer].self, in: file) { peers in
            removed = peers.filter { $0.name == nameOrID || (needle.count >= 4 && $0.id.hex.hasPrefix(needle)) }
            peers.removeAll { removed.contains($0) }
        }
        return removed
    }

    /// Fails unless a pin could be stored now (the directory exists or can be made, and is writable), so
    /// a command finds out at start instead of silently pinning nothing at first contact.
    public func checkWritable() throws(TrustStoreError) {
        let directory = file.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw .unwritable(path: file.path, reason: "\(directory.path) is not a directory")
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .unwritable(path: file.path, reason: readableReason(error))
        }
        // The lock file every update takes; making it is the same write a pin needs.
        let lockPath = directory.appendingPathComponent(".known-peers.lock").path
        let lock = open(lockPath, O_CREAT | O_RDWR, 0o600)
        guard lock >= 0 else { throw .unwritable(path: file.path, reason: errnoReason()) }
        close(lock)
        guard access(directory.path, W_OK) == 0 else { throw .unwritable(path: file.path, reason: errnoReason()) }
    }

    private func load<Entry: Decodable>(_ type: [Entry].Type, from file: URL) throws(TrustStoreError) -> [Entry] {
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(type, from: Data(contentsOf: file))
        } catch {
            throw .unreadable(path: file.path, reason: readableReason(error))
        }
    }

    /// Both files take the one lock.
    private func update<Entry: Codable>(_ type: [Entry].Type, in file: URL, _ change: (inout [Entry]) -> Void) throws(TrustStoreError) {
        let directory = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .unwritable(path: file.path, reason: readableReason(error))
        }
        let lockPath = directory.appendingPathComponent(".known-peers.lock").path
        let lock = open(lockPath, O_CREAT | O_RDWR, 0o600)
        guard lock >= 0, flock(lock, LOCK_EX) == 0 else { throw .unwritable(path: lockPath, reason: String(cString: strerror(errno))) }
        defer {
            flock(lock, LOCK_UN)
            close(lock)
        }
        var peers = try load(type, from: file)
        change(&peers)
        do {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(peers)
            try Self.replace(file, with: data, temporary: directory.appendingPathComponent(".known-peers.\(UUID().uuidString).tmp"))
        } catch let error as TrustStoreError {
            throw error
        } catch {
            throw .unwritable(path: file.path, reason: readableReason(error))
        }
    }

    /// Writes a 0600 temporary file, syncs it and renames it over `file`, so a crash never leaves half a
    /// store and a pin, once stored, stays. One file and one sync: `FileManager.createFile` would write
    /// its own temporary file and rename it too.
    private static func replace(_ file: URL, with data: Data, temporary: URL) throws(TrustStoreError) {
        let descriptor = open(temporary.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unwritable(path: file.path, reason: errnoReason()) }
        let written = data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        let reason = written && fsync(descriptor) == 0 ? nil : errnoReason()
        close(descriptor)
        guard reason == nil, rename(temporary.path, file.path) == 0 else {
            let failure = reason ?? errnoReason()
            unlink(temporary.path)
            throw .unwritable(path: file.path, reason: failure)
        }
    }
}

/// Why the trust store could not be read or written.
public enum TrustStoreError: Error, Sendable, CustomStringConvertible {
    /// The file exists but cannot be read or is not a trust store.
    case unreadable(path: String, reason: String)
    /// A pin could not be stored (read-only or full disk, no permission, a missing directory).
    case unwritable(path: String, reason: String)

    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the trust store \(path): \(reason)"
        case .unwritable(let path, let reason): "cannot write the trust store \(path): \(reason) (set P2P_HOME to a writable directory)"
        }
    }
}
