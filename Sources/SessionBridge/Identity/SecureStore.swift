import Foundation

/// Reads and writes small files with owner-only permissions: a 0700 folder holding 0600 files,
/// written atomically (temporary file, fsync, rename) so a crash never leaves half a key on disk.
package enum SecureStore {
    /// Creates `path` (and parents) as a 0700 folder; tightens a looser existing folder we own,
    /// refuses one owned by someone else or one that is not a folder.
    package static func preparePrivateDirectory(_ path: String) throws(StorageError) {
        try makeDirectories(path, mode: 0o700)
        var st = stat()
        guard lstat(path, &st) == 0 else { throw .io(path: path, errno: errno) }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw .notADirectory(path) }
        guard st.st_uid == geteuid() else { throw .wrongOwner(path: path, uid: st.st_uid) }
        if st.st_mode & 0o077 != 0 {
            guard chmod(path, 0o700) == 0 else { throw .looserPermissions(path: path, mode: st.st_mode & 0o777) }
        }
    }

    /// Creates `path` (and parents) as an ordinary folder, for settings that are not secret.
    package static func prepareDirectory(_ path: String) throws(StorageError) {
        try makeDirectories(path, mode: 0o755)
    }

    /// The file's bytes, or nil when it does not exist. A secret file readable by others is tightened to
    /// 0600 first; a symbolic link or a file owned by someone else is refused.
    package static func readPrivateFile(_ path: String) throws(StorageError) -> [UInt8]? {
        var st = stat()
        if lstat(path, &st) != 0 {
            if errno == ENOENT { return nil }
            throw .io(path: path, errno: errno)
        }
        guard st.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile(path) }
        guard st.st_uid == geteuid() else { throw .wrongOwner(path: path, uid: st.st_uid) }
        if st.st_mode & 0o077 != 0 {
            guard chmod(path, 0o600) == 0 else { throw .looserPermissions(path: path, mode: st.st_mode & 0o777) }
        }
        return try readFile(path)
    }

    /// Replaces the file atomically with `bytes`, mode `mode` (0600 for secrets).
    package static func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws(StorageError) {
        let temp = path + ".tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw .io(path: temp, errno: errno) }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                let e = errno
                close(fd)
                unlink(temp)
                throw .io(path: temp, errno: e)
            }
            written += n
        }
        fchmod(fd, mode)
        fsync(fd)
        close(fd)
        guard rename(temp, path) == 0 else {
            let e = errno
            unlink(temp)
            throw .io(path: path, errno: e)
        }
    }

    /// The file's bytes, or nil when it does not exist.
    package static func readFile(_ path: String) throws(StorageError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .io(path: path, errno: errno)
        }
        defer { close(fd) }
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, errno: errno)
            }
            if n == 0 { return out }
            out += chunk[0..<n]
            if out.count > 1 << 20 { throw .tooLarge(path) }
        }
    }

    private static func makeDirectories(_ path: String, mode: mode_t) throws(StorageError) {
        var prefix = ""
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + part
            if mkdir(prefix, prefix == path || prefix + "/" == path ? mode : 0o755) != 0, errno != EEXIST {
                throw .io(path: prefix, errno: errno)
            }
        }
    }
}

/// A failure reading or writing openclaw-talk's own files.
package enum StorageError: Error, Equatable, CustomStringConvertible {
    case io(path: String, errno: Int32)
    case notADirectory(String)
    case notARegularFile(String)
    case wrongOwner(path: String, uid: uid_t)
    case looserPermissions(path: String, mode: mode_t)
    case tooLarge(String)
    case damaged(path: String, reason: String)

    package var description: String {
        switch self {
        case .io(let path, let e):
            "Could not access \(path): \(String(cString: strerror(e))). Check that the folder exists and is writable."
        case .notADirectory(let p): "\(p) should be a folder but is not; move it away and try again."
        case .notARegularFile(let p): "\(p) should be a plain file (not a link or folder); move it away and try again."
        case .wrongOwner(let p, let uid):
            "\(p) belongs to user \(uid), not to you; openclaw-talk keeps secrets only in files you own."
        case .looserPermissions(let p, let mode):
            "\(p) has permissions \(String(mode, radix: 8)) and could not be restricted to the owner; run chmod go-rwx on it."
        case .tooLarge(let p): "\(p) is larger than 1 MiB, which no openclaw-talk file is; it is not ours or is damaged."
        case .damaged(let p, let reason): "\(p) is damaged (\(reason)); remove it to start over."
        }
    }
}
