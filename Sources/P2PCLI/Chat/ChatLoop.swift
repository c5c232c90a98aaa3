import ArgumentParser
import Foundation
import NIOCore
import P2P

/// The chat's one loop: session events, keys (or piped lines), connection requests and image offers
/// are handled in arrival order, so no state is shared between threads. Questions to the person are
/// states of this loop (`PromptQueue`), never reads blocked on the side. The chat itself (the room, its
/// lines, files, `--to`, how it ends) runs in the library's `ChatRun`: this loop feeds it what happens
/// and what is typed, and `ChatView` renders the events it returns.
final class ChatLoop {
    let session: Session
    let view: ChatView
    let options: ChatCommand
    let interactive: Bool
    /// Input, Ctrl-C, timers, pumps and the drain at exit. Its pumps share a `Backlog`: a peer's flood
    /// waits in the library's bounded buffer, not in the loop's queue.
    let driver = CommandDriver<ChatRun.Input>(backlog: Backlog())
    var feed: CommandFeed<ChatRun.Input> { driver.feed }
    /// The chat: room, conversation, files, `--to` and the ending.
    var run: ChatRun!
    /// The room as it stands now.
    var room: ChatRoom { run.room }
    var questions = PeerQuestions()
    var editor = LineEditor()

    init(session: Session, view: ChatView, options: ChatCommand) {
        self.session = session
        self.view = view
        self.options = options
        interactive = Terminal.stdinIsTTY && !options.json
    }

    func run() async -> ExitCode {
        let feed = self.feed, view = self.view
        session.setConnectionRequestHandler { request in
            // What the peer attached to its request, shown before any question about it.
            if let object = ChatRun.json(forContextOf: request) { view.show(ChatRun.words(forContextOf: request), json: object) }
            return await feed.ask(.connection(request))
        }
        let chatOptions = ChatRun.Options(
            to: options.to, connect: options.connect.flatMap(Endpoint.init), context: options.context.map { Data($0.utf8) },
            policy: ConnectionPolicy(acceptsEveryone: options.yes, asksAlways: options.ask, canAsk: Terminal.stdinIsTTY && !options.json),
            acceptsEveryFile: options.yes, downloads: ChatRun.Options.downloads(options.downloads), waitForPeer: .seconds(options.timeout),
            verbose: options.network.verbose, echoes: interactive)
        do {
            run = try ChatRun(session: session, options: chatOptions, inputs: { feed.send($0) },
                              askToDial: { await feed.ask(.roomDial($0)) }, askAboutFile: { await feed.ask(.offer($0)) })
        } catch {
            view.error("history", error.description)
            return ExitStatus.failure
        }
        driver.pump(run.conversation.events()) { .conversation($0) }
        if let stop = show(run.resume()) { return stop }
        driver.pump(run.attachments.transfers.events()) { .transfer($0) }
        driver.pump(session.events(), untilClose: true) { .session($0) }
        driver.readInterrupts()
        if let stop = show(await run.start()) { return await finish(stop) }
        driver.readInput(interactive: interactive)
        if interactive { render() }

        let status = await driver.run { input in
            if let stop = handle(input) { return stop }
            if run.isDone { return .success }
            if interactive { render() }
            return nil
        }
        return await finish(status ?? .success)
    }

    /// One input of the driver's loop; returns the exit status when it ends the chat.
    private func handle(_ input: DriverInput<ChatRun.Input>) -> ExitCode? {
        switch input {
        case .event(let event):
            if event.isPumped { driver.backlog?.taken() }
            return show(run.handle(event))
        case .line(let line):
            return show(run.type(line))
        case .keys(let keys):
            for key in keys {
                if let stop = handle(key) { return stop }
            }
        case .endOfInput:
            return show(run.handle(.inputEnded))
        case .question(let asked):
            queue(asked)
        case .withdrawn(let token):
            withdraw(token)
        case .interrupt:
            return show(run.handle(.interrupted))
        }
        return nil
    }

    /// Renders what the chat reports and starts the timers it asks for; returns the exit status when it ended.
    func show(_ events: [ChatRun.Event]) -> ExitCode? {
        for event in events {
            switch event {
            case .startTimer(let timer, let delay): driver.timers.after(delay, .timer(timer))
            case .ended(let status): return ExitStatus.code(CommandExitCode(status))
            case .discoveryFailed(let error): DiscoveryNotice.show(error, json: options.json)
            case .lineReceived(_, _, let wantsAttention):
                view.show(event, of: run)
                if options.bell && !options.json && wantsAttention { Output.raw("\u{07}") }
            default: view.show(event, of: run)
            }
        }
        return nil
    }

    /// Leaves the chat: closes the session, shows what its streams still hold, then what it leaves behind.
    private func finish(_ status: ExitCode) async -> ExitCode {
        driver.leaveTerminal()
        questions.refuseAll()
        // What the session reported before this point is shown, but not the goodbyes of its own closing
        // (they would say that the peers left). Lines and images are shown up to the close: a line that
        // arrived (and was acknowledged, so its sender counts it delivered) is never left unshown.
        await driver.drain(closing: {
            await session.close()
            run.closed()
        }, leftover: { input in
            // Shown, but nothing more is done about it: the chat is over.
            if case .event(let event) = input { _ = show(run.leftover(event)) }
        })
        _ = show(run.leftBehind())
        return status
    }
}
