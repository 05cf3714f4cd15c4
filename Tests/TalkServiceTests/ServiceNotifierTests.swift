import Foundation
import Glibc
import TalkTestSupport
import Testing
@testable import TalkService

/// The daemon's sd_notify messages, received on a NOTIFY_SOCKET of the test's own, as systemd would.
/// One test, since NOTIFY_SOCKET is process-wide.
@Suite struct ServiceNotifierTests {
    @Test func readyStatusReloadingAndWatchdogReachTheNotifySocket() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/notify"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        let bound = try UnixSocket.withAddress(path) { bind(fd, $0, $1) }
        #expect(bound == 0)
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        func receive() -> String {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            return n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : "(nothing: \(String(cString: strerror(errno))))"
        }

        let notifier = ServiceNotifier()
        unsetenv("NOTIFY_SOCKET")
        #expect(notifier.ready() == false, "without systemd nothing is sent")
        #expect(notifier.watchdogInterval() == nil)

        setenv("NOTIFY_SOCKET", path, 1)
        setenv("WATCHDOG_USEC", "30000000", 1)
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        defer { unsetenv("NOTIFY_SOCKET"); unsetenv("WATCHDOG_USEC"); unsetenv("WATCHDOG_PID") }

        #expect(notifier.ready(status: "listening,\nconnected"))
        #expect(receive() == "READY=1\nSTATUS=listening, connected")
        #expect(notifier.status("reconnecting (retry in 4 s)"))
        #expect(receive() == "STATUS=reconnecting (retry in 4 s)")
        #expect(notifier.reloading())
        let reloading = receive()
        #expect(reloading.hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        #expect(UInt64(reloading.split(separator: "=").last ?? "") ?? 0 > 0)
        #expect(notifier.watchdog())
        #expect(receive() == "WATCHDOG=1")
        #expect(notifier.stopping())
        #expect(receive() == "STOPPING=1")
        #expect(notifier.watchdogInterval() == .seconds(15))
    }
}

@Suite struct UserServiceInstallerTests {
    @Test func theInstalledUnitIsTheRepositorysWithTheBinaryFilledIn() throws {
        let folder = try TemporaryFolder()
        let lines = try UserServiceInstaller.install(
            binary: "/opt/bin/openclaw-talk", environment: ["HOME": folder.path, "USER": "ada"])
        let path = folder.path + "/.config/systemd/user/openclaw-talk.service"
        let written = try String(contentsOfFile: path, encoding: .utf8)
        let repository = try String(contentsOfFile: TestInputs.packageRoot + "/contrib/systemd/openclaw-talk.service",
                                    encoding: .utf8)
        #expect(written == repository.replacingOccurrences(of: "@BINARY@", with: "\"/opt/bin/openclaw-talk\""))
        for needle in ["Type=notify", "WatchdogSec=", "Restart=on-failure", "ExecStart=\"/opt/bin/openclaw-talk\" run"] {
            #expect(written.contains(needle))
        }
        #expect(lines[0] == "Wrote \(path)")
        #expect(lines.contains { $0.contains("systemctl --user enable --now openclaw-talk") })
        #expect(lines.contains { $0.contains("loginctl enable-linger ada") })
    }
}
