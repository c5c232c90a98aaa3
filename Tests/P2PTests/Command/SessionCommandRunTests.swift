import Testing
@testable import P2P

/// What every command on a session does around its work (`SessionCommandRun`): the exit code of work
/// that ends or fails, and Ctrl-C, which closes the session, says how far the work got and exits 130.
/// Sessions are not started (no sockets): the run only closes them.
@Suite("Session command run", .timeLimit(.minutes(1)))
struct SessionCommandRunTests {
    @Test func workThatEndsGivesItsExitCodeAndAFailureIsToldWithItsOwn() async throws {
        let run = SessionCommandRun(session: try await makeSession("alice", inMemory: true))
        let (interrupts, _) = AsyncStream.makeStream(of: Void.self)
        #expect(await run.run(interrupts: interrupts) { .recordsRejected } == .recordsRejected)

        let failures = NIOLockedValueBoxWrapper<[CommandFailure]>([])
        let failure = CommandFailure(code: "send", message: "bob went away", exitCode: .failure)
        let status = await run.run(interrupts: interrupts, failed: { failed in failures.mutate { $0.append(failed) } }) { () throws(CommandFailure) -> CommandExitCode in
            throw failure
        }
        #expect(status == .failure && failures.value == [failure])
        #expect(!run.isInterrupted && run.failure(failure) == failure)
    }

    @Test func ctrlCClosesTheSessionSaysHowFarTheWorkGotAndExits130() async throws {
        let run = SessionCommandRun(session: try await makeSession("alice", inMemory: true))
        let (interrupts, ctrlC) = AsyncStream.makeStream(of: Void.self)
        let (started, workStarted) = AsyncStream.makeStream(of: Void.self)
        // The work waits for something that never comes (a peer that never answers), until cancelled.
        let (never, neverEnds) = AsyncStream.makeStream(of: Void.self)
        let said = NIOLockedValueBoxWrapper<[String]>([])
        async let status = run.run(interrupts: interrupts, interrupted: { said.mutate { $0.append("interrupted; nothing was sent") } },
                                   failed: { failure in said.mutate { $0.append(failure.description) } }) { () throws(CommandFailure) -> CommandExitCode in
            workStarted.yield()
            for await _ in never {}
            // The session closed under the work: it fails, but that is not news after Ctrl-C.
            throw CommandFailure(code: "send", message: "the session closed", exitCode: .failure)
        }
        for await _ in started { break }
        ctrlC.yield()
        #expect(await status == .interrupted)
        #expect(said.value == ["interrupted; nothing was sent"])
        #expect(run.isInterrupted)
        #expect(run.failure(CommandFailure(code: "send", message: "closed", exitCode: .failure)) == .interrupted)
        neverEnds.finish()
    }

    @Test func aPeerNotReachedIsAFailureWithTheDocumentedExitCode() {
        #expect(CommandFailure(ReachError.notFound("no peer \"bob\" appeared")).exitCode == .peerNotFound)
        #expect(CommandFailure(ReachError.ambiguous("several fit")).exitCode == .peerNotFound)
        #expect(CommandFailure(ReachError.denied("bob declined"), denial: .denied).exitCode == .denied)
        #expect(CommandFailure(ReachError.denied("bob declined")).exitCode == .connectionFailed)
        #expect(CommandFailure(ReachError.noDiscovery("no mDNS daemon")).exitCode == .noDaemon)
        #expect(CommandFailure(ReachError.badEndpoint("--connect wants HOST:PORT")).exitCode == .failure)
        let failure = CommandFailure(ReachError.failed("cannot connect to bob"))
        #expect(failure.code == ReachError.failed("").jsonCode && failure.description == "cannot connect to bob")
        #expect(CommandFailure.listen(.bindFailed(host: "::", port: 24242, reason: "taken")).code == "listen")
        #expect(CommandFailure.interrupted.message == nil)
    }
}
