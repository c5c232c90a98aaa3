import Foundation
import Testing
@testable import P2P

/// What `p2p receive` decides about offers before and instead of asking (``ReceiveRules``,
/// ``OfferQuestions``): `--yes`, `--from`, `--text`, the hidden-path and execute-bit allowances, which
/// question an offer raises, and the answers that stand for later offers. No socket, no terminal.
@Suite struct ReceiveRulesTests {
    let alice = PeerInfo(id: PeerID(bytes: Array(repeating: 1, count: 16)), displayName: "alice", sessionID: "files")
    let carol = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "carol", sessionID: "files")

    func offer(_ name: String, from peer: PeerInfo? = nil, tree: Bool = false, mediaType: String = "text/plain") -> TransferInfo {
        var info = TransferInfo(id: 1, peer: peer ?? alice, name: PeerText(name), size: 10, mediaType: mediaType, direction: .receiving)
        info.isTree = tree
        return info
    }

    @Test func yesAndFromAcceptUnaskedWithOnlyWhatTheFlagsAllow() {
        let everyone = ReceiveRules(acceptsEveryone: true)
        #expect(everyone.trusts(carol))
        #expect(everyone.unasked(offer("a.txt")) == .accepted(OfferAnswer(accepted: true)))
        let fromAlice = ReceiveRules(from: "alice", allowsHidden: true)
        #expect(fromAlice.trusts(alice) && !fromAlice.trusts(carol))
        #expect(fromAlice.unasked(offer("a.txt")) == .accepted(OfferAnswer(accepted: true, allowsHidden: true)))
        #expect(fromAlice.unasked(offer("a.txt", from: carol)) == .ask)
        #expect(!ReceiveRules(from: "01010101").trusts(alice), "a prefix under 80 bits authorizes nothing")
        #expect(ReceiveRules(from: alice.id.hex).trusts(alice))
    }

    @Test func textOnlyDeclinesFilesEvenFromATrustedSender() {
        let rules = ReceiveRules(acceptsEveryone: true, textsOnly: true)
        #expect(rules.unasked(offer("a.txt")) == .declinedAsNotText)
        #expect(rules.unasked(offer("text.txt", mediaType: TextTransfer.mediaType)) == .accepted(OfferAnswer(accepted: true)))
    }

    @Test func aYesAllowsHiddenPathsOnlyWhenItsQuestionNamedThem() {
        let rules = ReceiveRules()
        #expect(rules.answer(true, namedRisks: true) == OfferAnswer(accepted: true, allowsHidden: true, allowsExecutable: true))
        #expect(rules.answer(true, namedRisks: false) == OfferAnswer(accepted: true))
        #expect(rules.answer(false, namedRisks: true).accepted == false)
        #expect(OfferQuestions.Question.tree.namesRisks && OfferQuestions.Question.file.namesRisks)
        #expect(!OfferQuestions.Question.folder("many/").namesRisks && !OfferQuestions.Question.text.namesRisks)
    }

    @Test func eachKindOfOfferRaisesItsQuestionAndNobodyToAskDeclines() {
        let questions = OfferQuestions(canAsk: true)
        let sender = alice.id.hex + "/"
        #expect(questions.decide(offer("text.txt", mediaType: TextTransfer.mediaType)) == .ask(.text, key: nil))
        #expect(questions.decide(offer("many/", tree: true)) == .ask(.tree, key: nil))
        #expect(questions.decide(offer("many/a/b.txt")) == .ask(.folder("many/"), key: sender + "many/"))
        #expect(questions.decide(offer("b.txt")) == .ask(.file, key: sender))
        #expect(questions.decide(offer("many/c.txt")) { $0 == sender + "many/" } == .joins(key: sender + "many/"))
        let nobody = OfferQuestions(canAsk: false)
        #expect(nobody.decide(offer("b.txt")) == .declined && nobody.decide(offer("many/", tree: true)) == .declined)
    }

    @Test func aFolderAnswerAndAllFromASenderStandUntilItLeaves() {
        var questions = OfferQuestions(canAsk: true)
        let sender = alice.id.hex + "/"
        let folderCovers = questions.answered(false, all: false, offerName: "many/a.txt", key: sender + "many/")
        #expect(folderCovers, "a folder's answer covers the folder")
        #expect(questions.decide(offer("many/b.txt")) == .answered(false))
        let yesCovers = questions.answered(true, all: false, offerName: "b.txt", key: sender)
        #expect(!yesCovers, "a plain yes stands for nothing more")
        #expect(questions.decide(offer("c.txt")) == .ask(.file, key: sender))
        let allCovers = questions.answered(true, all: true, offerName: "c.txt", key: sender)
        #expect(allCovers)
        #expect(questions.decide(offer("d.txt")) == .answered(true))
        #expect(questions.decide(offer("other/e.txt")) == .answered(true), "all from a sender covers its folders")
        #expect(questions.decide(offer("many/f.txt")) == .answered(false), "but not a folder it said no to")
        #expect(questions.decide(offer("tree/", tree: true)) == .answered(true))
        #expect(questions.decide(offer("d.txt", from: carol)) == .ask(.file, key: carol.id.hex + "/"), "another sender is asked")
        questions.senderLeft(alice.id)
        #expect(questions.decide(offer("d.txt")) == .ask(.file, key: sender))
        #expect(OfferQuestions.isLooseKey(sender) && !OfferQuestions.isLooseKey(sender + "many/"))
    }

    @Test func aDirectoryThatCannotTakeFilesSaysWhy() throws {
        let folder = TestFiles.temporaryDirectory.appendingPathComponent("p2p-dir-\(UUID().uuidString)")
        #expect(WritableDirectory.problem(at: folder.path)?.contains("it does not exist") == true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(WritableDirectory.problem(at: folder.path) == nil)
        let file = folder.appendingPathComponent("f")
        try Data().write(to: file)
        #expect(WritableDirectory.problem(at: file.path)?.hasSuffix("it is a file, not a directory") == true)
    }
}
