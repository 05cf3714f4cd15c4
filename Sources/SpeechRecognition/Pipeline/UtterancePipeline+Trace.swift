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

    /// At debug level: what a decoder call cost (`speech.wall_ms` on the clock, `speech.cpu_ms` the decoder's own CPU),
    /// and where the stream was (`speech.head_ms`): where the pipeline falls behind the microphone, call by call.
    /// Single-frame feeds and partials are traced only when they take 5 ms or more.
    func traced<T>(_ what: String, frames: Int = 0, _ body: () async throws -> T) async rethrows -> T {
        guard logger.logLevel <= .debug else { return try await body() }
        let cpu0 = await recognizer.decodeCPUSeconds()
        let start = monotonicNanoseconds()
        let result = try await body()
        let wallNs = monotonicNanoseconds() &- start
        let cpu = await recognizer.decodeCPUSeconds() - cpu0
        guard frames > 1 || wallNs >= 5_000_000 || !(what == "feed" || what == "partial") else { return result }
        logger.debug("pipeline call: \(what)", metadata: [
            "speech.frames": "\(frames)", "speech.head_ms": "\(streamEndMs)",
            "speech.wall_ms": "\(String(format: "%.1f", Double(wallNs) / 1e6))", "speech.cpu_ms": "\(String(format: "%.1f", cpu * 1000))",
            "speech.capture_lag_ms": "\(String(format: "%.1f", Double(monotonicNanoseconds() &- min(monotonicNanoseconds(), headCaptureNs)) / 1e6))",
        ])
        return result
    }
}
