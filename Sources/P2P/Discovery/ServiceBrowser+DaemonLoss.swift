import Foundation

// The daemon going away: browsing is dropped, retried with back-off, and instances not seen again within
// the stale grace are reported lost. Apart from the browse's main flow because it is its own concern.
extension ServiceBrowser {
    /// Browsing is dead. Drop every request and try again later; reported once per outage.
    func daemonLost(_ state: inout State) {
        guard !state.stopped else { return }
        state.browse?.cancel()
        state.browse = nil
        dropAllLookups(&state)
        state.lookupFailures = [:]
        if state.recovery.daemonLost() { state.outbox.append(.daemonLost) }
        guard let delay = state.recovery.nextRetry() else { return }
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.update { state in
                state.recovery.retrying()
                self?.retryBrowse(&state)
            }
        }
    }

    private func retryBrowse(_ state: inout State) {
        guard !state.stopped, state.recovery.isRecovering else { return }
        do throws(DiscoveryError) {
            try startBrowse(&state)
        } catch let error where error.meansDaemonUnreachable {
            return daemonLost(&state)
        } catch {
            state.recovery.gaveUp()
            return state.outbox.append(.failed(error))
        }
        state.recovery.recovered()
        state.outbox.append(.restored)
        // Start over: instances still there are added (and resolved) again by the new browse.
        let before = Set(state.interfacesByName.keys)
        state.interfacesByName = [:]
        state.instanceTypes = [:]
        state.lookupFailures = [:]
        state.awaitingDial = [:]
        state.graceEnded = []
        queue.asyncAfter(deadline: .now() + staleGrace) { [weak self] in
            self?.update { state in
                guard !state.stopped else { return }
                for name in before where state.interfacesByName[name] == nil { state.outbox.append(.lost(name: name)) }
            }
        }
    }
}
