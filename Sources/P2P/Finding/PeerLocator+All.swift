extension PeerLocator {
    /// Stops waiting for more peers once none has appeared for this long after the first.
    public static let quietAfterFirst: Duration = .milliseconds(1500)

    /// What ``findAll(events:)`` waits on.
    private enum AllStep: Sendable {
        case event(SessionEvent)
        case quiet(generation: Int)
        case deadline
    }

    /// Every peer of the session that shows up, each connected (`p2p send --all`). Waits for the first
    /// until the timeout, then for others until the browse has been quiet for ``quietAfterFirst``; a peer
    /// that cannot be reached is reported (``Progress/unreachable(_:)``) and left out. Throws when
    /// nobody showed up, or nobody could be reached (the last failure). `events` as for ``find(events:)``.
    public func findAll(events given: AsyncStream<SessionEvent>? = nil) async throws(PeerFindError) -> [PeerInfo] {
        let events = given ?? session.events()
        do {
            try await session.setAvailable(true)
        } catch {
            throw .noDiscovery(error)
        }
        progress(.waiting(for: nil))
        let (steps, stepper, feeders) = feed(events, replayingAvailable: given == nil, as: AllStep.event, deadline: .deadline)
        var quietTimer: Task<Void, Never>?
        defer { feeders.forEach { $0.cancel() }; quietTimer?.cancel() }
        var found: [PeerInfo] = []
        collecting: for await step in steps {
            switch step {
            case .deadline:
                if found.isEmpty { break collecting }
            case .quiet(let generation):
                if generation == found.count { break collecting }
            case .event(let event):
                guard case .peerChanged(let peer, .available, _) = event, !found.contains(where: { $0.id == peer.id }) else { continue }
                found.append(peer)
                let generation = found.count
                quietTimer?.cancel()
                quietTimer = Task {
                    guard (try? await Task.sleep(for: Self.quietAfterFirst)) != nil else { return }
                    stepper.yield(.quiet(generation: generation))
                }
            }
        }
        guard !found.isEmpty else {
            throw .notFound(PeerNotFound(query: nil, seen: [], waited: timeout, seesItself: session.discoverySeesItself))
        }
        var reached: [PeerInfo] = []
        var lastFailure: PeerFindError?
        await withTaskGroup(of: Result<PeerInfo, PeerFindError>.self) { group in
            for peer in found {
                group.addTask {
                    do throws(SessionError) {
                        return .success(try await connectShowingProgress(to: peer.displayName.description, expecting: peer.id) { (session) async throws(SessionError) -> PeerInfo in
                            try await session.connect(to: peer.id)
                        })
                    } catch {
                        return .failure(.connectFailed(target: peer.displayName.description, address: PeerLocator.addresses(of: peer), error))
                    }
                }
            }
            for await result in group {
                switch result {
                case .success(let peer): reached.append(peer)
                case .failure(let failure):
                    progress(.unreachable(failure))
                    lastFailure = failure
                }
            }
        }
        if reached.isEmpty, let lastFailure { throw lastFailure }
        return reached
    }
}
