import Foundation

/// Starts the threads this process keeps outside the cooperative pool (socket I/O, espeak-ng, the control socket,
/// GLib's loop, decoding), each named as the system lists it.
package enum NamedThread {
    /// Starts a thread that names itself `name` (`ThreadName`) and runs `body`.
    package static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            ThreadName.nameCallingThread(name)
            body()
        }
        thread.name = name
        thread.start()
    }
}
