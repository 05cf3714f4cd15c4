import AudioIO
import Foundation
import SessionBridge
import TalkLogging

/// The Gateway's transcription relay as the loop's `TranscriptSource` (`--stt gateway|auto`): local
/// PocketSphinx still endpoints; each utterance's audio, from its pre-roll, is streamed to the relay as it is
/// spoken, encoded as the session's contract asks, and goes on after the local endpoint (what the microphone
/// hears next, the silence a provider's endpointing waits for: about 800 ms received) until the relay's final
/// arrives or `finalWait` ends; at the local final the relay's final is used if it comes within `finalWait` of
/// the local endpoint, else the local words. One relay session serves every utterance
/// while it lives (`TalkRelayClient` recreates it after a reconnect or an expiry) and is closed at the end.
///
/// An utterance that opened over the reply (`utteranceStarted(held: true)`) may be the reply's echo: its frames stay
/// in the ring and nothing is sent until the loop releases it (`utteranceReleased`) from the user's onset, less a
/// margin, its onset from the linear stage (`HeldUtteranceRelease`); dropped before that, none of it has left the machine.
package actor RelayTranscription: TranscriptSource {
    package struct Settings: Sendable {
        /// How long after the local endpoint the relay's final may take (`--relay-wait-ms`).
        package var finalWait: Duration = .milliseconds(1_500)
        /// Audio before the first voiced frame that goes with the utterance (the endpointer's pre-roll).
        package var preRollMs = 400
        /// Where a released held utterance starts and which of its frames send the linear stage's output.
        package var release = HeldUtteranceRelease.Settings()
        /// `auto` checks `talk.catalog` before each new relay session; `gateway` goes straight to it.
        package var checkCatalog = true
        package var engineName = "gateway-relay"
        package var localEngineName = "pocketsphinx"
        package init() {}
    }

    /// The utterance being streamed: its relay turns and their finals.
    struct Utterance {
        /// `held`: opened over the reply, nothing sent until released (its frames wait in the ring).
        enum Uplink { case held, connecting, live, ended }
        var index: Int
        /// The first position it may send: its pre-roll, and not what the utterance before it already sent.
        var startMs: Int
        var uplink = Uplink.connecting
        var backlog: [AudioFrame] = []
        var nextPositionMs: Int
        /// Released from the user's onset: which audio goes out (nil: every frame's `samples`).
        var release: HeldUtteranceRelease?
        var turnIds: [String] = []
        /// Turns with partials: speech the relay heard, whose final the words wait for. A turn without any
        /// (the silence after the relay's own endpoint) has nothing to wait for.
        var spokenTurns: Set<String> = []
        /// Turns the relay closed (`turn.ended`): a spoken turn ended without words means it heard none.
        var endedTurns: Set<String> = []
        var finals: [String: String] = [:]
        /// Finals without a turn id (the older era's events carry none).
        var unkeyedFinals: [String] = []
        /// The local endpoint; the audio after it still goes to the relay until the words are chosen.
        var endNs: UInt64?
        /// When the speech ended (the endpoint less the silence the endpointer waited for), on the same clock.
        var speechEndNs: UInt64?
        /// When the last final arrived: end of speech to it is the relay's time.
        var finalNs: UInt64?
        var failure: String?
    }

    private let client: any TranscriptionRelay
    private let settings: Settings
    let clock: TalkClock
    let logger: Logger
    private var ring: [AudioFrame] = []
    private static let ringFrames = 300   // 6 s: the utterance start is announced after the endpointer confirms it
    var utterance: Utterance?
    private var count = 0
    private var encoder: UplinkEncoder?
    private var encoderSession: String?
    /// A contract this client cannot send: the relay is off for the rest of the session.
    private var disabled: String?
    private var notes: [TalkEvent.Kind] = []
    private var waiter: CheckedContinuation<Void, Never>?
    private var tasks: [Task<Void, Never>] = []
    /// Where the frames this source has taken in reach (stream ms): the end of the latest.
    package var heardThroughMs: Int { (ring.last?.streamPositionMs).map { $0 + AudioFrame.durationMs } ?? 0 }
    package internal(set) var lateFinals = 0
    package internal(set) var emptyFinals = 0

    package init(client: any TranscriptionRelay, frames: AsyncStream<AudioFrame>, settings: Settings = Settings(), clock: TalkClock = .live,
                 logger: Logger)
    {
        self.client = client
        self.settings = settings
        self.clock = clock
        self.logger = logger
        Task { await self.follow(frames) }
    }

    private func follow(_ frames: AsyncStream<AudioFrame>) async {
        let events = await client.events()
        tasks.append(Task { for await event in events { self.relayEvent(event) } })
        tasks.append(Task { for await frame in frames { await self.captured(frame) } })
    }

    // MARK: - TranscriptSource

    package func utteranceStarted(positionMs: Int, held: Bool) {
        count += 1
        let preRoll = positionMs - settings.preRollMs
        // What the previous utterance's uplink already sent after its endpoint is not sent again.
        let sent = utterance.flatMap { $0.uplink == .live ? $0.nextPositionMs : nil } ?? preRoll
        let from = max(preRoll, sent)
        var next = Utterance(index: count, startMs: from, nextPositionMs: from)
        if let disabled {
            next.failure = disabled
            next.uplink = .ended
            utterance = next
            return
        }
        if held {
            next.uplink = .held
            utterance = next
            return
        }
        stream(&next, from: from)
    }

    /// The held utterance is the user's: what the ring holds of it from a margin before the user's onset (nil: from
    /// its start) goes out, around the onset as the linear stage left it (`HeldUtteranceRelease`), and what follows
    /// streams as heard.
    package func utteranceReleased(onsetMs: Int?) {
        release(onsetMs: onsetMs)
    }

    /// The user's onset is the stretch's first that the reply's echo did not make, by the frames the ring holds
    /// (`HeldUtteranceRelease.heardAsEcho`): an echo onset up to 750 ms before the user's would put the echo's words
    /// in front of theirs.
    package func utteranceReleased(stretchMs: [Int]) async {
        let ring = ring
        release(onsetMs: TurnTaking.userOnsetMs(of: stretchMs) {
            HeldUtteranceRelease.heardAsEcho(onsetMs: $0, frames: ring, settings: settings.release)
        })
    }

    private func release(onsetMs: Int?) {
        guard var current = utterance, current.uplink == .held else { return }
        let release = HeldUtteranceRelease(
            startMs: current.startMs, onsetMs: onsetMs, heardThroughMs: heardThroughMs, settings: settings.release)
        current.release = release
        logger.debug("held relay utterance released", metadata: [
            "relay.fromMs": "\(release.fromMs)", "relay.heldMs": "\(max(0, release.fromMs - current.startMs))",
            "relay.linearFromMs": "\(release.linearMs.lowerBound)", "relay.linearToMs": "\(release.linearMs.upperBound)"])
        stream(&current, from: release.fromMs)
    }

    /// Starts sending the utterance: the ring's frames from `from` on as its backlog, once the session is there.
    private func stream(_ next: inout Utterance, from: Int) {
        next.uplink = .connecting
        next.backlog = ring.filter { $0.streamPositionMs >= from }
        next.nextPositionMs = (next.backlog.last?.streamPositionMs).map { $0 + AudioFrame.durationMs } ?? from
        utterance = next
        let index = next.index
        tasks.removeAll { $0.isCancelled }
        tasks.append(Task { await self.connect(index) })
    }

    /// The local endpoint. The uplink stays open: a provider ends a turn only on silence it has received, so what
    /// the microphone hears now goes on to the relay until its final or `finalWait` (see `transcript`).
    package func utteranceEnded(lastSpeechEndMs: Int) async {
        guard var current = utterance, current.endNs == nil else { return }
        let now = clock.nowNs()
        current.endNs = now
        let heardUpTo = (ring.last?.streamPositionMs).map { $0 + AudioFrame.durationMs } ?? lastSpeechEndMs
        current.speechEndNs = now &- UInt64(max(0, heardUpTo - lastSpeechEndMs)) &* 1_000_000
        utterance = current
    }

    package func transcript(localText: String, discard: Bool) async -> TranscriptChoice {
        guard let current = utterance else { return local(localText, "no audio reached the relay") }
        if current.uplink == .held {
            // Never released: none of it left the machine.
            finishUtterance()
            return local(localText, "held over the reply and dropped unsent")
        }
        if discard {
            finishUtterance()
            return local(localText, "heard while the reply played")
        }
        let endNs = current.endNs ?? clock.nowNs()
        let deadline = endNs &+ UInt64(Self.nanoseconds(settings.finalWait))
        let wake = Task { [clock] in
            try? await clock.sleep(settings.finalWait)
            self.signal()
        }
        defer { wake.cancel() }
        while true {
            guard let u = utterance, u.index == current.index else { return local(localText, "the utterance was replaced") }
            if let failure = u.failure {
                finishUtterance()
                return local(localText, failure)
            }
            if let words = Self.words(of: u) {
                finishUtterance()
                // From the end of speech (the endpoint less its silence window) to the relay's final.
                let relayMs = (Double(u.finalNs ?? clock.nowNs()) - Double(u.speechEndNs ?? endNs)) / 1e6
                return TranscriptChoice(text: words, engine: settings.engineName, relayMs: relayMs)
            }
            if !u.spokenTurns.isEmpty, u.finals.isEmpty, u.spokenTurns.isSubset(of: u.endedTurns) {
                finishUtterance()
                return local(localText, "the relay heard no words")
            }
            if clock.nowNs() >= deadline {
                finishUtterance()
                return local(localText, "the relay's final took longer than \(Self.milliseconds(settings.finalWait)) ms")
            }
            await withCheckedContinuation { waiter = $0 }
        }
    }

    package func takeNotes() -> [TalkEvent.Kind] {
        defer { notes = [] }
        return notes
    }

    package func stop() async {
        for task in tasks { task.cancel() }
        tasks = []
        signal()
        await client.close()
        await client.stop()
    }

    // MARK: - Audio out

    private func captured(_ frame: AudioFrame) async {
        ring.append(frame)
        if ring.count > Self.ringFrames { ring.removeFirst(ring.count - Self.ringFrames) }
        guard var current = utterance, frame.streamPositionMs >= current.nextPositionMs else { return }
        if let endNs = current.endNs, clock.nowNs() &- endNs > UInt64(Self.nanoseconds(settings.finalWait)) {
            // Nobody asked for the words within the wait: the audio after the endpoint stops here.
            current.uplink = .ended
            utterance = current
            endUplink()
            return
        }
        switch current.uplink {
        case .connecting:
            current.backlog.append(frame)
            current.nextPositionMs = frame.streamPositionMs + AudioFrame.durationMs
            utterance = current
        case .live:
            current.nextPositionMs = frame.streamPositionMs + AudioFrame.durationMs
            utterance = current
            await send([frame], index: current.index)
        case .held, .ended:
            break
        }
    }

    /// Gets the relay session (and the encoder for its contract), then sends what was spoken meanwhile.
    private func connect(_ index: Int) async {
        let session: RealtimeRelayInput
        do {
            session = try await client.openTranscriptionInput(checkCatalog: settings.checkCatalog)
        } catch {
            fail(index, "the relay is unavailable: \(error)")
            return
        }
        if encoderSession != session.sessionId {
            do {
                let contract = try UplinkContract(encodingName: session.encoding, sampleRate: session.sampleRateHz)
                encoder = try UplinkEncoder(contract: contract)
                encoderSession = session.sessionId
                let wire = contract.payloadBytesPerSecond() * 4 / 3 + 10 * 120   // base64 and ten request frames a second
                notes.append(.relayUplink(mode: "transcription", uplink: contract.description, bytesPerSecond: wire))
            } catch {
                disabled = "the relay's audio contract cannot be met: \(error)"
                notes.append(.error(disabled!))
                logger.error("relay disabled", metadata: ["error": "\(error)"])
                await client.close()
                fail(index, disabled!)
                return
            }
        }
        guard var current = utterance, current.index == index else { return }
        let backlog = current.backlog
        current.backlog = []
        let ended = current.uplink == .ended
        if !ended { current.uplink = .live }
        utterance = current
        await send(backlog, index: index, coalesced: true)
        if ended { await sendTail(index: index) }
    }

    /// Encodes frames and appends each full chunk; `coalesced`: all of them in one append (the audio spoken
    /// while the session was being made, which would otherwise be several appends at once).
    private func send(_ frames: [AudioFrame], index: Int, coalesced: Bool = false) async {
        guard let encoder else { return }
        var gathered = UplinkChunk(bytes: [], audioMs: 0)
        for frame in frames {
            let chunk: UplinkChunk?
            let samples = utterance.flatMap { $0.index == index ? $0.release : nil }?.samples(of: frame) ?? frame.samples
            do { chunk = try encoder.append(samples) } catch {
                fail(index, "encoding the uplink failed: \(error)")
                return
            }
            guard let chunk else { continue }
            if coalesced {
                gathered.bytes += chunk.bytes
                gathered.audioMs += chunk.audioMs
            } else {
                await append(chunk, index: index)
            }
        }
        if !gathered.bytes.isEmpty { await append(gathered, index: index) }
    }

    /// The words are chosen: the audio after the endpoint stops, and what the encoder still holds of it is not sent
    /// (the next utterance starts from its own pre-roll).
    private func finishUtterance() {
        utterance = nil
        endUplink()
    }

    private func endUplink() {
        _ = try? encoder?.finish()
    }

    private func sendTail(index: Int) async {
        guard let encoder else { return }
        do {
            if let chunk = try encoder.finish() { await append(chunk, index: index) }
        } catch {
            fail(index, "encoding the uplink failed: \(error)")
        }
    }

    private func append(_ chunk: UplinkChunk, index: Int) async {
        switch await client.append(chunk.bytes, audioMs: chunk.audioMs) {
        case .sent: break
        case .fellBehind:
            if utterance?.failure == nil { notes.append(.microphone("input fell behind: the relay missed audio of this utterance")) }
            fail(index, "input fell behind")
        case .noSession:
            fail(index, "the relay session ended")
        }
    }

    func fail(_ index: Int, _ reason: String) {
        guard var current = utterance, current.index == index, current.failure == nil else { return }
        current.failure = reason
        current.uplink = .ended
        utterance = current
        signal()
    }

    func signal() {
        let waiting = waiter
        waiter = nil
        waiting?.resume()
    }

    private func local(_ text: String, _ reason: String) -> TranscriptChoice {
        logger.info("local transcript used", metadata: ["reason": "\(reason)"])
        return TranscriptChoice(text: text, engine: settings.localEngineName, fallbackReason: reason)
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000
    }

    package static func milliseconds(_ d: Duration) -> Int64 { nanoseconds(d) / 1_000_000 }
}
