import Foundation
import Testing
@testable import P2P

/// `p2p records receive` and `p2p records send` as the library runs them: who is let in, what each
/// snapshot reports and when the run ends (`RecordsReceiveRun`, over in-process links), and the send
/// from finding the peer to its answer (`RecordsSendRun`, over TLS on loopback: it dials an address).
@Suite("Records runs", .serialized, .timeLimit(.minutes(1)))
struct RecordsRunTests {
    typealias F = RecordsFixtures

    static func request(from name: String, pinned: Bool) -> ConnectionRequest {
        var peer = PeerInfo(id: F.bob, displayName: name, sessionID: "records")
        if pinned { peer.trust = .known(KnownPeer(id: F.bob, name: name, method: .firstUse, pinnedAt: Date())) }
        return ConnectionRequest(peer: peer)
    }

    @Test func withOnceTheFirstSnapshotIsReportedAndEndsTheRunWithItsStatus() async throws {
        let theirs = try F.temporaryStore()
        _ = try theirs.merge(try F.example("tasks.json"))
        // bob's only record exchange is the run's.
        let alice = try await RecordPeer("alice"), bob = try await makeSession("bob", sessionID: "records", inMemory: true)
        let events = NIOLockedValueBoxWrapper<[RecordsReceiveRun.Event]>([])
        let run = RecordsReceiveRun(session: bob, store: theirs, policy: .lastWriterWins,
                                    admission: ConnectionPolicy(acceptsEveryone: true, canAsk: false), once: true) { event in
            events.mutate { $0.append(event) }
        }
        try await alice.session.connect(inMemoryTo: bob)
        let bad = try F.tasks([F.task("t9", ["text": .string("x"), "priority": .integer(7)])], origin: F.alice)
        #expect(try await alice.send(bad, to: bob.peerID).status == .rejected)
        let seen = try await events.wait(for: "the end of the run") { $0.contains { if case .ended = $0 { true } else { false } } }
        guard seen.count == 3, case .report(.offered) = seen[0], case .report(.rejected) = seen[1], case .ended(let code) = seen[2] else {
            Issue.record("not offer, rejection, end: \(seen)"); return
        }
        #expect(code == .recordsRejected)
        await run.finish()
        await alice.close(); await bob.close()
    }

    @Test func aPinnedSenderIsLetInAStrangerIsAskedOnceOrDeclinedWithoutAPerson() async throws {
        let bob = try await RecordPeer("bob")
        let asking = RecordsReceiveRun(session: bob.session, store: try F.temporaryStore(), policy: .lastWriterWins,
                                       admission: ConnectionPolicy(acceptsEveryone: false, canAsk: true), once: false) { _ in }
        let asked = NIOLockedValueBoxWrapper<[String]>([])
        let ask: (ConnectionRequest) async -> Bool = { request in
            asked.mutate { $0.append(RecordsReceiveRun.question(for: request)) }
            return true
        }
        #expect(await asking.admit(Self.request(from: "carol", pinned: true), ask: ask))
        #expect(asked.value.isEmpty)
        #expect(await asking.admit(Self.request(from: "mallory", pinned: false), ask: ask))
        #expect(await asking.admit(Self.request(from: "mallory", pinned: false), ask: ask))
        #expect(asked.value.count == 1 && asked.value[0].hasPrefix("mallory wants to send records — ") && asked.value[0].hasSuffix(". Accept?"))

        let declined = NIOLockedValueBoxWrapper<[String]>([])
        let piped = RecordsReceiveRun(session: bob.session, store: try F.temporaryStore(), policy: .lastWriterWins,
                                      admission: ConnectionPolicy(acceptsEveryone: false, canAsk: false), once: false) { event in
            if case .declined(let line) = event { declined.mutate { $0.append(line) } }
        }
        #expect(await !piped.admit(Self.request(from: "mallory", pinned: false), ask: ask))
        #expect(asked.value.count == 1)
        #expect(declined.value == ["declined a connection request from mallory (\(F.bob.short)); use --yes to accept requests"])
        await asking.finish(); await piped.finish()
        await bob.close()
    }

    @Test func theSendFindsThePeerSendsTheStoreAndEndsWithTheAnswersExitCode() async throws {
        let mine = try F.temporaryStore(), theirs = try F.temporaryStore()
        _ = try mine.merge(try F.example("tasks.json"))
        let alice = try await makeSession("alice", sessionID: "records"), bob = try await makeSession("bob", sessionID: "records", inMemory: true)
        // As `p2p records receive`: the receiver is in place before the session starts.
        let exchange = RecordExchange(session: bob)
        let receiver = RecordStoreReceiver(exchange, store: theirs) { _ in }
        try await bob.start()
        let events = NIOLockedValueBoxWrapper<[RecordsSendRun.Event]>([])
        let (interrupts, _) = AsyncStream.makeStream(of: Void.self)
        let run = RecordsSendRun(SessionCommandRun(session: alice), job: RecordSendJob(.store(mine, entities: [], sinceLast: false)))
        let status = await run.run(connector: PeerConnector(session: alice, address: bob.endpoint.description), interrupts: interrupts) { event in
            events.mutate { $0.append(event) }
        }
        #expect(status == .success)
        let seen = events.value
        guard seen.count == 3, case .connected(let peer) = seen[0], case .sending(let note) = seen[1], case .report(.sent(let result, _, _, _)) = seen[2] else {
            Issue.record("not connected, sending, report: \(seen)"); return
        }
        #expect(peer.id == bob.peerID && note == "Sending records to bob…" && result.status == .merged)
        #expect(try theirs.records() == mine.records())
        await receiver.finish()
        withExtendedLifetime(exchange) {}
        await bob.close()
    }

    @Test func aSendToAnAddressThatIsNoneFailsWithItsLineAndExitCode() async throws {
        let alice = try await makeSession("alice", sessionID: "records", inMemory: true)
        let events = NIOLockedValueBoxWrapper<[RecordsSendRun.Event]>([])
        let (interrupts, _) = AsyncStream.makeStream(of: Void.self)
        let run = RecordsSendRun(SessionCommandRun(session: alice), job: RecordSendJob(.file(try F.example("tasks.json"))))
        let status = await run.run(connector: PeerConnector(session: alice, address: "bob"), interrupts: interrupts) { event in
            events.mutate { $0.append(event) }
        }
        #expect(status == .failure)
        guard case .failed(let failure)? = events.value.first, events.value.count == 1 else { Issue.record("\(events.value)"); return }
        #expect(failure.message == Endpoint.connectUsage("bob"))
    }
}
