extension CommandExitCode {
    /// The exit code of a send's verdict, to one receiver or the worst of several (0, 6 denied,
    /// 7 cancelled, 8 failed).
    public static func send(_ verdict: SendRun.Verdict) -> CommandExitCode {
        switch verdict {
        case .delivered: .success
        case .denied: .denied
        case .cancelled: .cancelled
        case .failed: .transferFailed
        }
    }

    /// The exit code of how a receive of files came out (0, 6 nothing accepted, 7 cancelled, 8 failed).
    public static func receive(_ outcome: ReceiveLedger.Outcome) -> CommandExitCode {
        switch outcome {
        case .received: .success
        case .denied: .denied
        case .cancelled: .cancelled
        case .failed: .transferFailed
        }
    }

    /// The exit code of a receive of one byte stream that did not end whole (130 nothing received,
    /// 7 cancelled, 8 broken or mismatched).
    public static func stream(_ failure: StreamReceiveFailure.Kind) -> CommandExitCode {
        switch failure {
        case .interrupted: .interrupted
        case .cancelled: .cancelled
        case .failed: .transferFailed
        }
    }

    /// The exit code of an upload to a LocalSend device that failed: 6 declined or a PIN refused,
    /// 4 busy or not the announced certificate, 7 cancelled, 8 failed.
    public static func localSend(_ failure: LocalSendSender.Failure) -> CommandExitCode {
        switch failure {
        case .declined, .pinRequired, .tooManyTries: .denied
        case .busy, .fingerprintMismatch: .connectionFailed
        case .cancelled: .cancelled
        case .failed: .transferFailed
        }
    }
}
