import Foundation

/// Starts a private headless PulseAudio and waits for its own readiness: with `NOTIFY_SOCKET` set, pulseaudio
/// sends `READY=1` (sd_notify) once its modules are loaded and its socket listens. The wait ends on that event,
/// or at once with the server's log if the server exits first; its bound (`hangBound`) only catches a server
/// that hangs, however slowly a loaded machine starts many servers at once.
///
/// The server gets no session bus: pulseaudio claims `org.PulseAudio1` on the session bus it finds, and a second
/// server on the same bus exits with "D-Bus name org.PulseAudio1 already taken". DesktopNotifierTests sets
/// `DBUS_SESSION_BUS_ADDRESS` for the whole test process (libnotify reads it there), so servers started beside or
/// after it each saw the others' claim (CI's "did not answer within 10 s" in pass 1); on a desktop the user's
/// own PulseAudio holds the name.
package enum PulseAudioLauncher {
    /// Long enough for a 2-core machine running a build and eight suites beside the start (seen: well under 1 s
    /// idle); a server that has not said it is ready by then hangs.
    package static let hangBound: Duration = .seconds(90)

    /// Starts `/usr/bin/pulseaudio` with `arguments` in `directory` (which gets `runtime` and `home` below it as
    /// XDG_RUNTIME_DIR and HOME if missing, its log `pulse.log` and the notify socket), returns its pid once it
    /// is ready. Blocking: call it off the cooperative pool.
    package static func start(_ arguments: [String], in directory: String, environment base: [String: String]) throws -> pid_t {
        for sub in ["runtime", "home"] where !FileManager.default.fileExists(atPath: "\(directory)/\(sub)") {
            try FileManager.default.createDirectory(
                atPath: "\(directory)/\(sub)", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        let notifyPath = "\(directory)/notify-\(UUID().uuidString.prefix(8))"
        let listener = try NotifyListener(path: notifyPath)
        defer { listener.close() }
        var environment = base
        for name in ["PULSE_SERVER", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            environment[name] = nil
        }
        environment["XDG_RUNTIME_DIR"] = directory + "/runtime"
        environment["HOME"] = directory + "/home"
        environment["NOTIFY_SOCKET"] = notifyPath
        let log = directory + "/pulse.log"
        let pid = try ChildProcess.spawn("/usr/bin/pulseaudio", arguments, environment: environment, stderrPath: log)
        let deadline = ContinuousClock.now + hangBound
        while true {
            if listener.waitForReady(milliseconds: 200) { return pid }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw CommandFailure("the test PulseAudio exited (status \(status)) before it was ready; its log: \(Self.tail(of: log))")
            }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                ChildProcess.wait(pid)
                throw CommandFailure("the test PulseAudio did not say it was ready within \(hangBound) (hung); its log: \(Self.tail(of: log))")
            }
        }
    }

    private static func tail(of path: String) -> String {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(none)"
        return text.isEmpty ? "(empty)" : String(text.suffix(2000))
    }
}

/// The receiving end of sd_notify: a datagram socket at `path`.
private final class NotifyListener {
    private let fd: Int32
    private let path: String

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CommandFailure("socket failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw CommandFailure("notify socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let error = errno
            Glibc.close(fd)
            throw CommandFailure("bind \(path) failed: errno \(error)")
        }
    }

    /// True once a datagram holding `READY=1` arrived; waits up to `milliseconds` for one.
    func waitForReady(milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, milliseconds) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard n > 0 else { return false }
        return String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").contains("READY=1")
    }

    func close() {
        Glibc.close(fd)
        unlink(path)
    }
}
