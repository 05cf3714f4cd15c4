import Foundation
import Synchronization
import SessionBridge
import TalkService

/// The faults `bench soak` strikes in rotation, and how each is judged recovered.
enum SoakFault: String, CaseIterable {
    /// The Gateway drops every connection abruptly (a Wi-Fi drop): connected again, counted from the drop.
    case gatewayDrop
    /// The Gateway is killed and started again at the same address (an upgrade, a crash): connected again,
    /// counted from the moment the new Gateway listens.
    case gatewayRestart
    /// The sound server is killed and started again: capture on the microphone again, counted from the moment
    /// the new server answers.
    case soundServerRestart
    /// The capture device disappears and returns (a headset unplugged): capture on it again, counted from its return.
    case captureDeviceLoss
    /// SIGHUP: the daemon reloads its configuration and goes on.
    case sighup
    /// The control socket flooded with requests: the daemon answers a status request afterwards.
    case controlFlood

    /// How long the Gateway stays down: the 2.5 s outage after which the backoff used to miss its return by 3.5 s.
    static let gatewayDownSeconds = 2.5
    /// How long the sound server stays down and the device stays away.
    static let soundDownSeconds = 1.0
    static let deviceAwaySeconds = 2.0
    /// The flood: this many connections, each sending requests as fast as it is answered for this long.
    static let floodConnections = 32
    static let floodSeconds = 3.0
    /// A recovery not seen within this long is recorded as not recovered (a hang bound, far over the 2 s target).
    static let recoveryBound: Duration = .seconds(30)
}

/// One fault as it struck: when, how long until what it broke was back, and whether it came back at all.
struct SoakFaultRecord {
    var kind: SoakFault
    /// Seconds since the soak started.
    var at: Double
    /// From the fault to the Gateway or sound server or device being back (0 for a drop, a signal, a flood).
    var restoredAfterMs: Double = 0
    /// From that return to the daemon connected to the Gateway again (its node and operator sockets).
    var gatewayBackMs: Double?
    /// From that return to the daemon capturing on the microphone again.
    var captureBackMs: Double?
    /// SIGHUP and the flood: from their end to the daemon answering `status`.
    var controlBackMs: Double?
    /// Control requests answered during the flood, and refused or failed.
    var floodAnswered: Int?
    var floodFailed: Int?
    var note: String?

    var recovered: Bool {
        switch kind {
        case .gatewayDrop, .gatewayRestart: gatewayBackMs != nil
        case .soundServerRestart, .captureDeviceLoss: captureBackMs != nil
        case .sighup, .controlFlood: controlBackMs != nil
        }
    }

    var json: JSONValue {
        func ms(_ v: Double?) -> JSONValue { v.map { .double(($0 * 10).rounded() / 10) } ?? .null }
        var object: [String: JSONValue] = [
            "kind": .string(kind.rawValue), "atSeconds": .double((at * 10).rounded() / 10), "restoredAfterMs": ms(restoredAfterMs),
            "gatewayBackMs": ms(gatewayBackMs), "captureBackMs": ms(captureBackMs), "controlBackMs": ms(controlBackMs),
            "recovered": .bool(recovered),
        ]
        if let floodAnswered { object["floodAnswered"] = .int(Int64(floodAnswered)) }
        if let floodFailed { object["floodFailed"] = .int(Int64(floodFailed)) }
        if let note { object["note"] = .string(note) }
        return .object(object)
    }
}

/// What a fault acts on.
struct SoakRig {
    var gateway: SoakGateway
    var sound: SoakSoundServer
    var daemon: TalkChild
    var controlSocket: String
    /// The daemon's authenticated Gateway connections when all was well.
    var connections: Int
    var started: ContinuousClock.Instant
    /// Set while the microphone cannot hear (server down, device away): the speaker waits for it.
    var soundDown: SoakFlag

    /// The daemon's "listening again on vmic" lines so far: one more means capture is back on the microphone.
    func captureReturns() -> Int { daemon.stdout.components(separatedBy: "listening again on vmic").count - 1 }

    /// Takes something away, keeps it away for `seconds` (the fault's length), brings it back; returns when it was
    /// back, the instant its recovery is timed from.
    private func outage(
        _ seconds: Double, away: () async throws -> Void, back: () async throws -> Void
    ) async throws -> ContinuousClock.Instant {
        try await away()
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        try await back()
        return ContinuousClock.now
    }

    func strike(_ fault: SoakFault) async -> SoakFaultRecord {
        let t0 = ContinuousClock.now
        var record = SoakFaultRecord(kind: fault, at: Self.seconds(t0 - started))
        do {
            switch fault {
            case .gatewayDrop:
                let old = gateway.authenticatedIds() ?? []
                gateway.control("drop")
                record.gatewayBackMs = await connectedAgain(since: t0, old: old)
            case .gatewayRestart:
                let old = gateway.authenticatedIds() ?? []
                let back = try await outage(SoakFault.gatewayDownSeconds, away: { await gateway.kill() },
                                            back: { try await gateway.start() })
                record.restoredAfterMs = Self.ms(back - t0)
                record.gatewayBackMs = await connectedAgain(since: back, old: old)
            case .soundServerRestart:
                soundDown.set(true)
                defer { soundDown.set(false) }
                let before = captureReturns()
                let back = try await outage(SoakFault.soundDownSeconds, away: { await sound.kill() },
                                            back: { try await sound.start() })
                record.restoredAfterMs = Self.ms(back - t0)
                record.captureBackMs = await captureAgain(after: before, since: back)
            case .captureDeviceLoss:
                soundDown.set(true)
                defer { soundDown.set(false) }
                let before = captureReturns()
                let back = try await outage(SoakFault.deviceAwaySeconds, away: { try await sound.removeMicrophone() },
                                            back: { try await sound.returnMicrophone() })
                record.restoredAfterMs = Self.ms(back - t0)
                // Away, capture fell back to another source ("listening again on speaker.monitor"); back, it returns.
                record.captureBackMs = await captureAgain(after: before, since: back)
            case .sighup:
                daemon.signal(SIGHUP)
                record.controlBackMs = await statusAnswered(since: ContinuousClock.now)
            case .controlFlood:
                let (answered, failed) = await flood()
                record.floodAnswered = answered
                record.floodFailed = failed
                record.controlBackMs = await statusAnswered(since: ContinuousClock.now)
            }
        } catch {
            record.note = "the fault could not be carried out: \(error)"
        }
        if let status = daemon.exitStatus { record.note = "the daemon exited (status \(status))" }
        return record
    }

    /// Connected again: as many authenticated connections as before the fault, none of them one it had.
    private func connectedAgain(since: ContinuousClock.Instant, old: Set<String>) async -> Double? {
        let deadline = since + SoakFault.recoveryBound
        while ContinuousClock.now < deadline, daemon.isRunning {
            if let now = gateway.authenticatedIds(), now.count >= connections, now.isDisjoint(with: old) {
                return Self.ms(ContinuousClock.now - since)
            }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return nil
    }

    private func captureAgain(after before: Int, since: ContinuousClock.Instant) async -> Double? {
        let deadline = since + SoakFault.recoveryBound
        while ContinuousClock.now < deadline, daemon.isRunning {
            if captureReturns() > before { return Self.ms(ContinuousClock.now - since) }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return nil
    }

    private func statusAnswered(since: ContinuousClock.Instant) async -> Double? {
        let path = controlSocket
        let deadline = since + SoakFault.recoveryBound
        while ContinuousClock.now < deadline, daemon.isRunning {
            let ok = await soakThread { () -> Bool in
                guard let client = try? ControlClient(path: path, timeout: .seconds(5)) else { return false }
                if case .success? = try? client.call("status").outcome { return true }
                return false
            }
            if ok { return Self.ms(ContinuousClock.now - since) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// `floodConnections` clients sending `status` as fast as they are answered for `floodSeconds`.
    private func flood() async -> (answered: Int, failed: Int) {
        let path = controlSocket
        let results = await withTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<SoakFault.floodConnections {
                group.addTask {
                    await soakThread { () -> (Int, Int) in
                        let end = ContinuousClock.now + .milliseconds(Int(SoakFault.floodSeconds * 1000))
                        var (answered, failed) = (0, 0)
                        var client = try? ControlClient(path: path, timeout: .seconds(5))
                        while ContinuousClock.now < end {
                            guard let c = client else {
                                failed += 1
                                usleep(10_000)
                                client = try? ControlClient(path: path, timeout: .seconds(5))
                                continue
                            }
                            if case .success? = try? c.call("status").outcome { answered += 1 } else {
                                failed += 1
                                client = nil
                            }
                        }
                        return (answered, failed)
                    }
                }
            }
            var total = (0, 0)
            for await (a, f) in group { total = (total.0 + a, total.1 + f) }
            return total
        }
        return results
    }

    static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
    static func ms(_ d: Duration) -> Double { seconds(d) * 1000 }
}

/// A flag shared between the fault loop and the speaker.
final class SoakFlag: Sendable {
    private let value = Mutex(false)
    func set(_ on: Bool) { value.withLock { $0 = on } }
    var isSet: Bool { value.withLock { $0 } }
}
