import Logging

/// Passes log records on with every control character made harmless (``PeerText/sanitized(_:)``): the
/// library's messages embed peer names and reasons, and an app's log often goes to the same terminal as
/// everything else. Wrap the handler of ``SessionConfiguration/logger`` in it when the log reaches a screen.
public struct SanitizingLogHandler: LogHandler {
    public var wrapped: any LogHandler

    public init(wrapped: any LogHandler) {
        self.wrapped = wrapped
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    /// Set values are sanitized too: the wrapped handler prints its own metadata with every record.
    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue.mapValues(Self.sanitized) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue.map(Self.sanitized) }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = "\(PeerText.sanitized(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.sanitized)
        wrapped.log(event: event)
    }

    private static func sanitized(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        .string(PeerText.sanitized(value.description))
    }
}
