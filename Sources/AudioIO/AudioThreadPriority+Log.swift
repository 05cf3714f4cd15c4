import TalkLogging
import Threading

extension AudioThreadPriority {
    /// Logs how the audio thread `thread` (as the system lists it) came out of `raiseCallingThread()`: each outcome
    /// once at info (the first thread that meets it: realtime, through rtkit, or refused and why), later ones at debug.
    static func log(_ outcome: Outcome, thread: String, logger: Logger) {
        let level: Logger.Level = isFirstReport(of: outcome) ? .info : .debug
        switch outcome {
        case .realtime:
            logger.log(level: level, "Audio threads run \(outcome)", metadata: ["audio.thread": "\(thread)"])
        case .refused:
            logger.log(level: level, "Audio threads stay in the normal class: \(outcome)", metadata: ["audio.thread": "\(thread)"])
        }
    }
}
