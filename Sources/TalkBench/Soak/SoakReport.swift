import Foundation
import SessionBridge

/// What the soak's loops record as they go (one actor: the speaker, the faults and the sampler write to it).
actor SoakLog {
    private var utterances: [(SoakTally.Utterance, at: Double)] = []
    private var unheard: [Double] = []
    private var faults: [SoakFaultRecord] = []
    private var samples: [SoakResourceSample] = []

    /// An utterance played while the microphone could hear it (`heard`), or one it could not (not counted as spoken).
    func spoke(start: Date, end: Date, heard: Bool, at: Double) {
        guard heard else { return unheard.append(at) }
        utterances.append((SoakTally.Utterance(startedAtMs: Int64(start.timeIntervalSince1970 * 1000),
                                               endedAtMs: Int64(end.timeIntervalSince1970 * 1000)), at))
    }

    /// Seconds since the start at which the last counted utterance ended.
    var lastSpokenAt: Double? { utterances.last?.at }

    func add(_ fault: SoakFaultRecord) { faults.append(fault) }
    func add(_ sample: SoakResourceSample) { samples.append(sample) }

    func report(deliveries: [SoakTally.Delivery], expected: String) -> SoakReport {
        let tally = SoakTally.count(utterances: utterances.map(\.0), deliveries: deliveries, expected: expected)
        return SoakReport(tally: tally, utteranceTimes: utterances.map(\.at), unheard: unheard, faults: faults, samples: samples)
    }
}

/// `bench soak`'s figures: the Gateway's count, each fault's recovery, the daemon's resources over time.
package struct SoakReport {
    var tally: SoakTally
    /// Seconds since the start at which each counted utterance ended (the deliveries plot's x axis).
    var utteranceTimes: [Double]
    /// Utterances not spoken: the sound server was still down when their time came.
    var unheard: [Double]
    var faults: [SoakFaultRecord]
    var samples: [SoakResourceSample]
    var server = ""
    var minutes = 0.0
    var faultEverySeconds = 0.0
    var daemonExited = false
    package var daemonExitStatus: Int32?
    /// Seconds into the soak when the daemon exited.
    package var daemonExitedAt: Double?
    package var daemonLog: String?

    static let recoveryTargetMs = 2000.0
    static let growthTargetPercent = 5.0

    /// Per fault kind: the recovery times that count against the 2 s target.
    var recoveries: [(SoakFault, [Double], notRecovered: Int)] {
        SoakFault.allCases.map { kind in
            let mine = faults.filter { $0.kind == kind }
            let times = mine.compactMap { $0.gatewayBackMs ?? $0.captureBackMs ?? $0.controlBackMs }
            return (kind, times, mine.count - times.count)
        }
    }

    package var json: JSONValue {
        func rounded(_ v: Double?) -> JSONValue { v.map { .double(($0 * 10).rounded() / 10) } ?? .null }
        var recovery: [String: JSONValue] = [:]
        for (kind, times, missed) in recoveries {
            recovery[kind.rawValue] = [
                "count": .int(Int64(times.count + missed)), "notRecovered": .int(Int64(missed)),
                "ms": TalkBenchReport.summary(times), "maxMs": rounded(times.max()),
            ]
        }
        var object: [String: JSONValue] = [
            "server": .string(server), "minutes": .double(minutes), "faultEverySeconds": .double(faultEverySeconds),
            "utterance": .string(SoakRun.words),
            "requests": tally.json, "notSpoken": .int(Int64(unheard.count)),
            "utterances": .array(zip(utteranceTimes, zip(tally.keysPerUtterance, tally.delayPerUtterance)).map { t, answer in
                ["atSeconds": rounded(t), "keys": .int(Int64(answer.0)), "deliveryMs": rounded(answer.1)]
            }),
            "faults": .array(faults.map(\.json)), "recovery": .object(recovery),
            "resources": [
                "samples": .array(samples.map(\.json)),
                "rssGrowthPercent": rounded(SoakResourceSample.growthPercent(samples, \.rssMB)),
                "fdGrowthPercent": rounded(SoakResourceSample.growthPercent(samples) { Double($0.fds) }),
            ],
            "daemonExited": .bool(daemonExited),
            "targets": ["recoveryMs": .double(Self.recoveryTargetMs), "growthPercent": .double(Self.growthTargetPercent)],
        ]
        if let daemonExitStatus { object["daemonExitStatus"] = .int(Int64(daemonExitStatus)) }
        if let daemonExitedAt { object["daemonExitedAtSeconds"] = .double((daemonExitedAt * 10).rounded() / 10) }
        if let daemonLog { object["daemonLog"] = .string(daemonLog) }
        return .object(object)
    }

    package var text: [String] {
        let t = tally
        var lines = [
            String(format: "bench soak: %.1f min on %@, a fault every %.0f s (%d faults), \"%@\" every %.0f s",
                   minutes, server, faultEverySeconds, faults.count, SoakRun.words,
                   SoakRun.utteranceEverySeconds),
            "  requests (the Gateway's count): \(t.spoken) spoken, \(t.delivered) delivered, \(t.lost) lost, "
                + "\(t.duplicated) duplicated, \(t.wrongText) wrong text"
                + (t.unprompted > 0 ? ", \(t.unprompted) unprompted" : "") + (unheard.isEmpty ? "" : "; \(unheard.count) not spoken (microphone away)"),
        ]
        if let p50 = BenchStatistics.percentile(t.deliveryMs, 0.5), let max = t.deliveryMs.max() {
            lines.append(String(format: "  end of utterance to request at the Gateway: p50 %.0f ms, max %.0f ms", p50, max))
        }
        for (kind, times, missed) in recoveries where !times.isEmpty || missed > 0 {
            let what: String = switch kind {
            case .gatewayDrop: "connected again after a drop"
            case .gatewayRestart: "connected again after the Gateway listens"
            case .soundServerRestart: "capturing again after the sound server answers"
            case .captureDeviceLoss: "capturing again after the microphone returns"
            case .sighup: "status answered after SIGHUP"
            case .controlFlood: "status answered after the flood"
            }
            let figures = times.isEmpty ? "" : String(format: "p50 %.0f ms, max %.0f ms", BenchStatistics.percentile(times, 0.5) ?? 0, times.max() ?? 0)
            lines.append("  \(what): \(figures)" + (missed > 0 ? " (\(missed) of \(times.count + missed) never)" : ""))
        }
        if let first = samples.first, let last = samples.last {
            let rss = SoakResourceSample.growthPercent(samples, \.rssMB).map { String(format: "%+.1f %%", $0) } ?? "n/a"
            let fds = SoakResourceSample.growthPercent(samples) { Double($0.fds) }.map { String(format: "%+.1f %%", $0) } ?? "n/a"
            let cpu = BenchStatistics.percentile(samples.map(\.cpuPercent), 0.5) ?? 0
            lines.append(String(format: "  daemon: RSS %.1f -> %.1f MB (growth %@), open files %d -> %d (growth %@), CPU median %.1f %% of a core",
                                first.rssMB, last.rssMB, rss, first.fds, last.fds, fds, cpu))
        }
        lines.append(daemonExited ? "  the daemon EXITED (status \(daemonExitStatus.map(String.init) ?? "?"))" : "  the daemon never exited")
        for fault in faults where fault.note != nil { lines.append("  \(fault.kind.rawValue) at \(Int(fault.at)) s: \(fault.note ?? "")") }
        return lines
    }
}
