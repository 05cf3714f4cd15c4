import CPulse

/// A libpulse threaded mainloop: one thread that runs every PulseAudio callback of its owner.
///
/// Every C handle created on this loop (context, stream, timer) is touched only on the loop thread or with
/// the loop's own lock held (`withLock`), which is the rule libpulse sets for threaded mainloops. That lock,
/// not a Swift one, is what makes sharing the wrapper between tasks safe, hence `@unchecked Sendable`.
final class PulseMainloop: @unchecked Sendable {
    private let handle: OpaquePointer
    private var running = true
    /// The vtable contexts and timers are created against.
    let api: UnsafeMutablePointer<pa_mainloop_api>

    /// Creates the loop and starts its thread.
    init(name: String) throws(PulseError) {
        guard let handle = pa_threaded_mainloop_new(), let api = pa_threaded_mainloop_get_api(handle) else {
            throw PulseError.internalFailure(what: "pa_threaded_mainloop_new returned NULL (out of memory?)")
        }
        pa_threaded_mainloop_set_name(handle, name)
        guard pa_threaded_mainloop_start(handle) == 0 else {
            pa_threaded_mainloop_free(handle)
            throw PulseError.internalFailure(what: "could not start the PulseAudio mainloop thread")
        }
        self.handle = handle
        self.api = api
    }

    /// Runs `body` with the loop locked (or directly when already on the loop thread, where it is held).
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if pa_threaded_mainloop_in_thread(handle) != 0 { return try body() }
        pa_threaded_mainloop_lock(handle)
        defer { pa_threaded_mainloop_unlock(handle) }
        return try body()
    }

    /// Stops the thread and frees the loop. The owner must have released its contexts under the lock first.
    /// Must not be called from the loop thread; later calls do nothing.
    func shutdown() {
        guard running else { return }
        running = false
        pa_threaded_mainloop_stop(handle)
        pa_threaded_mainloop_free(handle)
    }
}
