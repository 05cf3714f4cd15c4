import Foundation
import Glibc

/// Recordings hold what the microphone heard and what was said back: each is created owner-only (0600) whatever
/// the umask, an older file of that name is made 0600 too, and a link in its place is not followed.
package enum PrivateFile {
    /// Opens `path` for writing, truncated, mode 0600; the caller owns (and closes) the descriptor.
    package static func create(_ path: String) throws(WAVError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
        guard fchmod(fd, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .unwritable(path: path, reason: reason)
        }
        return fd
    }

    /// Writes all of `bytes` to `fd`.
    package static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return false }
        }
        return true
    }

    /// Replaces `path` with `data`, owner-only.
    package static func write(_ data: Data, to path: String) throws(WAVError) {
        let fd = try create(path)
        defer { close(fd) }
        let written = data.withUnsafeBytes { write(fd, $0) }
        guard written else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
    }
}
