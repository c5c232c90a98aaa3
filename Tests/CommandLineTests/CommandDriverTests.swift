import Testing
@testable import P2PCLI

/// The terminal driver's parts that need no terminal: timers, and the drain at exit.
@Suite struct CommandDriverTests {
    @Test func aTimerSendsItsEventOnceAndACancelledOneNever() async {
        let driver = CommandDriver<Int>()
        let cancelled = driver.timers.after(.milliseconds(5), 1)
        driver.timers.cancel(cancelled)
        driver.timers.after(.milliseconds(20), 2)
        var iterator = driver.events.makeAsyncIterator()
        #expect(await iterator.next() == 2)
    }

    @Test func aRepeatingTimerRepeatsUntilTheDriverDrains() async {
        let driver = CommandDriver<Int>()
        driver.timers.every(.milliseconds(1), 7)
        var iterator = driver.events.makeAsyncIterator()
        #expect(await iterator.next() == 7)
        #expect(await iterator.next() == 7)
        await driver.drain(closing: {}, leftover: { _ in })
    }

    @Test func theDrainShowsWhatThePumpsHeldBeforeAndAfterTheCloseAndNothingLater() async {
        let driver = CommandDriver<String>()
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
        }, leftover: { shown.append($0) })
        #expect(shown.first == "closed")
        #expect(Set(shown.dropFirst()) == ["typed", "session: bob joined", "feature: file done"])
        driver.feed.send("late")
        #expect(!shown.contains("late") && !shown.contains("timer"))
    }

    @Test func aQuestionIsAnsweredFromTheLoopAndOneWhoseAskerStopsWaitingIsWithdrawnAndAnsweredNo() async {
        let driver = CommandDriver<QuestionEvent>()
        let feed = driver.feed
        var questions = PendingQuestions<String>()
        var events = driver.events.makeAsyncIterator()
        let answered = Task { await feed.ask("alice wants to connect. Accept?", as: { .question($0) }, withdrawn: { .withdrawn($0) }) }
        guard case .question(let asked)? = await events.next(), questions.admit(asked) else { Issue.record("no question"); return }
        _ = questions.queue.ask(asked.question, asker: asked)
        for prompt in questions.queue.answerShown(.yes) { prompt.asker.answer.resume(returning: true) }
        #expect(await answered.value)
        // The library stops waiting (the peer left, or its decision timeout passed) by cancelling the asker.
        let timedOut = Task { await feed.ask("bob wants to connect. Accept?", as: { .question($0) }, withdrawn: { .withdrawn($0) }) }
        guard case .question(let second)? = await events.next(), questions.admit(second) else { Issue.record("no question"); return }
        _ = questions.queue.ask(second.question, asker: second)
        timedOut.cancel()
        guard case .withdrawn(let token)? = await events.next() else { Issue.record("not withdrawn"); return }
        #expect(questions.withdraw(token)?.wasShown == true, "it leaves the screen")
        #expect(await timedOut.value == false)
        #expect(questions.queue.shown == nil)
    }
}

private enum QuestionEvent: Sendable {
    case question(Asked<String>)
    case withdrawn(UInt64)
}

