import Foundation
import SessionBridge
import TalkService

/// `bench soak`: the real daemon (`run`) against a private sound server and the reference Gateway for minutes
/// or hours, a known utterance spoken into the virtual microphone every 20 s and a fault every 30 s in
/// rotation; counted from the Gateway's side (SoakTally), faults and their recoveries in SoakFault, the servers
/// it kills in SoakSoundServer and SoakGateway. The daemon's end ends the soak at once.
package struct SoakRun: Sendable {
    /// Seconds between utterances, and the first one's offset: 5 s past each 20 s, so a fault every 30 s never
    /// strikes within 5 s of one starting.
    static let utteranceEverySeconds = 20.0
    static let firstUtteranceSeconds = 5.0
    /// Nothing is said in the last seconds of the run: the last request has this long to arrive.
    static let settleSeconds = 12.0
    static let sampleEverySeconds = 10.0
    /// The utterance and the grammar that makes it the only sentence the recogniser can hear.
    package static let clip = "/usr/share/pocketsphinx/test/data/goforward.raw"
    static let words = "go forward ten meters"
    static let token = "bench-soak-token"

    var minutes: Double
    var faultEvery: Double
    var server: SoundServerKind
    var repository: String
    /// The run's private folder (the sound server's, the Gateway's state, the daemon's home); the caller's to remove.
    var root: String
    /// A test's knob (SoakCommandTests): the Gateway loses the first n requests' records, which must show as lost.
    var loseRequests: Int?
    /// A line for the user as the run goes (stderr).
    var progress: @Sendable (String) -> Void

    package init(
        minutes: Double, faultEvery: Double, server: SoundServerKind, repository: String, root: String, loseRequests: Int? = nil,
        progress: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        (self.minutes, self.faultEvery, self.server, self.repository, self.root) = (minutes, faultEvery, server, repository, root)
        self.loseRequests = loseRequests
        self.progress = progress
    }

    /// Starts the sound server, the Gateway and the daemon (each in `children` as it starts, so that a stop signal
    /// can stop them), soaks, stops them, and returns the figures. Throws when a part cannot start or the daemon
    /// never listens; a daemon that exits during the soak ends it and is in the figures (`daemonExitStatus`).
    package func run(children: SoakChildren) async throws -> SoakReport {
        guard FileManager.default.fileExists(atPath: Self.clip) else { throw BenchSoakError.noClip(Self.clip) }
        let sound = try SoakSoundServer(kind: server, folder: root + "/sound", repository: repository)
        let gateway = SoakGateway(repository: repository, stateDirectory: root + "/gateway", token: Self.token)
        children.sound = sound
        children.gateway = gateway
        try await sound.start()
        do {
            try await gateway.start()
            let report = try await soak(sound: sound, gateway: gateway, children: children)
            await gateway.stop()
            await sound.stop()
            return report
        } catch {
            await gateway.stop()
            await sound.stop()
            throw error
        }
    }

    private func soak(sound: SoakSoundServer, gateway: SoakGateway, children: SoakChildren) async throws -> SoakReport {
        gateway.control(#"{"cmd": "chat-script", "reply": "Okay.", "delayMs": 0}"#)
        // The grammar's words, never a relay's (the reference Gateway offers one): each utterance has one exact text.
        if let lose = loseRequests {
            gateway.control(#"{"cmd": "chat-ack", "mode": "forget", "count": \#(lose)}"#)
        }
        let grammar = root + "/soak.gram"
        try "#JSGF V1.0;\ngrammar soak;\npublic <utterance> = \(Self.words);\n".write(toFile: grammar, atomically: true, encoding: .utf8)
        let home = root + "/daemon"
        try FileManager.default.createDirectory(atPath: home + "/runtime", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let daemon = try await TalkChild(
            ["--gateway", gateway.url, "--token", Self.token, "--source", "vmic", "--sink", "speaker", "--grammar", grammar,
             "--stt", "local", "--json"],
            home: home, environment: ["PULSE_SERVER": sound.pulseServer, "XDG_RUNTIME_DIR": home + "/runtime"])
        children.daemon = daemon
        guard await daemon.waitFor(#""to":"listening""#, upTo: .seconds(90)) else {
            await daemon.stop()
            throw BenchSoakError.daemonNotListening(status: daemon.exitStatus, log: String(daemon.stderr.suffix(800)))
        }
        let connections: Int
        do { connections = try await Self.settledConnections(gateway, daemon: daemon) } catch {
            await daemon.stop()
            throw error
        }
        progress("the daemon listens and is connected; soaking for \(minutes) min, a fault every \(faultEvery) s")
        let started = ContinuousClock.now
        let rig = SoakRig(
            gateway: gateway, sound: sound, daemon: daemon, controlSocket: home + "/runtime/openclaw-talk/control.sock",
            connections: connections, started: started, soundDown: SoakFlag())
        let duration = minutes * 60
        let log = SoakLog()
        // The daemon's end ends the soak at once: speaking, faults and samples are cancelled (nothing after it
        // is the daemon's to answer for), and the run fails.
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { work in
                    work.addTask { await speak(rig: rig, duration: duration, log: log) }
                    work.addTask { await strike(rig: rig, duration: duration, log: log) }
                    work.addTask { await sample(rig: rig, duration: duration, log: log) }
                }
            }
            group.addTask { _ = await daemon.exited() }
            await group.next()
            group.cancelAll()
        }
        let exitedAt = daemon.isRunning ? nil : SoakRig.seconds(.now - started)
        // An utterance a fault delayed may have been said late: its request gets the same time as any other.
        if let last = await log.lastSpokenAt, daemon.isRunning {
            _ = await daemon.ends(within: rig.started + .milliseconds(Int((last + Self.settleSeconds) * 1000)) - .now)
        }
        gateway.collect()
        let exitStatus = daemon.exitStatus
        await daemon.stop()
        var report = await log.report(deliveries: gateway.deliveries, expected: Self.words)
        report.server = server.rawValue
        report.minutes = minutes
        report.faultEverySeconds = faultEvery
        report.daemonExited = exitStatus != nil
        report.daemonExitStatus = exitStatus
        report.daemonExitedAt = exitedAt ?? exitStatus.map { _ in SoakRig.seconds(.now - started) }
        if exitStatus != nil { report.daemonLog = String(daemon.stderr.suffix(2000)) }
        return report
    }

    /// The daemon's authenticated connections once they stop changing (node and operator come up one by one).
    static func settledConnections(_ gateway: SoakGateway, daemon: TalkChild) async throws -> Int {
        var last = -1
        for _ in 0..<120 {
            if let status = daemon.exitStatus {
                throw BenchSoakError.daemonNotListening(status: status, log: String(daemon.stderr.suffix(800)))
            }
            let count = gateway.authenticatedIds()?.count ?? 0
            if count > 0, count == last { return count }
            last = count
            try await Task.sleep(for: .seconds(1))
        }
        throw BenchSoakError.notConnected(seconds: 120)
    }

    private func speak(rig: SoakRig, duration: Double, log: SoakLog) async {
        var next = Self.firstUtteranceSeconds
        while next < duration - Self.settleSeconds, rig.daemon.isRunning, !Task.isCancelled {
            try? await Task.sleep(until: rig.started + .milliseconds(Int(next * 1000)), clock: .continuous)
            next += Self.utteranceEverySeconds
            // A user does not speak into an unplugged microphone: wait for it (bounded), or skip this one (it is
            // counted as not spoken, and its words must then not reach the Gateway as the one before's).
            for _ in 0..<300 where rig.soundDown.isSet { try? await Task.sleep(for: .milliseconds(50)) }
            guard !rig.soundDown.isSet else {
                await log.spoke(start: Date(), end: Date(), heard: false, at: SoakRig.seconds(.now - rig.started))
                continue
            }
            let start = Date()
            let played = await rig.sound.play(Self.clip)
            let end = Date()
            await log.spoke(start: start, end: end, heard: played, at: SoakRig.seconds(.now - rig.started))
        }
    }

    private func strike(rig: SoakRig, duration: Double, log: SoakLog) async {
        var index = 0
        while Double(index + 1) * faultEvery < duration - 5, rig.daemon.isRunning, !Task.isCancelled {
            try? await Task.sleep(until: rig.started + .milliseconds(Int(Double(index + 1) * faultEvery * 1000)), clock: .continuous)
            let fault = SoakFault.allCases[index % SoakFault.allCases.count]
            index += 1
            await log.add(await rig.strike(fault))
        }
        try? await Task.sleep(until: rig.started + .milliseconds(Int(duration * 1000)), clock: .continuous)
    }

    private func sample(rig: SoakRig, duration: Double, log: SoakLog) async {
        let pid = rig.daemon.pid
        var previous = (cpu: rig.daemon.cpuSeconds, at: ContinuousClock.now)
        var tick = 0
        while SoakRig.seconds(.now - rig.started) < duration, rig.daemon.isRunning, !Task.isCancelled {
            try? await Task.sleep(for: .seconds(2))
            rig.gateway.collect()
            tick += 1
            guard Double(tick * 2).truncatingRemainder(dividingBy: Self.sampleEverySeconds) == 0 else { continue }
            let now = (cpu: rig.daemon.cpuSeconds, at: ContinuousClock.now)
            let cpu = (now.cpu - previous.cpu) / max(0.001, SoakRig.seconds(now.at - previous.at)) * 100
            previous = now
            let (rss, fds) = (Self.residentMB(pid), Self.openFiles(pid))
            // A daemon that has just exited has no /proc to read: no sample (it read as 0 MB, 0 fds and
            // minus 1300 % CPU on the page).
            guard rig.daemon.isRunning, rss > 0 else { continue }
            await log.add(SoakResourceSample(t: SoakRig.seconds(now.at - rig.started), rssMB: rss, cpuPercent: cpu, fds: fds))
        }
    }

    static func residentMB(_ pid: pid_t) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kB = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
        return kB / 1024
    }

    static func openFiles(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }
}

/// Why `bench soak` failed once it had started its parts (a runtime error: exit 1, not a usage error).
package enum BenchSoakError: Error, Equatable, CustomStringConvertible {
    /// The utterance's recording (Debian package pocketsphinx-en-us's test data) is not there.
    case noClip(String)
    /// A part could not be started or worked on (the sound server, the Gateway, pactl), or the soak is stopping.
    case part(String)
    /// The daemon exited, or did not listen, before the soak began.
    case daemonNotListening(status: Int32?, log: String)
    /// The daemon did not connect to the reference Gateway within `seconds`.
    case notConnected(seconds: Int)
    /// The daemon exited during the soak, `atSeconds` into it.
    case daemonExited(status: Int32, atSeconds: Double?, log: String)

    package var description: String {
        switch self {
        case .noClip(let path):
            "bench soak speaks \(path) (Debian package pocketsphinx-en-us's test data): not found"
        case .part(let message):
            "bench soak: \(message)"
        case .daemonNotListening(let status?, let log):
            "bench soak: the daemon exited (status \(status)) before the soak began; its last output: \(log)"
        case .daemonNotListening(nil, let log):
            "bench soak: the daemon did not start listening within 90 s; its last output: \(log)"
        case .notConnected(let seconds):
            "bench soak: the daemon did not connect to the reference Gateway within \(seconds) s"
        case .daemonExited(let status, let at, let log):
            "bench soak: the daemon exited (status \(status))"
                + (at.map { String(format: " %.1f s into the soak", $0) } ?? "")
                + "; the soak stopped there. Its last output: \(log.suffix(800))"
        }
    }
}
