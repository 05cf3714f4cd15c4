import Foundation
import SessionBridge

extension TalkChild {
    /// The child's resident memory in MB (VmRSS of /proc/PID/status), 0 once it has ended.
    package var residentMegabytes: Double {
        guard let data = FileHandle(forReadingAtPath: "/proc/\(pid)/status")?.readDataToEndOfFile(),
              let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kib / 1024
    }
}

/// CPU and memory of a `run` child over time, sampled every `interval` from /proc while it runs, with marks for
/// what the session was doing (the report's "CPU and memory over time" plot).
package actor ResourceTimeline {
    struct Sample { var seconds: Double, cpuPercent: Double, residentMegabytes: Double }

    static let interval = Duration.milliseconds(250)
    private let child: TalkChild
    private let start = ContinuousClock.now
    private var samples: [Sample] = []
    private var marks: [(seconds: Double, label: String)] = []
    private var sampler: Task<Void, Never>?

    package init(child: TalkChild) { self.child = child }

    package func begin() {
        sampler = Task { [child] in
            var lastCPU = child.cpuSeconds
            var last = ContinuousClock.now
            while !Task.isCancelled, child.isRunning {
                try? await Task.sleep(for: Self.interval)
                let now = ContinuousClock.now
                let cpu = child.cpuSeconds
                let elapsed = Self.seconds(now - last)
                self.add(Sample(seconds: Self.seconds(now - self.start), cpuPercent: elapsed > 0 ? (cpu - lastCPU) / elapsed * 100 : 0,
                                residentMegabytes: child.residentMegabytes))
                (lastCPU, last) = (cpu, now)
            }
        }
    }

    private func add(_ sample: Sample) { samples.append(sample) }

    package func mark(_ label: String) { marks.append((Self.seconds(ContinuousClock.now - start), label)) }

    /// Stops sampling; the timeline as JSON: `{intervalMs, samples: [{t, cpuPercent, rssMB}], marks: [{t, label}]}`.
    package func finish() async -> JSONValue {
        sampler?.cancel()
        await sampler?.value
        func rounded(_ v: Double, _ places: Double = 10) -> JSONValue { .double((v * places).rounded() / places) }
        return [
            "intervalMs": .int(250),
            "samples": .array(samples.map { ["t": rounded($0.seconds, 100), "cpuPercent": rounded($0.cpuPercent), "rssMB": rounded($0.residentMegabytes)] }),
            "marks": .array(marks.map { ["t": rounded($0.seconds, 100), "label": .string($0.label)] }),
        ]
    }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
