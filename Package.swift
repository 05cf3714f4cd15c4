// swift-tools-version:6.0
import PackageDescription

// One systemLibrary target per C library (Debian -dev packages, found with pkg-config).
// Their shim headers wrap the variadic and macro APIs Swift cannot import.
let package = Package(
    name: "openclaw-talk",
    products: [
        .executable(name: "openclaw-talk", targets: ["TalkDaemon"])
    ],
    targets: [
        .systemLibrary(name: "CPulse", pkgConfig: "libpulse", providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(
            name: "COggOpus", pkgConfig: "opusfile",
            providers: [.apt(["libopusfile-dev", "libopusenc-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CMpg123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .systemLibrary(
            name: "CPocketSphinx", pkgConfig: "pocketsphinx",
            providers: [.apt(["libpocketsphinx-dev", "libsphinxbase-dev"])]),
        .systemLibrary(name: "CEspeakNG", pkgConfig: "espeak-ng", providers: [.apt(["libespeak-ng-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // libnotify (desktop notifications with buttons) and gdk-pixbuf, which it brings (images re-encoded for `send`).
        .systemLibrary(name: "CLibNotify", pkgConfig: "libnotify", providers: [.apt(["libnotify-dev"])]),
        .systemLibrary(
            name: "CWebRTCAudioProcessing", pkgConfig: "webrtc-audio-processing",
            providers: [.apt(["libwebrtc-audio-processing-dev"])]),
        // WebRTC's audio processing is C++: this small C++ target gives Swift a C API to it (echo_canceller.h).
        // SwiftPM passes on pkg-config's include folder but not its defines, so they are repeated here.
        .target(
            name: "CEchoCanceller", dependencies: ["CWebRTCAudioProcessing", "CSpeexDSP"],
            cxxSettings: [.define("WEBRTC_POSIX"), .define("WEBRTC_AUDIO_PROCESSING_ONLY_BUILD")]),

        .target(name: "TalkLogging"),
        // posix_spawn with a clean signal mask, for the children benches and tests start (no dependencies, so the
        // test support can use it too).
        .target(name: "ChildProcessSpawn"),
        // The threads kept outside the cooperative pool: named as the system lists them, a serial executor on a thread
        // of its own, and realtime scheduling for the audio threads where the system allows it (the kernel, or rtkit
        // over the system bus through libsystemd's sd-bus).
        .target(name: "Threading", dependencies: ["CSystemd"]),
        .target(name: "AudioIO", dependencies: ["TalkLogging", "Threading", "CPulse", "COpus", "COggOpus", "CSoxr", "CMpg123", "CEchoCanceller"]),
        .target(name: "SpeechRecognition", dependencies: ["TalkLogging", "Threading", "AudioIO", "CPocketSphinx"]),
        .target(name: "SpeechSynthesis", dependencies: ["TalkLogging", "Threading", "CEspeakNG"]),
        .target(name: "SessionBridge", dependencies: ["TalkLogging", "Threading", "COpenSSL"]),
        // Benchmark logic the `bench` commands run: the codec, device, Gateway, uplink and Talk-loop benchmarks, their
        // statistics and test signals, the reference Gateway as a child process (benches and tests spawn it; the daemon's
        // libraries never do), the daemon as a child (TalkChild) and the soak that drives it (its control socket through
        // TalkService's client).
        .target(
            name: "TalkBench",
            dependencies: [
                "TalkLogging", "AudioIO", "SpeechRecognition", "SpeechSynthesis", "SessionBridge", "ChildProcessSpawn", "TalkService",
            ]),
        .target(
            name: "TalkSession",
            dependencies: ["TalkLogging", "AudioIO", "SpeechRecognition", "SpeechSynthesis", "SessionBridge"]),
        // The daemon's service plane; it drives the Talk loop only through `ControlledSession`.
        .target(name: "TalkService", dependencies: ["TalkLogging", "Threading", "CSystemd"]),
        // The desktop around the daemon: notifications with action buttons, images made to fit a Gateway's limits.
        .target(name: "Desktop", dependencies: ["TalkLogging", "Threading", "CLibNotify"]),
        .executableTarget(
            name: "TalkDaemon",
            dependencies: [
                "TalkLogging", "AudioIO", "SpeechRecognition", "SpeechSynthesis", "SessionBridge", "TalkSession",
                "TalkService", "Desktop", "TalkBench",
            ],
            plugins: ["BuildInfoPlugin"]),
        // Writes the commit being built into the executable (`openclaw-talk --version`): scripts/build-info.sh.
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),

        // What the test targets share: where ../shared is, CI's rule that a missing input fails, skip traits.
        .target(name: "TalkTestSupport", dependencies: ["ChildProcessSpawn", "Threading"], path: "Tests/TalkTestSupport"),
        // A child the realtime tests run as another user: asks for a realtime thread as the audio threads do, says how it
        // came out, and holds the thread until its stdin ends.
        .executableTarget(name: "RealtimeProbe", dependencies: ["Threading"], path: "Tests/RealtimeProbe"),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading", "TalkTestSupport"]),
        .testTarget(name: "AudioIOTests", dependencies: ["AudioIO", "Threading", "TalkBench", "TalkTestSupport"]),
        .testTarget(name: "SpeechRecognitionTests", dependencies: ["SpeechRecognition", "Threading", "AudioIO", "TalkTestSupport"]),
        .testTarget(name: "SpeechSynthesisTests", dependencies: ["SpeechSynthesis", "TalkLogging", "TalkTestSupport"]),
        .testTarget(name: "TalkBenchTests", dependencies: ["TalkBench", "AudioIO", "SessionBridge", "TalkTestSupport"]),
        .testTarget(name: "SessionBridgeTests", dependencies: ["SessionBridge", "TalkBench", "TalkTestSupport"]),
        .testTarget(
            name: "TalkSessionTests",
            dependencies: ["TalkSession", "AudioIO", "SpeechRecognition", "SpeechSynthesis", "SessionBridge", "TalkLogging", "TalkBench", "TalkTestSupport", "Threading"]),
        .testTarget(name: "TalkServiceTests", dependencies: ["TalkService", "TalkLogging", "TalkTestSupport"]),
        .testTarget(name: "DesktopTests", dependencies: ["Desktop", "TalkLogging", "TalkTestSupport"]),
        .testTarget(name: "TalkDaemonTests", dependencies: ["TalkDaemon", "SessionBridge", "TalkBench", "AudioIO", "SpeechRecognition", "TalkService", "Desktop", "TalkTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
