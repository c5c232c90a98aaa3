import Foundation
@testable import P2P
import Testing

/// `p2p share`'s decisions without sockets: the PIN, guesses limited per address, sessions bound to the
/// address that gave the PIN, and `--once` ending the share when every file was fetched whole.
@Suite struct ShareStateTests {
    let files = [
        SharedFile(id: "f1", name: "a.txt", size: 3, fileType: "text/plain", source: URL(fileURLWithPath: "/tmp/a.txt")),
        SharedFile(id: "f2", name: "pics/b.png", size: 5, fileType: "image/png", source: URL(fileURLWithPath: "/tmp/pics/b.png")),
    ]
    let start = ContinuousClock.now

    func share(once: Bool = false, limit: PINGuessLimit = PINGuessLimit()) throws -> ShareState {
        let counter = Counter()
        return ShareState(files: files, pin: try SharePIN("4711"), once: once, guesses: limit, newSessionID: { "s\(counter.next())" })
    }

    @Test func theRightPINGivesASessionAndTheFiles() throws {
        var state = try share()
        do { let answer = state.prepareDownload(pin: "4711", sessionID: nil, from: "10.0.0.5", at: start); #expect(answer == .files(sessionID: "s1", files)) }
    }

    @Test func noPINOrAWrongOneIs401AndGivesNothing() throws {
        var state = try share()
        do { let answer = state.prepareDownload(pin: nil, sessionID: nil, from: "10.0.0.5", at: start); #expect(answer == .pinRequired) }
        do { let answer = state.prepareDownload(pin: "", sessionID: nil, from: "10.0.0.5", at: start); #expect(answer == .pinRequired) }
        do { let answer = state.prepareDownload(pin: "4712", sessionID: nil, from: "10.0.0.5", at: start); #expect(answer == .wrongPIN) }
        do { let answer = state.prepareDownload(pin: "47111", sessionID: nil, from: "10.0.0.5", at: start); #expect(answer == .wrongPIN) }
        do { let answer = state.prepareDownload(pin: "471", sessionID: nil, from: "10.0.0.5", at: start); #expect(answer == .wrongPIN) }
        // A made-up session ID is no way around the PIN (from another address: this one is locked out now).
        do { let answer = state.prepareDownload(pin: nil, sessionID: "s1", from: "10.0.0.15", at: start); #expect(answer == .pinRequired) }
        #expect(state.download(sessionID: "s1", fileID: "f1", from: "10.0.0.15") == .forbidden)
    }

    @Test func threeWrongPINsLockTheAddressOutFor60SecondsButNotOthers() throws {
        var state = try share()
        for _ in 0..<3 { let answer = state.prepareDownload(pin: "0000", sessionID: nil, from: "10.0.0.6", at: start); #expect(answer == .wrongPIN) }
        // Even the right PIN is refused while locked out: a guesser cannot tell it hit.
        do { let answer = state.prepareDownload(pin: "4711", sessionID: nil, from: "10.0.0.6", at: start + .seconds(1)); #expect(answer == .tooManyGuesses(retryAfter: .seconds(59))) }
        do { let answer = state.prepareDownload(pin: "4711", sessionID: nil, from: "10.0.0.7", at: start + .seconds(1)); #expect(answer == .files(sessionID: "s1", files)) }
        do { let answer = state.prepareDownload(pin: "4711", sessionID: nil, from: "10.0.0.6", at: start + .seconds(60)); #expect(answer == .files(sessionID: "s2", files)) }
    }

    @Test func aLockoutThatRanOutStartsAFreshCount() throws {
        var state = try share()
        for _ in 0..<3 { _ = state.prepareDownload(pin: "0000", sessionID: nil, from: "10.0.0.6", at: start) }
        do { let answer = state.prepareDownload(pin: "0000", sessionID: nil, from: "10.0.0.6", at: start + .seconds(61)); #expect(answer == .wrongPIN) }
        do { let answer = state.prepareDownload(pin: "0000", sessionID: nil, from: "10.0.0.6", at: start + .seconds(62)); #expect(answer == .wrongPIN) }
        do { let answer = state.prepareDownload(pin: "4711", sessionID: nil, from: "10.0.0.6", at: start + .seconds(63)); #expect(answer == .files(sessionID: "s1", files)) }
    }

    @Test func theGuessTableIsBoundedAndAFloodOfAddressesBuysNoFreshGuesses() {
        var limit = PINGuessLimit(maxFailures: 2, lockout: .seconds(60), maxAddresses: 3)
        for address in ["a", "b", "c"] {
            limit.recordFailure(from: address, at: start)
            limit.recordFailure(from: address, at: start)
        }
        #expect(limit.count == 3)
        // Every remembered address is locked out: a newcomer waits too, and is not added.
        #expect(limit.wait(for: "d", at: start) == .seconds(60))
        limit.recordFailure(from: "d", at: start)
        #expect(limit.count == 3)
        #expect(limit.wait(for: "a", at: start + .seconds(10)) == .seconds(50))
        // Once a lockout ran out, that entry is the one forgotten.
        limit.recordFailure(from: "e", at: start + .seconds(61))
        #expect(limit.count == 3)
    }

    @Test func aReloadTakesTheSessionBackWithoutThePINFromTheSameAddressOnly() throws {
        var state = try share()
        guard case .files(let session, _) = state.prepareDownload(pin: "4711", sessionID: nil, from: "10.0.0.5", at: start) else {
            Issue.record("no session"); return
        }
        do { let answer = state.prepareDownload(pin: nil, sessionID: session, from: "10.0.0.5", at: start); #expect(answer == .files(sessionID: session, files)) }
        do { let answer = state.prepareDownload(pin: nil, sessionID: session, from: "10.0.0.9", at: start); #expect(answer == .pinRequired) }
    }

    @Test func aDownloadNeedsTheSessionOfItsAddressAndAKnownFile() throws {
        var state = try share()
        _ = state.prepareDownload(pin: "4711", sessionID: nil, from: "10.0.0.5", at: start)
        #expect(state.download(sessionID: "s1", fileID: "f2", from: "10.0.0.5") == .file(files[1]))
        #expect(state.download(sessionID: "s1", fileID: "f2", from: "10.0.0.8") == .forbidden)
        #expect(state.download(sessionID: "s9", fileID: "f2", from: "10.0.0.5") == .forbidden)
        #expect(state.download(sessionID: nil, fileID: "f2", from: "10.0.0.5") == .forbidden)
        #expect(state.download(sessionID: "s1", fileID: "f3", from: "10.0.0.5") == .noSuchFile)
        #expect(state.download(sessionID: "s1", fileID: nil, from: "10.0.0.5") == .noSuchFile)
    }

    @Test func sessionsAreBoundedOldestForgottenFirst() throws {
        var state = try share()
        for _ in 0...ShareState.maxSessions { _ = state.prepareDownload(pin: "4711", sessionID: nil, from: "10.0.0.5", at: start) }
        #expect(state.download(sessionID: "s1", fileID: "f1", from: "10.0.0.5") == .forbidden)
        #expect(state.download(sessionID: "s2", fileID: "f1", from: "10.0.0.5") == .file(files[0]))
    }

    @Test func onceEndsWhenEveryFileWasFetchedWholeAndNotBefore() throws {
        var state = try share(once: true)
        do { let over = state.fetched("f1"); #expect(!over) }
        do { let over = state.fetched("f1"); #expect(!over) }
        do { let over = state.fetched("nope"); #expect(!over) }
        #expect(state.fetchedCount == 1)
        do { let over = state.fetched("f2"); #expect(over) }
        #expect(state.isOver)
        // A file fetched again after the end does not end it again.
        do { let over = state.fetched("f1"); #expect(!over) }
    }

    @Test func withoutOnceTheShareNeverEnds() throws {
        var state = try share(once: false)
        _ = state.fetched("f1")
        do { let over = state.fetched("f2"); #expect(!over) }
        #expect(!state.isOver)
    }

    @Test func randomPINsAreSixDigitsAndSessionIDs128Bits() {
        let pins = Set((0..<50).map { _ in SharePIN.random().value })
        #expect(pins.allSatisfy { $0.count == 6 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        #expect(pins.count > 40)
        let session = ShareState.randomSessionID()
        #expect(session.count == 32 && session.allSatisfy(\.isHexDigit))
        #expect(session != ShareState.randomSessionID())
    }

    @Test func aChosenPINMustBePrintableASCIIUpTo64Characters() {
        #expect(throws: ShareError.self) { try SharePIN("") }
        #expect(throws: ShareError.self) { try SharePIN("12 34") }
        #expect(throws: ShareError.self) { try SharePIN("12\u{1B}[2J") }
        #expect(throws: ShareError.self) { try SharePIN("ü123") }
        #expect(throws: ShareError.self) { try SharePIN(String(repeating: "1", count: 65)) }
        #expect((try? SharePIN("a-Z_9!")) != nil)
    }
}

/// Session IDs s1, s2, … for the tests.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.lock(); defer { lock.unlock() }; value += 1; return value }
}
