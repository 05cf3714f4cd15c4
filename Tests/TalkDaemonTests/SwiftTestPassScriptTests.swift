import Foundation
import TalkTestSupport
import Testing

/// `scripts/swift-test-pass.sh`, each pass of `make test`: its closing tally, against a stand-in for `swift` that
/// prints a console log and writes an event stream as Swift Testing 6.3 does (the records' shapes as its
/// `--event-stream-version 0` writes them). The console is where result lines were lost (CI once: Swift Testing's
/// summary said 844 tests, the runner's line 836 passed, 0 failed): the tally must not depend on it.
@Suite(.requires(TestInput.program("jq", package: "jq"))) struct SwiftTestPassScriptTests {
    /// One test of the stand-in's run: how it ends, and its console lines that survive.
    enum Outcome: Equatable {
        case passed, failed, knownIssue, skipped, cancelled, notEnded
        /// Listed in the run's plan, never started (the run was stopped first).
        case notStarted
        /// Parameterized, started and not ended: its cases (their arguments) that ended and those still running.
        case cases(ended: [String], running: [String])
    }

    struct Run {
        var tests: [(name: String, outcome: Outcome)]
        /// Names of the tests whose result line the console lost.
        var lostLines: Set<String> = []
        /// Names of the tests whose start line the console lost.
        var lostStarts: Set<String> = []
        /// The test process hangs after the run's last record, until the pass's time limit stops it.
        var hangs = false
        /// Swift Testing's summary, as the run's end record has it (nil: the test process died before the run ended).
        var summary: String?
        var status: Int32
    }

    static func record(_ kind: String, _ payload: [String: Any]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: ["kind": kind, "payload": payload, "version": 0], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// `testCase`: the arguments of the parameterized test's case the event is of.
    static func event(_ kind: String, _ id: String?, _ symbol: String = "default", _ text: String = "", issue: [String: Any]? = nil,
                      testCase: String? = nil) -> String {
        var payload: [String: Any] = ["kind": kind, "instant": ["absolute": 1.0, "since1970": 1.0],
                                      "messages": text.isEmpty ? [] : [["symbol": symbol, "text": text]]]
        if let id { payload["testID"] = id }
        if let issue { payload["issue"] = issue }
        if let testCase { payload["_testCase"] = ["displayName": testCase, "id": "case \(testCase)"] }
        return record("event", payload)
    }

    /// The console log and event stream of `run`.
    static func outputs(_ run: Run) -> (console: String, events: String) {
        let suite = "TalkDaemonTests.FixtureTests"
        var console = ["◇ Test run started.", "◇ Suite FixtureTests started."]
        var events = [record("test", ["kind": "suite", "id": suite, "name": "FixtureTests"])]
        for (line, (name, outcome)) in zip(1..., run.tests) {
            var function: [String: Any] = ["kind": "function", "id": "\(suite)/`\(name)`()/F.swift:\(line):1", "name": "`\(name)`()",
                                           "displayName": name, "isParameterized": false,
                                           "sourceLocation": ["fileID": "TalkDaemonTests/F.swift", "line": line, "column": 1]]
            if case .cases(let ended, let running) = outcome {
                function["isParameterized"] = true
                function["_testCases"] = (ended + running).map { ["displayName": $0, "id": "case \($0)"] }
            }
            events.append(record("test", function))
        }
        events += [event("runStarted", nil, "default", "Test run started."), event("testStarted", suite)]
        for (line, (name, outcome)) in zip(1..., run.tests) {
            let id = "\(suite)/`\(name)`()/F.swift:\(line):1"
            if outcome == .notStarted { continue }
            if outcome == .skipped {
                events.append(event("testSkipped", id, "skip", #"Test "\#(name)" skipped: "no input""#))
                if !run.lostLines.contains(name) { console.append(#"➜ Test "\#(name)" skipped: "no input""#) }
                continue
            }
            if !run.lostStarts.contains(name) { console.append(#"◇ Test "\#(name)" started."#) }
            events.append(event("testStarted", id, "default", #"Test "\#(name)" started."#))
            if case .cases(let ended, let running) = outcome {
                for argument in ended + running {
                    let started = #"Test case passing 1 argument condition → \#(argument) to "\#(name)" started."#
                    events.append(event("testCaseStarted", id, "default", started, testCase: argument))
                    console.append("◇ " + started)
                    if ended.contains(argument) { events.append(event("testCaseEnded", id, testCase: argument)) }
                }
                continue
            }
            let end: (symbol: String, text: String)
            switch outcome {
            case .passed: end = ("pass", #"Test "\#(name)" passed after 0.1 seconds."#)
            case .failed:
                events.append(event("issueRecorded", id, "fail", "Expectation failed", issue: ["isKnown": false]))
                end = ("fail", #"Test "\#(name)" failed after 0.1 seconds with 1 issue."#)
            case .knownIssue:
                events.append(event("issueRecorded", id, "passWithKnownIssue", "Expectation failed", issue: ["isKnown": true]))
                end = ("passWithKnownIssue", #"Test "\#(name)" passed after 0.1 seconds with 1 known issue."#)
            case .cancelled:
                events.append(event("testCancelled", id))
                end = ("skip", #"Test "\#(name)" was cancelled after 0.1 seconds: "mid-test""#)
            case .skipped, .notEnded, .notStarted, .cases: continue
            }
            events.append(event("testEnded", id, end.symbol, end.text))
            if !run.lostLines.contains(name) {
                console.append(["pass": "✔", "fail": "✘", "passWithKnownIssue": "━", "skip": "➜"][end.symbol]! + " " + end.text)
            }
        }
        if let summary = run.summary {
            events.append(event("runEnded", nil, summary.contains(" passed after ") ? "pass" : "fail", summary))
            console.append((summary.contains(" passed after ") ? "✔ " : "✘ ") + summary)
        }
        return (console.joined(separator: "\n") + "\n", events.joined(separator: "\n") + "\n")
    }

    /// The script run on `run` through the stand-in `swift` (no sound server): its exit status and output.
    static func pass(_ run: Run) async throws -> (status: Int32, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("test-pass-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (console, events) = outputs(run)
        try console.write(toFile: folder + "/console", atomically: true, encoding: .utf8)
        try events.write(toFile: folder + "/events", atomically: true, encoding: .utf8)
        let swift = folder + "/swift"
        // A hung test process, named as the pass's test side is (`swift…`), so the pass stops it as it would one.
        let hung = folder + "/swift-hung-tests"
        try FileManager.default.createSymbolicLink(atPath: hung, withDestinationPath: "/bin/sleep")
        try """
            #!/bin/sh
            # `swift test …` as the pass runs it: the fixture's console on stdout, its events where it is told.
            while [ $# -gt 0 ]; do [ "$1" = --event-stream-output-path ] && cp '\(folder)/events' "$2"; shift; done
            cat '\(folder)/console'
            \(run.hangs ? "'\(hung)' 600" : "")
            exit \(run.status)
            """.write(toFile: swift, atomically: true, encoding: .utf8)
        chmod(swift, 0o755)
        var environment = TestInputs.environment
        environment["SWIFT"] = swift
        environment["WITH_SOUND_SERVER"] = "none"
        // A hung run is stopped soon: the stand-in has written all it will within a few seconds however loaded the
        // machine is. (Its stacks are not taken: it is no test binary.)
        environment["TEST_TIME_LIMIT"] = run.hangs ? "5" : "120"
        return try await ChildProcess.output(TestInputs.packageRoot + "/scripts/swift-test-pass.sh", ["--filter", "FixtureTests"],
                                             environment: environment, mergeStderr: true)
    }

    /// The tests the pass named as still running at its time limit.
    static func stillRunning(_ output: String) -> [String] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let heading = lines.firstIndex(where: { $0.hasSuffix("tests started and not ended:") }) else { return [] }
        return Array(lines[(heading + 1)...].prefix { $0.hasPrefix("  ") })
    }

    static func tally(_ output: String) -> String? {
        output.split(separator: "\n").last { $0.hasPrefix("Swift tests: ") && $0.contains(" passed, ") }.map(String.init)
    }

    @Test func `a result line the console lost is still counted: the tally is exact`() async throws {
        let run = Run(tests: [("one", .passed), ("two", .passed), ("three", .passed)], lostLines: ["two"],
                      summary: "Test run with 3 tests in 1 suite passed after 0.3 seconds.", status: 0)
        let r = try await Self.pass(run)
        #expect(Self.tally(r.output) == "Swift tests: 3 passed, 0 failed, 0 skipped, 0 passed only with a known issue (swift test --filter FixtureTests)",
                "\(r.output)")
        #expect(r.status == 0, "\(r.output)")
    }

    @Test func `failures, skips and known issues are counted and named though the console lost their lines`() async throws {
        let tests: [(String, Outcome)] = [("fine", .passed), ("broken", .failed), ("known", .knownIssue), ("absent", .skipped),
                                          ("stopped", .cancelled)]
        let run = Run(tests: tests, lostLines: ["broken", "known", "absent", "stopped"],
                      summary: "Test run with 5 tests in 1 suite failed after 0.3 seconds with 2 issues (including 1 known issue).",
                      status: 1)
        let r = try await Self.pass(run)
        #expect(Self.tally(r.output)?.hasPrefix(#"Swift tests: 1 passed, 1 failed, 2 skipped, 1 passed only with a known issue: "known" ("#) == true,
                "\(r.output)")
        #expect(r.output.contains(#"Swift tests: failed: "broken""#), "\(r.output)")
        #expect(r.status == 1)
    }

    @Test func `a pass that exits 0 fails when a test has no end or the tally disagrees with Swift Testing's summary`() async throws {
        // The test process died mid-run: no end for the test or the run, whatever the exit status said.
        let died = try await Self.pass(Run(tests: [("fine", .passed), ("cut", .notEnded)], summary: nil, status: 0))
        #expect(died.output.contains(#"Swift tests: 1 not ended: "cut""#), "\(died.output)")
        #expect(died.output.contains("disagrees with Swift Testing's summary: none (the run did not end)"), "\(died.output)")
        #expect(died.status == 1)
        // A summary that counts a test the stream has no record of.
        let more = try await Self.pass(Run(tests: [("fine", .passed)], summary: "Test run with 2 tests in 1 suite passed after 0.1 seconds.",
                                           status: 0))
        #expect(more.output.contains("the tally (1 tests, 0 failing issues) disagrees"), "\(more.output)")
        #expect(more.status == 1)
    }

    /// The console lost the start line of the test that hung and the result line of one that passed (as it lost
    /// result lines in CI): read from it, the report named the test that had passed and not the one that hung.
    @Test func `at the time limit the tests named as still running are those that started and did not end`() async throws {
        let tests: [(String, Outcome)] = [("fine", .passed), ("hung", .notEnded), ("conditions", .cases(ended: ["grammar", "dictation"], running: ["local voice"])),
                                          ("queued", .notStarted)]
        let r = try await Self.pass(Run(tests: tests, lostLines: ["fine"], lostStarts: ["hung"], hangs: true, summary: nil, status: 0))
        #expect(Self.stillRunning(r.output) == [
            #"  "hung" (TalkDaemonTests/F.swift:2)"#,
            #"  "conditions" (TalkDaemonTests/F.swift:3) (parameterized: 1 of 3 cases running: local voice)"#,
        ], "\(r.output)")
        #expect(r.output.contains("Swift tests: stopped by the time limit of 5 s"), "\(r.output)")
        #expect(r.status == 124, "\(r.output)")
    }
}
