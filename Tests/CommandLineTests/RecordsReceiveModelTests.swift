import ArgumentParser
@testable import P2P
import Testing
@testable import P2PCLI

/// How `p2p records receive` ends and what it does with each input, without a terminal or sockets.
@Suite struct RecordsReceiveModelTests {
    func exit(_ effects: [RecordsReceiveModel.Effect]) -> ExitCode? {
        guard effects.count == 1, case .exit(let status) = effects[0] else { return nil }
        return status
    }

    @Test func withOnceTheFirstSnapshotEndsItWithThatSnapshotsStatus() {
        var merged = RecordsReceiveModel(once: true)
        #expect(exit(merged.handle(.event(.finished(.merged)))) == .success)
        var rejected = RecordsReceiveModel(once: true)
        #expect(exit(rejected.handle(.event(.finished(.rejected)))) == ExitStatus.recordsRejected)
        var failed = RecordsReceiveModel(once: true)
        #expect(exit(failed.handle(.event(.finished(.failed)))) == ExitStatus.transferFailed)
    }

    @Test func withoutOnceItTakesSnapshotsUntilCtrlCWhichEndsItWithZero() {
        var model = RecordsReceiveModel(once: false)
        #expect(model.handle(.event(.finished(.rejected))).isEmpty)
        #expect(model.handle(.event(.finished(.merged))).isEmpty)
        #expect(exit(model.handle(.interrupt)) == .success)
    }

    @Test func keysGoToTheQuestionAndPipedLinesToNothing() {
        var model = RecordsReceiveModel(once: false)
        guard case .answer(let keys)? = model.handle(.keys([.character("y")])).first else { Issue.record("keys not answered"); return }
        #expect(keys == [.character("y")])
        guard case .withdraw(let token)? = model.handle(.withdrawn(token: 42)).first else { Issue.record("not withdrawn"); return }
        #expect(token == 42)
        #expect(model.handle(.line("y")).isEmpty && model.handle(.endOfInput).isEmpty)
    }
}
