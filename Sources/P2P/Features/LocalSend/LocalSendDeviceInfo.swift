import Foundation

/// What a LocalSend device says about itself: in a multicast announcement, a `register` call or answer, and
/// the `info` of a `prepare-upload`. Every field is the device's claim (peer text: print it through
/// `PeerText`); only `fingerprint` is checked, against the certificate, where HTTPS shows one.
///
/// Decoding is lenient where the apps differ (`deviceModel`, `deviceType`, `port`, `protocol`, `download`,
/// `announce` may be missing or null) and strict where a value is needed (`alias`, `version`,
/// `fingerprint`). An unknown `deviceType` is kept as it came, so it can be shown, and read as `desktop`.
public struct LocalSendDeviceInfo: Codable, Sendable, Equatable {
    /// The device's name, chosen by its user (`"Nice Orange"`).
    public var alias: String
    /// The protocol version, `major.minor` (`"2.0"`, `"2.1"`, `"2.2"`).
    public var version: String
    /// The make or system (`"Samsung"`, `"Windows"`, `"Linux"`); may be absent.
    public var deviceModel: String?
    /// `mobile`, `desktop`, `web`, `headless` or `server`; may be absent.
    public var deviceType: String?
    /// SHA-256 of the device's certificate (DER), upper-case hex, in HTTPS mode; a random string in HTTP
    /// mode. Compared case-insensitively.
    public var fingerprint: String
    /// The port of its HTTP(S) server; absent in some answers (then 53317).
    public var port: Int?
    /// `https` or `http`; absent in some answers (then `https`).
    public var `protocol`: String?
    /// Whether its download API (a browser page) is on.
    public var download: Bool?
    /// In a multicast message: `true` for an announcement that wants answers, `false` for an answer.
    public var announce: Bool?

    /// A device description.
    public init(alias: String, version: String = LocalSendDeviceInfo.protocolVersion, deviceModel: String? = nil,
                deviceType: String? = nil, fingerprint: String, port: Int? = LocalSendDeviceInfo.defaultPort,
                protocol: String? = "https", download: Bool? = false, announce: Bool? = nil) {
        self.alias = alias
        self.version = version
        self.deviceModel = deviceModel
        self.deviceType = deviceType
        self.fingerprint = fingerprint
        self.port = port
        self.protocol = `protocol`
        self.download = download
        self.announce = announce
    }

    /// The protocol version p2p speaks: 2.2 (2.1's PIN and download API, and a client certificate when it
    /// sends), the version the current apps announce. Protocol/LOCALSEND.md says what of it p2p implements.
    public static let protocolVersion = "2.2"
    /// LocalSend's default port, for its multicast group and its HTTP(S) server alike.
    public static let defaultPort = 53317
    /// LocalSend's default multicast group.
    public static let multicastGroup = "224.0.0.167"
    /// Device types the protocol names.
    public static let deviceTypes: Set<String> = ["mobile", "desktop", "web", "headless", "server"]

    /// The port to reach it on.
    public var effectivePort: Int { port.flatMap { (1...65535).contains($0) ? $0 : nil } ?? Self.defaultPort }
    /// Whether to reach it over HTTPS (anything but an explicit `http`).
    public var usesHTTPS: Bool { (`protocol` ?? "https").lowercased() != "http" }
    /// The device type, `desktop` when absent or unknown.
    public var kind: String { deviceType.flatMap { Self.deviceTypes.contains($0) ? $0 : nil } ?? "desktop" }
    /// Whether `fingerprint` equals another, ignoring case (implementations differ in the hex's case).
    public func hasFingerprint(_ other: String) -> Bool { Self.fingerprintKey(fingerprint) == Self.fingerprintKey(other) }
    /// A fingerprint as devices are told apart by it: cut to 128 bytes as a device list keeps it, ASCII
    /// letters in upper case. Fingerprints are hex (HTTPS) or random ASCII (HTTP); Unicode's case mapping is
    /// not used because it does not round-trip (`ϴ` and `ẞ` upper-case differently once lower-cased), so
    /// the same claimed fingerprint would be two devices.
    public static func fingerprintKey(_ fingerprint: String) -> String {
        String(decoding: cut(fingerprint, to: keptBytes).utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
    }
    /// The major version, or nil when `version` is not `N.M`.
    public var majorVersion: Int? { version.split(separator: ".").first.flatMap { Int($0) } }

    /// The same description, marked as an announcement (`announce: true`) or an answer (`false`).
    public func announcing(_ value: Bool?) -> LocalSendDeviceInfo {
        var copy = self
        copy.announce = value
        return copy
    }

    /// Every string field held to `limit` bytes of UTF-8 (cut at a character boundary): what a device list
    /// keeps of a device, so that a flood of long aliases cannot grow memory.
    public func truncated(to limit: Int = keptBytes) -> LocalSendDeviceInfo {
        let cut = { Self.cut($0, to: limit) }
        var copy = self
        copy.alias = cut(alias)
        copy.version = cut(version)
        copy.deviceModel = deviceModel.map(cut)
        copy.deviceType = deviceType.map(cut)
        copy.fingerprint = cut(fingerprint)
        copy.protocol = `protocol`.map(cut)
        return copy
    }

    /// How many bytes of each string a device list keeps.
    public static let keptBytes = 128

    /// `string` held to `limit` bytes of UTF-8, cut at a character boundary.
    static func cut(_ string: String, to limit: Int) -> String {
        guard string.utf8.count > limit else { return string }
        var result = ""
        for character in string {
            guard result.utf8.count + String(character).utf8.count <= limit else { break }
            result.append(character)
        }
        return result
    }
}
