import Foundation
import TalkService
import TalkTestSupport
import Testing

@testable import TalkDaemon

/// The manual (docs/openclaw-talk.1.scd, turned into roff by scdoc as `make install` and the package do) against
/// the command tree: every command has its section, every option `--help` lists is in its command's section, and
/// the configuration keys, exit statuses and files are there. It must also render through man without warnings.
@Suite struct ManualPageTests {
    static let scdoc = TestInput.program("scdoc", package: "scdoc")
    static let man = TestInput.program("man", package: "man-db")

    /// The roff page, split into its `.SH`/`.SS` sections by title.
    struct Page {
        var roff: String
        var sections: [(title: String, body: String)] = []

        init(roff: String) {
            let roff = roff.replacingOccurrences(of: "\\&", with: "")  // scdoc's zero-width breaks after dots
            self.roff = roff
            var current: (String, String)?
            for line in roff.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(".SH ") || line.hasPrefix(".SS ") {
                    if let current { sections.append(current) }
                    current = (String(line.dropFirst(4)).trimmingCharacters(in: CharacterSet(charactersIn: "\" ")), "")
                } else {
                    current?.1 += line + "\n"
                }
            }
            if let current { sections.append(current) }
        }

        /// The section whose title names the command (`talk start, talk stop` names both).
        func section(for command: String) -> String? {
            sections.first { $0.title.components(separatedBy: ", ").contains(command) }?.body
        }

        func section(titled title: String) -> String? { sections.first { $0.title == title }?.body }
    }

    static func page() async throws -> Page {
        let source = TestInputs.packageRoot + "/docs/openclaw-talk.1.scd"
        let out = try await run(try scdoc.path(), [], stdin: source)
        #expect(out.status == 0, "scdoc: \(out.stderr)")
        return Page(roff: out.stdout)
    }

    /// `\fB--aec\fR` in roff: the option as a word of its own (not the start of a longer one).
    static func mentions(_ text: String, _ option: String) -> Bool {
        text.contains("\\fB\(option)\\fR")
    }

    @Test(.requires(scdoc)) func `every command's section lists every option its help lists`() async throws {
        let page = try await Self.page()
        for node in CommandNode.all(root: OpenClawTalk.self) where !node.isRoot {
            let name = node.path.dropFirst().joined(separator: " ")
            let options = node.configuration.options
            if options.isEmpty, !node.configuration.subcommands.isEmpty { continue }  // a group: its commands have sections
            guard var text = page.section(for: name) else {
                Issue.record("no section for '\(name)' in the manual")
                continue
            }
            // "Takes the options of openclaw-talk run." (start): that command's section counts too.
            if let range = text.range(of: "Takes the options of openclaw-talk ") {
                let other = text[range.upperBound...].prefix { $0 != "." && $0 != "\n" }
                text += page.section(for: String(other)) ?? ""
            }
            for option in options {
                #expect(Self.mentions(text, "--\(option.long)"), "the manual's '\(name)' section lacks --\(option.long)")
                if let short = option.short {
                    #expect(Self.mentions(text, "-\(short)"), "the manual's '\(name)' section lacks -\(short)")
                }
            }
        }
        let global = try #require(page.section(titled: "GLOBAL OPTIONS"))
        for option in CommandNode(path: ["openclaw-talk"], command: OpenClawTalk.self).helpOptions {
            #expect(Self.mentions(global, "--\(option.long)"), "GLOBAL OPTIONS lacks --\(option.long)")
        }
    }

    @Test(.requires(scdoc)) func `the manual has every configuration key, exit status and file`() async throws {
        let page = try await Self.page()
        let configuration = try #require(page.section(titled: "CONFIGURATION"))
        for key in ConfigSchema.service.kinds.keys.sorted() {
            #expect(configuration.contains(key), "CONFIGURATION lacks \(key)")
        }
        let exit = try #require(page.section(titled: "EXIT STATUS"))
        for code in [ExitCode.success, .failure, .validationFailure].map(\.rawValue) + [3] {
            #expect(exit.contains("\\fB\(code)\\fR"), "EXIT STATUS lacks \(code)")
        }
        let files = try #require(page.section(titled: "FILES"))
        for name in ["config.json", "gateway.json", "device-identity.json", "chat-outbox.json", "daemon.log", "control.sock",
                     "status.json", "openclaw-talk/models", "openclaw-talk.service"] {
            #expect(files.contains(name), "FILES lacks \(name)")
        }
        for title in ["ENVIRONMENT", "STATUS", "EVENTS", "SIGNALS"] {
            #expect(page.section(titled: title) != nil, "no \(title) section")
        }
    }

    @Test(.requires(scdoc, man)) func `the manual renders through man without warnings`() async throws {
        let page = try await Self.page()
        let folder = NSTemporaryDirectory() + "/oct-man-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try page.roff.write(toFile: folder + "/openclaw-talk.1", atomically: true, encoding: .utf8)
        let out = try await Self.run(try Self.man.path(), ["--warnings", "-l", folder + "/openclaw-talk.1"])
        #expect(out.status == 0)
        #expect(out.stderr.isEmpty, "man: \(out.stderr)")
        #expect(out.stdout.contains("openclaw-talk(1)"))
        #expect(out.stdout.contains("EXIT STATUS"))
    }

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ program: String, _ arguments: [String], stdin: String? = nil) async throws -> Outcome {
        var environment = TestInputs.environment
        environment["MANWIDTH"] = "100"
        environment["MANPAGER"] = "cat"
        environment["PAGER"] = "cat"
        let errPath = NSTemporaryDirectory() + "/oct-man-err-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        let (status, stdout) = try await ChildProcess.output(program, arguments, environment: environment, stderrPath: errPath, stdinPath: stdin)
        return Outcome(status: status, stdout: stdout, stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
