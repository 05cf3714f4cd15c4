import Foundation
import TalkLogging
import Testing

@testable import AudioIO

/// A Talk session's devices without the command line: the file-or-device choice and its rules (`AudioDeviceChoice`),
/// and `SessionAudio`, which builds the microphone and the speaker from it and wraps them for echo cancellation.
@Suite struct SessionAudioTests {
    let logger = Logger(label: "test.session-audio", handler: InMemoryLogHandler())

    @Test(arguments: [
        (AudioDeviceChoice(), nil),
        (AudioDeviceChoice(source: "vmic", sink: "vsink"), nil),
        (AudioDeviceChoice(input: "in.wav", fast: true, output: "o.wav"), nil),
        (AudioDeviceChoice(source: "vmic", output: "o.wav"), nil),
        (AudioDeviceChoice(source: "vmic", input: "in.wav"), .microphoneTwice),
        (AudioDeviceChoice(sink: "vsink", output: "o.wav"), .speakerTwice),
        (AudioDeviceChoice(source: "vmic", input: "in.wav", sink: "vsink", output: "o.wav"), .microphoneTwice),
        (AudioDeviceChoice(fast: true), .fastWithoutFile),
        (AudioDeviceChoice(source: "vmic", fast: true), .fastWithoutFile),
    ] as [(AudioDeviceChoice, AudioDeviceChoice.Conflict?)])
    func `an end is a file or a device, never both, and fast reading needs a file`(
        choice: AudioDeviceChoice, conflict: AudioDeviceChoice.Conflict?
    ) {
        #expect(choice.conflict == conflict)
    }

    @Test(arguments: [
        (EchoCancelMode.pulse, AudioDeviceChoice(), nil),
        (.pulse, AudioDeviceChoice(source: "vmic", sink: "vsink"), nil),
        (.pulse, AudioDeviceChoice(input: "in.wav"), .serverEchoCancelOverFile),
        (.pulse, AudioDeviceChoice(output: "o.wav"), .serverEchoCancelOverFile),
        (.webrtc, AudioDeviceChoice(input: "in.wav", output: "o.wav"), nil),
        (.auto, AudioDeviceChoice(output: "o.wav"), nil),
        (.off, AudioDeviceChoice(input: "in.wav"), nil),
    ] as [(EchoCancelMode, AudioDeviceChoice, AudioDeviceChoice.Conflict?)])
    func `the server's echo canceller needs the server's devices at both ends`(
        mode: EchoCancelMode, devices: AudioDeviceChoice, conflict: AudioDeviceChoice.Conflict?
    ) {
        #expect(mode.conflict(with: devices) == conflict)
    }

    @Test func `status names each end as the device or the file`() {
        #expect(AudioDeviceChoice().captureName == "default" && AudioDeviceChoice().playbackName == "default")
        let files = AudioDeviceChoice(input: "in.wav", output: "o.wav")
        #expect(files.captureName == "file:in.wav" && files.playbackName == "file:o.wav")
        let devices = AudioDeviceChoice(source: "vmic", sink: "vsink")
        #expect(devices.captureName == "vmic" && devices.playbackName == "vsink")
    }

    @Test func `a request that breaks a rule is refused before anything opens`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("o.wav").path
        // A server that is not there: without the rule, the module's load would be tried and fail another way.
        let pulseOverFile = SessionAudio.Request(
            mode: .pulse, devices: AudioDeviceChoice(source: "vmic", output: output), server: "unix:/nonexistent/pulse.sock")
        await #expect(throws: AudioDeviceChoice.Conflict.serverEchoCancelOverFile) { try await SessionAudio.open(pulseOverFile, logger: logger) }
        let twice = SessionAudio.Request(mode: .off, devices: AudioDeviceChoice(sink: "vsink", output: output))
        await #expect(throws: AudioDeviceChoice.Conflict.speakerTwice) { try await SessionAudio.open(twice, logger: logger) }
        #expect(!FileManager.default.fileExists(atPath: output), "the output file was made for a refused request")
    }

    @Test(arguments: [EchoCancelMode.auto, .webrtc, .off])
    func `a file session's speaker is one paced track, cleaned against by the in-process canceller unless off`(mode: EchoCancelMode) async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("o.wav").path
        let audio = try await SessionAudio.open(
            .init(mode: mode, devices: AudioDeviceChoice(input: TestAudio.cardsWav, output: output)), logger: logger)
        let cancelling = mode != .off
        #expect(audio.echoCancelMode == (cancelling ? .webrtc : .off))
        #expect(audio.echoCancellation == (cancelling ? "webrtc" : "off"))
        #expect((audio.capture is EchoCancellingCapture) == cancelling)
        #expect((audio.capture is FileCaptureDevice) == !cancelling)
        #expect((audio.playback is EchoReferencePlayback) == cancelling)
        #expect((audio.playback is ContinuousTrackSink) == !cancelling)
        await audio.close()
        #expect(FileManager.default.fileExists(atPath: output))
    }

    @Test func `with fast input the speaker is a plain WAV file, not a track in step with a clock`() async throws {
        let dir = try TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("o.wav").path
        let audio = try await SessionAudio.open(
            .init(mode: .off, devices: AudioDeviceChoice(input: TestAudio.cardsWav, fast: true, output: output)), logger: logger)
        #expect(audio.playback is WAVFileSink)
        #expect(audio.capture is FileCaptureDevice)
        await audio.close()
    }
}
