import Dispatch

extension DispatchTimeInterval {
    /// `duration` to the nanosecond; one too long to count in nanoseconds (about 292 years) is `.never`.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let whole = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = whole.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        self = whole.overflow || total.overflow ? .never : .nanoseconds(Int(total.partialValue))
    }
}
