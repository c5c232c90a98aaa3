import Logging
import P2P

/// Passes log records on with every control character made harmless: library messages embed peer
/// names and reasons, and the log goes to the same terminal as everything else.
struct SanitizingLogHandler: LogHandler {
    var wrapped: any LogHandler

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(PeerText.sanitized(event.message.description))"
        event.metadata = event.metadata?.mapValues { .string(PeerText.sanitized($0.description)) }
        wrapped.log(event: event)
    }
}
