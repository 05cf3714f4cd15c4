import AudioIO
import Foundation
import TalkLogging

extension OpenClawTalk {
    /// Lists PulseAudio sources and sinks, marking the defaults.
    struct Devices: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "devices",
            abstract: "List PulseAudio sources (microphones) and sinks (speakers).",
            options: [.flag("json", help: "Print the list as JSON.")]
        )

        var json: Bool

        init(_ parsed: ParsedArguments) throws {
            json = parsed.flag("json")
        }

        func run() async throws {
            let devices = try await PulseDeviceList(logger: Logger(label: "openclaw-talk.devices")).devices()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(devices), as: UTF8.self))
                return
            }
            for kind in [PulseDeviceKind.source, .sink] {
                print(kind == .source ? "Sources:" : "Sinks:")
                let ofKind = devices.filter { $0.kind == kind }
                if ofKind.isEmpty { print("  (none)") }
                for d in ofKind {
                    let mark = d.isDefault ? "*" : " "
                    print("\(mark) \(d.name)  [\(d.sampleSpecText)]  \(d.description)")
                }
            }
            print("(* = default)")
        }
    }
}
