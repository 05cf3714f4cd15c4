import Foundation

/// Reads and writes small files with owner-only permissions: a 0700 folder holding 0600 files,
/// written atomically (a temporary file with an unpredictable name, fsync, rename, fsync of the folder)
/// so a crash never leaves half a key on disk. Like `ssh`, it refuses what it cannot trust instead of
/// repairing it: a secret readable by others, a link in place of a secret, a folder on the way that
/// someone else could write to.
package enum SecureStore {
    /// Creates `path` (and parents) as a 0700 folder; tightens a looser existing folder we own,
    /// refuses one owned by someone else, one that is not a folder, or one under a folder others may write.
    package static func preparePrivateDirectory(_ path: String) throws(StorageError) {
        try makeDirectories(path, mode: 0o700)
        try checkFolders(above: path)
        var st = stat()
        guard lstat(path, &st) == 0 else { throw .io(path: path, errno: errno) }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw .notADirectory(path) }
        guard st.st_uid == geteuid() else { throw .wrongOwner(path: path, uid: st.st_uid) }
        if st.st_mode & 0o077 != 0 {
            // Our own folder: tightening it hides nothing that was ever readable through a secret file,
            // since each of those is refused on its own when it is looser than 0600.
            guard chmod(path, 0o700) == 0 else { throw .looserPermissions(path: path, mode: st.st_mode & 0o777) }
        }
    }

    /// Creates `path` (and parents) as an ordinary folder, for settings that are not secret.
    package static func prepareDirectory(_ path: String) throws(StorageError) {
        try makeDirectories(path, mode: 0o755)
    }

    /// The file's bytes, or nil when it does not exist. Opened without following links; refused when it
    /// is not a plain file we own, when group or others may read or write it (as `ssh` refuses such a
    /// private key), or when a folder above it could be changed by someone else.
    package static func readPrivateFile(_ path: String) throws(StorageError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            switch errno {
            case ENOENT: return nil
            case ELOOP: throw .notARegularFile(path)
            default: throw .io(path: path, errno: errno)
            }
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .io(path: path, errno: errno) }
        guard st.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile(path) }
        guard st.st_uid == geteuid() else { throw .wrongOwner(path: path, uid: st.st_uid) }
        guard st.st_mode & 0o077 == 0 else { throw .readableByOthers(path: path, mode: st.st_mode & 0o777) }
        try checkFolders(above: path)
        return try readAll(fd, path: path)
    }

    /// Replaces the file atomically with `bytes`, mode `mode` (0600 for secrets).
    package static func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws(StorageError) {
        // An unpredictable name, created exclusively and never through a link: no one can plant the
        // temporary file in advance or point it elsewhere.
        let temp = path + ".tmp-" + Digest.hex(Digest.randomBytes(8))
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw .io(path: temp, errno: errno) }
        func fail(_ e: Int32, _ where: String) -> StorageError {
            close(fd)
            unlink(temp)
            return .io(path: `where`, errno: e)
        }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail(errno, temp)
            }
            written += n
        }
        // The umask may have narrowed the mode; fchmod sets exactly `mode`.
        guard fchmod(fd, mode) == 0 else { throw fail(errno, temp) }
        guard fsync(fd) == 0 else { throw fail(errno, temp) }
        guard close(fd) == 0 else {
            let e = errno
            unlink(temp)
            throw .io(path: temp, errno: e)
        }
        guard rename(temp, path) == 0 else {
            let e = errno
            unlink(temp)
            throw .io(path: path, errno: e)
        }
        try syncFolder(of: path)
    }

    /// The file's bytes, or nil when it does not exist (settings that are not secret).
    package static func readFile(_ path: String) throws(StorageError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .io(path: path, errno: errno)
        }
        defer { close(fd) }
        return try readAll(fd, path: path)
    }

    private static func readAll(_ fd: Int32, path: String) throws(StorageError) -> [UInt8] {
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

    /// Makes the rename durable: the folder entry is on disk, not only the file's blocks.
    private static func syncFolder(of path: String) throws(StorageError) {
        let folder = (path as NSString).deletingLastPathComponent
        let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: folder, errno: errno) }
        defer { close(fd) }
        // Some file systems cannot sync a folder (EINVAL); that says nothing about our data.
        guard fsync(fd) == 0 || errno == EINVAL else { throw .io(path: folder, errno: errno) }
    }

    /// Every folder from `/` down to the one holding `path` (or `path` itself when it is a folder) must
    /// belong to us or to root, and must not be writable by group or others unless it is a root-owned
    /// sticky folder such as /tmp: otherwise someone else could swap a file or folder on the way.
    static func checkFolders(above path: String) throws(StorageError) {
        var prefix = ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        for part in parts.dropLast() {
            prefix += "/" + part
            var st = stat()
            guard stat(prefix, &st) == 0 else { throw .io(path: prefix, errno: errno) }
            guard st.st_uid == geteuid() || st.st_uid == 0 else { throw .wrongOwner(path: prefix, uid: st.st_uid) }
            let sharedSticky = st.st_uid == 0 && st.st_mode & S_ISVTX != 0
            if st.st_mode & 0o022 != 0, !sharedSticky {
                throw .writableByOthers(path: prefix, mode: st.st_mode & 0o7777)
            }
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
    /// A secret file group or others may read: refused, not repaired, as `ssh` refuses such a key.
    case readableByOthers(path: String, mode: mode_t)
    /// A folder above our files that others may write to.
    case writableByOthers(path: String, mode: mode_t)
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
        case .readableByOthers(let p, let mode):
            "Permissions \(String(mode, radix: 8)) for \(p) are too open: others may have read this secret. "
                + "It is not used. If no one else could have, run 'chmod 600 \(p)'; otherwise remove it and run setup again."
        case .writableByOthers(let p, let mode):
            "\(p) (permissions \(String(mode, radix: 8))) may be changed by other users, so the secrets below it "
                + "cannot be trusted; run 'chmod go-w \(p)'."
        case .tooLarge(let p): "\(p) is larger than 1 MiB, which no openclaw-talk file is; it is not ours or is damaged."
        case .damaged(let p, let reason): "\(p) is damaged (\(reason)); remove it to start over."
        }
    }
}
