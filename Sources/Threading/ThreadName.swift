#if canImport(Glibc)
import Glibc
#endif

/// What the system lists for a thread (`/proc/<pid>/task/<tid>/comm`, `top -H`, a debugger): each thread this
/// process starts names itself, so thread sampling can tell the loop's threads from the cooperative pool's.
package enum ThreadName {
    /// The longest name Linux keeps for a thread (TASK_COMM_LEN less its terminating zero).
    package static let maximumBytes = 15

    /// Gives the calling thread `name`, cut to `maximumBytes`. Not through Foundation's `Thread.name`: on Linux it
    /// reaches the system only when set on the running thread after `start()` has stored the thread's handle, a race
    /// the new thread often wins, and set before `start()` it never does; such a thread keeps the name of the one that
    /// made it (a pool thread's, or the process's).
    package static func nameCallingThread(_ name: String) {
        let file = open("/proc/thread-self/comm", O_WRONLY)
        guard file >= 0 else { return }
        defer { close(file) }
        let bytes = Array(name.utf8.prefix(maximumBytes))
        _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
    }

    /// The calling thread's name as the system lists it.
    package static func ofCallingThread() -> String {
        let file = open("/proc/thread-self/comm", O_RDONLY)
        guard file >= 0 else { return "" }
        defer { close(file) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: buffer.prefix(count), as: UTF8.self).trimmingSuffix("\n")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
