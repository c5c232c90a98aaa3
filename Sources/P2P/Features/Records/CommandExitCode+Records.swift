extension CommandExitCode {
    /// The exit code for a snapshot's RESULT status, on either side: a snapshot that *failed* (its bytes
    /// did not arrive whole, or the receiver's store could not take it) is a failed transfer (8), not a
    /// rejection (9), which means the sender has something to fix.
    public static func records(_ status: RecordTransferResult.Status) -> CommandExitCode {
        switch status {
        case .merged: .success
        case .rejected: .recordsRejected
        case .failed: .transferFailed
        }
    }
}
