import Foundation

/// What a CLI client command prints and its exit status, worked out here so it is tested without the CLI.
package struct ClientOutcome: Sendable, Equatable {
    package var stdout: String
    package var stderr: String
    package var exitCode: Int32

    package init(stdout: String = "", stderr: String = "", exitCode: Int32 = 0) {
        self.stdout = stdout
        self.stderr = stderr
        self.exitCode = exitCode
    }
}

/// The client side of `status`, `pause`, `talk start` and the other commands that only ask the daemon.
package enum DaemonQuery {
    package enum StatusFormat: Sendable { case text, json, waybar }

    /// Sends one command; "no daemon" is exit code 3, a refusal is 1 with the daemon's message.
    package static func command(_ cmd: String, args: [String: ControlJSON] = [:], paths: RuntimePaths,
                                done: String) -> ClientOutcome {
        do {
            let response = try ControlClient(path: paths.socketPath).call(cmd, args: args)
            switch response.outcome {
            case .success: return ClientOutcome(stdout: done + "\n")
            case .failure(let e): return ClientOutcome(stderr: "Error: \(e.message) (\(e.code))\n", exitCode: 1)
            }
        } catch {
            return ClientOutcome(stderr: "Error: \(error)\n", exitCode: error.exitCode)
        }
    }

    /// Asks the daemon; without one, reads the status file it left (a daemon that died without cleaning
    /// up shows as "not running (stale status from …)"). Exit code 3 whenever no daemon answers, except
    /// for `--waybar`, whose bar wants a line and status 0 either way.
    package static func status(paths: RuntimePaths, format: StatusFormat, now: Date = Date()) -> ClientOutcome {
        let reading: StatusReading?
        var failure: ControlClientError?
        do {
            let response = try ControlClient(path: paths.socketPath).call("status")
            let value = try response.outcome.get()
            let status = try JSONDecoder.serviceDecoder.decode(ServiceStatus.self, from: JSONEncoder().encode(value))
            reading = StatusReading.evaluate(status, now: now)
        } catch let error as ControlClientError {
            failure = error
            reading = (try? StatusFile(path: paths.statusPath).read()).map { StatusReading.evaluate($0, now: now) }
        } catch {
            failure = .badReply(String(describing: error))
            reading = nil
        }
        var code: Int32 = failure.map { $0.exitCode } ?? 0
        // A daemon that died with its socket still open in a thread on its way out fails the call with a reset, not
        // a refusal: the status file's dead pid decides, and "not running" is always exit 3.
        if case .notRunning? = reading { code = 3 }
        switch (format, reading) {
        case (.waybar, let r?): return ClientOutcome(stdout: r.waybarLine + "\n")
        case (.waybar, nil):
            return ClientOutcome(stdout: #"{"class":"stopped","text":"Talk off","tooltip":"openclaw-talk is not running"}"# + "\n")
        case (.json, let r?):
            let data = (try? r.status.jsonData()) ?? Data()
            return ClientOutcome(stdout: String(decoding: data, as: UTF8.self) + "\n", exitCode: code)
        case (.text, let r?): return ClientOutcome(stdout: r.summary + "\n", exitCode: code)
        case (_, nil):
            return ClientOutcome(stderr: "\(failure.map { "\($0)" } ?? "openclaw-talk is not running")\n", exitCode: code)
        }
    }

    /// `events`: the current status, then (with `follow`) every event line until the daemon goes away.
    package static func events(paths: RuntimePaths, follow: Bool, emit: (String) -> Void) -> ClientOutcome {
        do {
            let client = try ControlClient(path: paths.socketPath)
            let first = try client.call(follow ? "events" : "status")
            if case .failure(let e) = first.outcome { return ClientOutcome(stderr: "Error: \(e.message)\n", exitCode: 1) }
            emit(String(decoding: ControlJSON.object(["event": .string("status"), "status": (try? first.outcome.get()) ?? .null])
                .line().dropLast(), as: UTF8.self))
            guard follow else { return ClientOutcome() }
            client.setReadTimeout(nil)
            while true {
                let line = try client.readLine()
                emit(String(decoding: line, as: UTF8.self))
            }
        } catch .connectionClosed {
            return ClientOutcome(stderr: "The daemon stopped.\n")
        } catch {
            return ClientOutcome(stderr: "Error: \(error)\n", exitCode: error.exitCode)
        }
    }
}
