import AudioIO
import Foundation
import TalkLogging

extension UtterancePipeline {
    /// At debug level: how far behind the microphone an event comes. `capture_lag_ms`: from the newest frame's capture
    /// to now; `taken_lag_ms`: from its capture to when the pipeline took it up (the queue before the pipeline);
    /// `search_ms`: the partial's search.
    func traceLag(_ what: String, positionMs: Int, searchNs: UInt64? = nil, text: String = "") {
        guard logger.logLevel <= .debug else { return }
        let now = monotonicNanoseconds()
        func ms(_ ns: UInt64) -> String { String(format: "%.1f", Double(ns) / 1e6) }
        var metadata: Logger.Metadata = [
            "speech.position_ms": "\(positionMs)", "speech.head_ms": "\(streamEndMs)",
            "speech.capture_lag_ms": "\(ms(now &- min(now, headCaptureNs)))", "speech.taken_lag_ms": "\(ms(headTakenNs &- min(headTakenNs, headCaptureNs)))",
            "speech.now_ns": "\(now)",
        ]
        if let searchNs { metadata["speech.search_ms"] = "\(ms(now &- searchNs))" }
        if !text.isEmpty { metadata["speech.text"] = "\(text.suffix(60))" }
        logger.debug("pipeline lag: \(what)", metadata: metadata)
    }
}
