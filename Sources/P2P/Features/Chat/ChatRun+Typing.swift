import Foundation

/// What the person types into a chat: lines for everyone, `/msg`, `/me`, `/image`, `/file` and the
/// commands that only show something (`/help`, `/peers`, `/who`), parsed by ``ChatInput``.
extension ChatRun {
    /// One line the person typed (or piped); returns what to render, ``Event/ended(_:)`` for `/quit`.
    public func type(_ line: String) -> [Event] {
        switch ChatInput.parse(line) {
        case .quit:
            return [.ended(.success)]
        case .help:
            return ChatInput.commands.map { .notice(.note($0)) }
        case .image(let path):
            return offer(path, asImage: true)
        case .file(let path):
            return offer(path, asImage: false)
        case .peers:
            return runner.roster().map { .notice(.note($0)) }
        case .names:
            return [.notice(.note(ChatRoom.names(own: session.displayName, connected: room.connected.values.map(\.displayName.raw))))]
        case .nothing:
            return []
        case .mistake(let message):
            return [.notice(ChatNotice(.error, code: "command", message))]
        case .privateMessage(let name, let text):
            return say(text, privatelyTo: name)
        case .action(let text):
            return say("/me " + text)
        case .text(let text):
            return say(text)
        }
    }

    /// A line for every member: echoed, then sent (or held until someone is here).
    public func say(_ text: String) -> [Event] {
        let echo: [Event] = options.echoes ? [.ownLine(text, to: nil, held: room.members.isEmpty)] : []
        runner.say(text)
        return echo
    }

    /// `/msg NAME text`: a line for the one member called `name`, marked private on both screens.
    public func say(_ text: String, privatelyTo name: String) -> [Event] {
        let room = self.room
        switch room.privateTarget(name) {
        case .one(let peer):
            let line = ChatLine(kind: .privateLine, body: text).text
            let echo: [Event] = options.echoes ? [.ownLine(line, to: peer, held: room.connected[peer.id] == nil)] : []
            runner.say(line, to: peer)
            return echo
        case .nobody(let connected, let away):
            return [.notice(ChatNotice(.error, code: "command", PrivateLineTarget.nobodyCalled(name, connected: connected, away: away)))]
        case .ambiguous(let candidates):
            return [.notice(ChatNotice(.error, code: "command", PrivateLineTarget.ambiguous(name, candidates: candidates)))]
        }
    }

    /// Tab at `cursor` in `text`: a member's name (after `/msg`, after `@`, at the start of a word) or a
    /// path (after `/image` or `/file`) completed, or what fits listed. Only names that print as they are
    /// can be typed back, so a hostile name never reaches the input line.
    public func complete(_ text: [Character], cursor: Int) -> ChatCompletion {
        let names = Set(room.members.values.map(\.displayName.raw)).filter { PeerText.sanitized($0) == $0 }
        return ChatCompletion.complete(text, cursor: cursor, names: names.sorted(), list: ChatCompletion.listDirectory)
    }
}
