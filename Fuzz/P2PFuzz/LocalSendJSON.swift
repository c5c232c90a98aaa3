@testable import P2P
import Foundation
import NIOHTTP1

/// The JSON a LocalSend device sends p2p, by the first byte (mod 4), the rest being the JSON:
///  0. a device description: a multicast announcement, a `register` body or answer (`LocalSendDeviceInfo`);
///  1. a `prepare-upload` body (`LocalSendPrepareUpload`), then read as a p2p offer (`LocalSendOffer.read`);
///  2. a receiver's answer to `prepare-upload` (`LocalSendUploadSession`), as p2p's sender uses it;
///  3. a sharer's answer to `prepare-download` (`LocalSendDownloadSession`).
/// One target rather than four: one decoder (Foundation's JSONDecoder over `Codable` types that share
/// `LocalSendDeviceInfo` and `LocalSendFileInfo`), and the fuzz smoke stays 15 s longer, not 60.
///
/// Contract, for any bytes: nothing crashes; what decodes survives encoding (decode(encode(m)) == m); a
/// device description kept in a device list is held to 128 bytes a string and a port in range, and its label
/// prints nothing a terminal would obey; an offer is either refused with 400 or made of names `SafePath`
/// accepts, inside the download directory, with a size that is the sum of its files; an answer's session
/// and tokens put nothing into the upload URL's query but percent-escaped bytes.
@Sendable func fuzzLocalSendJSON(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let kind = bytes.first else { return }
    let json = Data(bytes.dropFirst())
    switch kind % 4 {
    case 0:
        guard let device = roundTrip(LocalSendDeviceInfo.self, json, bytes) else { return }
        checkDevice(device, bytes)
    case 1:
        guard let request = roundTrip(LocalSendPrepareUpload.self, json, bytes) else { return }
        checkDevice(request.info, bytes)
        checkOffer(request, bytes)
    case 2:
        guard let session = roundTrip(LocalSendUploadSession.self, json, bytes) else { return }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%".utf8)
        for value in [session.sessionId] + Array(session.files.keys) + Array(session.files.values) {
            let escaped = LocalSendSender.escape(value)
            guard escaped.utf8.allSatisfy(allowed.contains) else { violated("upload query value escapes to \(escaped.debugDescription)", bytes) }
            guard escaped.removingPercentEncoding == value else { violated("upload query value does not unescape to itself", bytes) }
        }
    default:
        guard let session = roundTrip(LocalSendDownloadSession.self, json, bytes) else { return }
        checkDevice(session.info, bytes)
    }
}

/// The decoded value, or nil when the JSON is refused; a value whose encoding does not decode to it is a violation.
private func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ json: Data, _ input: UnsafeBufferPointer<UInt8>) -> T? {
    guard let value = try? JSONDecoder().decode(T.self, from: json) else { return nil }
    do {
        let again = try JSONDecoder().decode(T.self, from: JSONEncoder().encode(value))
        guard again == value else { violated("\(T.self) does not survive encoding: \(value) then \(again)", input) }
    } catch {
        violated("\(T.self): its own encoding does not decode: \(error)", input)
    }
    return value
}

/// What p2p keeps and shows of a device.
private func checkDevice(_ device: LocalSendDeviceInfo, _ input: UnsafeBufferPointer<UInt8>) {
    let kept = device.truncated()
    for field in [kept.alias, kept.version, kept.fingerprint] + [kept.deviceModel, kept.deviceType, kept.protocol].compactMap({ $0 }) {
        guard field.utf8.count <= 128 else { violated("a device string of \(field.utf8.count) bytes kept", input) }
    }
    guard kept.truncated() == kept else { violated("truncating twice changes a device", input) }
    guard (1 ... 65535).contains(device.effectivePort) else { violated("port \(device.effectivePort)", input) }
    guard LocalSendDeviceInfo.deviceTypes.contains(device.kind) else { violated("device type \(device.kind)", input) }
    var list = LocalSendDeviceList(capacity: 2)
    list.record(device, address: "10.0.0.1")
    if !device.fingerprint.isEmpty {
        let otherCase = String(decoding: device.fingerprint.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
        guard let entry = list.device(fingerprint: otherCase), entry.address == "10.0.0.1" else {
            violated("a recorded device is not found by its fingerprint", input)
        }
        let label = LocalSendPeer.label(of: entry.peer).description
        guard !label.unicodeScalars.contains(where: PeerText.isUnsafe) else { violated("a device label prints \(label.debugDescription)", input) }
    }
}

/// A `prepare-upload` read as a p2p offer into a directory that does not exist (nothing on disk is touched).
private func checkOffer(_ request: LocalSendPrepareUpload, _ input: UnsafeBufferPointer<UInt8>) {
    let directory = URL(fileURLWithPath: "/nonexistent-p2p-fuzz/in", isDirectory: true)
    let peer = LocalSendPeer.info(request.info, address: "10.0.0.1")
    let offer: LocalSendOffer
    do {
        offer = try LocalSendOffer.read(request, from: peer, id: 1, into: directory)
    } catch let error as HTTPError {
        guard error.status == .badRequest else { violated("an offer refused with \(error.status)", input) }
        return
    } catch {
        violated("an offer refused with \(error)", input)
    }
    switch offer.content {
    case .text(let text):
        guard request.files.count == 1, text.utf8.count <= TextTransfer.byteLimit else { violated("a text of \(text.utf8.count) bytes", input) }
    case .files(let files):
        guard files.count == request.files.count, files.count <= LocalSendOffer.maxFiles else { violated("\(files.count) files read", input) }
        var total: UInt64 = 0
        for file in files {
            guard (try? SafePath.components(of: file.fileName)) != nil else { violated("an unsafe name let through: \(file.fileName.debugDescription)", input) }
            total = total.addingReportingOverflow(file.size).partialValue
        }
        guard offer.offer.info.size == total else { violated("offer size \(offer.offer.info.size), files \(total)", input) }
        let prefix = directory.path + "/"
        guard offer.offer.destination.standardizedFileURL.path.hasPrefix(prefix) || offer.offer.destination.standardizedFileURL.path == directory.path else {
            violated("an offer lands at \(offer.offer.destination.path)", input)
        }
    }
}
