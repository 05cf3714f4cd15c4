import Foundation

/// `openclaw-talk` (the binary built beside these tests) run as a user runs it: a child process with its
/// own config and state folders, stdout and stderr captured. Blocking waits run off the cooperative pool.
package struct BuiltCommand: Sendable {
    package struct Outcome: Sendable {
        package var status: Int32
        package var stdout: String
        package var stderr: String
    }

    /// Where stdin comes from: nothing, a text piped in, or a terminal on which `answer` is typed.
    package enum Input: Sendable {
        case none
        case text(String)
        case terminal(answer: String)
    }

    package let binary: String
    package let home: String
    /// A program the binary is handed to as its first argument (e.g. scripts/with-pulse.sh), or nil.
    private let launcher: String?
    /// Variables set (or, with an empty value, removed) on top of the test's environment.
    package var extraEnvironment: [String: String] = [:]

    /// A command with a fresh private folder for its config and state (removed by `removeHome()`).
    package init(through launcher: String? = nil) throws {
        var template = Array((NSTemporaryDirectory() + "/oct-cli-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CommandFailure("mkdtemp failed: errno \(errno)") }
        try self.init(home: String(cString: made), through: launcher)
    }

    /// A command whose config and state live under `home`, a folder the caller owns.
    package init(home: String, through launcher: String? = nil) throws {
        binary = try TestInput.builtBinary.path()
        self.home = home
        self.launcher = launcher
    }

    /// Runs the command once in a fresh private folder, removed afterwards.
    package static func run(_ arguments: [String], input: Input = .none) async throws -> Outcome {
        let command = try BuiltCommand()
        defer { command.removeHome() }
        return try await command.run(arguments, input: input)
    }

    package func removeHome() { try? FileManager.default.removeItem(atPath: home) }

    package var configFolder: String { home + "/config/openclaw-talk" }
    package var stateFolder: String { home + "/state/openclaw-talk" }
    /// `$XDG_RUNTIME_DIR` of the command (the daemon's socket, lock and status.json are in `openclaw-talk/` there).
    package var runtimeFolder: String { home + "/run" }

    /// Every regular file in the private folder, relative to it.
    package func storedFiles() -> [String] {
        let all = FileManager.default.enumerator(atPath: home)?.compactMap { $0 as? String } ?? []
        return all.filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: home + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    /// Runs to the end and returns what it printed.
    package func run(_ arguments: [String], input: Input = .none, environment extra: [String: String] = [:]) async throws -> Outcome {
        let process = try start(arguments, input: input, environment: extra)
        return try await process.finish()
    }

    /// Starts it (with `extra` added to its environment); `finish()` waits for its end.
    package func start(_ arguments: [String], input: Input = .none, environment extra: [String: String] = [:]) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher ?? binary)
        process.arguments = (launcher == nil ? [] : [binary]) + arguments
        // The test's own environment (PATH finds the python3 the reference Gateway needs; PULSE_SERVER the
        // private server) with the config and state folders moved into the private folder.
        var environment = TestInputs.environment
        environment["XDG_STATE_HOME"] = home + "/state"
        environment["XDG_CONFIG_HOME"] = home + "/config"
        // A runtime folder of its own too: a daemon's socket, lock and status stay private to this command.
        environment["XDG_RUNTIME_DIR"] = runtimeFolder
        try FileManager.default.createDirectory(atPath: runtimeFolder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for (key, value) in extraEnvironment { environment[key] = value.isEmpty ? nil : value }
        environment.merge(extra) { $1 }
        process.environment = environment
        // Output goes to files: a chatty child never blocks on a full pipe while the test waits elsewhere.
        let out = try Capture()
        let err = try Capture()
        process.standardOutput = out.handle
        process.standardError = err.handle
        var terminal: Int32?
        switch input {
        case .none: process.standardInput = FileHandle.nullDevice
        case .text(let text):
            let pipe = Pipe()
            process.standardInput = pipe
            pipe.fileHandleForWriting.write(Data(text.utf8))
            try pipe.fileHandleForWriting.close()
        case .terminal(let answer):
            let (master, slave) = try Self.openTerminal()
            terminal = master
            process.standardInput = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
            // The terminal keeps the typed line until the program reads it.
            _ = (answer + "\n").withCString { write(master, $0, strlen($0)) }
        }
        try process.run()
        return Running(process: process, out: out, err: err, terminal: terminal)
    }

    /// A started command.
    package final class Running: @unchecked Sendable {
        package let process: Process
        private let out: Capture
        private let err: Capture
        private let terminal: Int32?

        fileprivate init(process: Process, out: Capture, err: Capture, terminal: Int32?) {
            self.process = process
            self.out = out
            self.err = err
            self.terminal = terminal
        }

        /// What it has written to stderr so far.
        package var stderrSoFar: String { err.text }
        /// What it has written to stdout so far.
        package var stdoutSoFar: String { out.text }

        /// Waits (bounded) until stderr holds `text`; false if it did not within `timeout` or the process ended.
        package func waitForStderr(_ text: String, timeout: Duration = .seconds(30)) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if err.text.contains(text) { return true }
                if !process.isRunning { return err.text.contains(text) }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return false
        }

        /// Waits for the end (SIGTERM after `timeout`, SIGKILL 10 s later) and returns what it printed. Every wait is
        /// bounded: a command whose end is still not seen 10 s after SIGKILL (Foundation learns of it through a socket
        /// the child holds; a child that leaked it to a longer-lived process hid its exit) fails the test by name.
        package func finish(timeout: Duration = .seconds(120)) async throws -> Outcome {
            let process = process
            func ended(within limit: Duration) async -> Bool {
                let deadline = ContinuousClock.now + limit
                while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
                return !process.isRunning
            }
            if await !ended(within: timeout) {
                process.terminate()
                if await !ended(within: Self.stopGrace) {
                    kill(process.processIdentifier, SIGKILL)
                    if await !ended(within: Self.stopGrace) {
                        let pid = process.processIdentifier
                        let state = ProcessTree.isAlive(pid) ? "it still runs" : "it has ended (a zombie) but Foundation never saw it end"
                        throw CommandFailure("\(([process.executableURL?.lastPathComponent ?? "?"] + (process.arguments ?? [])).joined(separator: " ").prefix(300)) "
                                             + "did not end within \(timeout), nor \(Self.stopGrace) after SIGTERM and again after SIGKILL "
                                             + "(pid \(pid): \(state)); stderr: \(err.text.suffix(2000))")
                    }
                }
            }
            if let terminal { close(terminal) }
            return Outcome(status: process.terminationStatus, stdout: out.text, stderr: err.text)
        }

        /// How long a stopped command has to end after SIGTERM, and again after SIGKILL, before it counts as hung.
        static let stopGrace: Duration = .seconds(10)
    }

    /// A temporary file a child writes to, read back as text.
    fileprivate final class Capture: Sendable {
        let path: String
        let handle: FileHandle

        init() throws {
            path = NSTemporaryDirectory() + "/oct-cli-out-\(UUID().uuidString)"
            guard FileManager.default.createFile(atPath: path, contents: nil),
                  let handle = FileHandle(forWritingAtPath: path) else { throw CommandFailure("cannot create \(path)") }
            self.handle = handle
        }

        var text: String { String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A pseudo-terminal: the master side for the test, the slave side as the child's stdin. Glibc's
    /// header hides the pty calls from Swift (they need _XOPEN_SOURCE), so they are looked up by name.
    private static func openTerminal() throws -> (master: Int32, slave: Int32) {
        typealias OpenPT = @convention(c) (Int32) -> Int32
        typealias FDCall = @convention(c) (Int32) -> Int32
        typealias PTSName = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
        func symbol<F>(_ name: String, as type: F.Type) throws -> F {
            guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                throw CommandFailure("no \(name) in the C library")
            }
            return unsafeBitCast(address, to: type)
        }
        let master = try symbol("posix_openpt", as: OpenPT.self)(O_RDWR | O_NOCTTY)
        guard master >= 0, try symbol("grantpt", as: FDCall.self)(master) == 0,
              try symbol("unlockpt", as: FDCall.self)(master) == 0,
              let name = try symbol("ptsname", as: PTSName.self)(master) else {
            throw CommandFailure("no pseudo-terminal: errno \(errno)")
        }
        let slave = open(name, O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw CommandFailure("cannot open \(String(cString: name)): errno \(errno)") }
        return (master, slave)
    }
}

package struct CommandFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
