import P2P
import Testing

/// An app's one loop without a terminal (`InputLoop`, `p2p`'s `CommandDriver`): the order of inputs,
/// Ctrl-C, questions and their answers, the exit status, timers, and the drain at exit.
@Suite struct InputLoopTests {
    let alice = PeerInfo(id: PeerID(bytes: Array(repeating: 1, count: 16)), displayName: "alice", sessionID: "chat")
    let bob = PeerInfo(id: PeerID(bytes: Array(repeating: 2, count: 16)), displayName: "bob", sessionID: "chat")

    @Test func theLoopTakesEveryKindOfInputInArrivalOrderAndStopsAtTheStatusItIsGiven() async {
        let driver = InputLoop<LoopTestInput<String>, Int32>()
        let (session, sessionEvents) = AsyncStream.makeStream(of: String.self)
        driver.feed.send(input: .line("e4"))
        driver.feed.send("dial failed")
                driver.feed.send(input: .endOfInput)
        driver.feed.send(input: .interrupt)
        driver.feed.send(input: .line("after the exit"))
        var handled: [String] = []
        let status = await driver.run { input in
            handled.append(Self.describe(input))
            if case .interrupt = input { return 130 }
            return nil
        }
        #expect(status == 130)
        #expect(handled == ["line e4", "event dial failed", "end of input", "interrupt"])
        // Whatever was queued after the input that ended the loop goes to the drain, as do the pumps' events.
        driver.pump(session) { "session: " + $0 }
        sessionEvents.yield("bob left")
        var leftover: [String] = []
        await driver.drain(closing: {}) { leftover.append(Self.describe($0)) }
        #expect(Set(leftover) == ["line after the exit", "event session: bob left"])
    }

    @Test func aPumpedStreamArrivesInItsOwnOrderAmongTheOtherInputs() async {
        let driver = InputLoop<LoopTestInput<Int>, Int32>()
        let (numbers, continuation) = AsyncStream.makeStream(of: Int.self)
        driver.pump(numbers) { $0 }
        for number in 1...100 { continuation.yield(number) }
        var seen: [Int] = []
        let status = await driver.run { input in
            guard case .event(let number) = input else { return nil }
            seen.append(number)
            return number == 100 ? 0 : nil
        }
        #expect(status == 0)
        #expect(seen == Array(1...100))
        await driver.drain(closing: {})
    }

    @Test func aQuestionIsAnsweredFromTheLoopAndOneLeftAtTheExitIsAnsweredNo() async {
        let driver = InputLoop<LoopTestInput<Never>, Int32>()
        let feed = driver.feed
        let alice = self.alice, bob = self.bob
        let answered = Task { await feed.ask(.roomDial(alice)) }
        _ = await driver.run { input in
            guard case .question(let asked) = input else { return nil }
            #expect(asked.question.peer.displayName.raw == "alice")
            asked.answer.resume(returning: true)
            return 0
        }
        #expect(await answered.value)
        // Asked once the loop is over: nobody will show it, so the drain says no for the person.
        let unanswered = Task { await feed.ask(.roomDial(bob)) }
        var leftover = 0
        // Its asker's own task delivers it: once it is seen, it is put back for the drain to find.
        _ = await driver.run { input in
            guard case .question(let asked) = input else { return nil }
            feed.send(input: .question(asked))
            return 0
        }
        await driver.drain(closing: {}) { _ in leftover += 1 }
        #expect(await unanswered.value == false)
        #expect(leftover == 0, "a question is answered by the drain, never handed on as leftover")
        // And one asked after the drain, when no loop will ever take it, is answered no at once.
        #expect(await feed.ask(.roomDial(alice)) == false)
    }

    @Test func aQuestionWhoseAskerStopsWaitingIsWithdrawnAndAnsweredNo() async {
        let driver = InputLoop<LoopTestInput<Never>, Int32>()
        let feed = driver.feed
        let alice = self.alice
        // The library stops waiting (the peer left, or its decision timeout passed) by cancelling the asker.
        let timedOut = Task { await feed.ask(.roomDial(alice)) }
        var questions = PeerQuestions()
        let status = await driver.run { input in
            switch input {
            case .question(let asked):
                guard questions.admit(asked) else { return 1 }
                _ = questions.queue.ask("alice is in room \"chat\". Connect?", asker: asked)
                timedOut.cancel()
            case .withdrawn(let token):
                #expect(questions.withdraw(token)?.wasShown == true, "it leaves the screen")
                return 0
            default:
                break
            }
            return nil
        }
        #expect(status == 0)
        #expect(await timedOut.value == false)
        #expect(questions.queue.shown == nil)
        await driver.drain(closing: {})
    }

    @Test func aModelIsFedEachInputAndItsEffectsAreCarriedOutInOrderUntilOneEndsTheLoop() async {
        let driver = InputLoop<LoopTestInput<Int>, Int32>()
        for number in [3, 4] { driver.feed.send(number) }
        driver.feed.send(input: .line("ignored"))
        driver.feed.send(input: .interrupt)
        driver.feed.send(5)
        var performed: [String] = []
        var redraws = 0
        let (status, model) = await driver.run(SummingModel()) { effect in
            switch effect {
            case .show(let total): performed.append("show \(total)")
            case .exit(let status):
                performed.append("exit \(status)")
                return status
            }
            return nil
        } after: {
            redraws += 1
        }
        #expect(status == 130)
        #expect(performed == ["show 3", "show 7", "exit 130"])
        #expect(model.total == 7, "the model as the last input left it; 5 came after the exit")
        #expect(redraws == 3, "after each input that did not end the loop: 3, 4 and the line")
        await driver.drain(closing: {})
    }

    @Test func aTimerSendsItsEventOnceAndACancelledOneNever() async {
        let driver = InputLoop<LoopTestInput<Int>, Int32>()
        let cancelled = driver.timers.after(.milliseconds(5), 1)
        driver.timers.cancel(cancelled)
        driver.timers.after(.milliseconds(20), 2)
        var fired: [Int] = []
        _ = await driver.run { input in
            guard case .event(let number) = input else { return nil }
            fired.append(number)
            return 0
        }
        #expect(fired == [2])
        await driver.drain(closing: {})
    }

    @Test func aRepeatingTimerRepeatsUntilTheDriverDrains() async {
        let driver = InputLoop<LoopTestInput<Int>, Int32>()
        driver.timers.every(.milliseconds(1), 7)
        var fired = 0
        _ = await driver.run { input in
            guard case .event(7) = input else { return nil }
            fired += 1
            return fired == 2 ? 0 : nil
        }
        #expect(fired == 2)
        await driver.drain(closing: {})
    }

    @Test func theDrainShowsWhatThePumpsHeldBeforeAndAfterTheCloseAndNothingLater() async {
        let driver = InputLoop<LoopTestInput<String>, Int32>()
        let (session, sessionEvents) = AsyncStream.makeStream(of: String.self)
        let (feature, featureEvents) = AsyncStream.makeStream(of: String.self)
        driver.pump(session, untilClose: true) { "session: " + $0 }
        driver.pump(feature) { "feature: " + $0 }
        driver.feed.send("typed")
        sessionEvents.yield("bob joined")
        driver.timers.after(.seconds(60), "timer")
        var shown: [String] = []
        await driver.drain(closing: {
            shown.append("closed")
            featureEvents.yield("file done")  // what the close itself made a feature report
        }, leftover: { input in
            if case .event(let event) = input { shown.append(event) }
        })
        #expect(shown.first == "closed")
        #expect(Set(shown.dropFirst()) == ["typed", "session: bob joined", "feature: file done"])
        driver.feed.send("late")
        #expect(!shown.contains("late") && !shown.contains("timer"))
    }

    static func describe<Event>(_ input: LoopTestInput<Event>) -> String {
        switch input {
        case .line(let line): "line \(line)"
        case .endOfInput: "end of input"
        case .question(let asked): "question \(asked.question.peer.displayName)"
        case .withdrawn(let token): "withdrawn \(token)"
        case .interrupt: "interrupt"
        case .event(let event): "event \(event)"
        }
    }
}

/// A model for the loop: adds up the numbers it is sent and shows the sum; Ctrl-C ends it.
private struct SummingModel: InputModel {
    enum Effect: Sendable {
        case show(Int)
        case exit(Int32)
    }

    var total = 0

    mutating func handle(_ input: LoopTestInput<Int>) -> [Effect] {
        switch input {
        case .event(let number):
            total += number
            return [.show(total)]
        case .interrupt:
            return [.exit(130)]
        default:
            return []
        }
    }
}

/// An app's inputs as `p2p`'s are (`DriverInput`), without the keys of a terminal.
enum LoopTestInput<Event: Sendable>: LoopInput {
    case line(String)
    case endOfInput
    case question(AskedQuestion)
    case withdrawn(token: UInt64)
    case interrupt
    case event(Event)

    var askedQuestion: AskedQuestion? {
        if case .question(let asked) = self { asked } else { nil }
    }
}
