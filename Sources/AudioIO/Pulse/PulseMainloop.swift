import CPulse
import Glibc
import Synchronization
import TalkLogging
import Threading

/// A libpulse threaded mainloop: one thread that runs every PulseAudio callback of its owner.
///
/// Every C handle created on this loop (context, stream, timer) is touched only on the loop thread or with
/// the loop's own lock held (`withLock`), which is the rule libpulse sets for threaded mainloops. That lock,
/// not a Swift one, is what makes sharing the wrapper between tasks safe, hence `@unchecked Sendable`.
final class PulseMainloop: @unchecked Sendable {
    private let handle: OpaquePointer
    private let running = Atomic(true)
    /// The vtable contexts and timers are created against.
    let api: UnsafeMutablePointer<pa_mainloop_api>
    /// The loop thread's name as the system lists it.
    let name: String

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
        self.name = name
    }

    /// Moves the loop thread to realtime where the kernel or rtkit allows it (`AudioThreadPriority`): the loop refills
    /// playback and reads capture every 10-20 ms, which must not wait behind the desktop's busy threads. `report` hears
    /// the outcome on the loop thread, where it was asked without the loop's lock (rtkit's D-Bus round trip blocks only
    /// that thread). Not from the loop thread.
    func raiseThreadPriority(logger: Logger) {
        raiseThreadPriority { [name] outcome in AudioThreadPriority.log(outcome, thread: name, logger: logger) }
    }

    func raiseThreadPriority(then report: @escaping @Sendable (AudioThreadPriority.Outcome) -> Void) {
        let box = Unmanaged.passRetained(PriorityRequest(report)).toOpaque()
        withLock {
            pa_threaded_mainloop_once_unlocked(handle, { _, userdata in
                guard let userdata else { return }
                Unmanaged<PriorityRequest>.fromOpaque(userdata).takeRetainedValue().report(AudioThreadPriority.raiseCallingThread())
            }, box)
        }
    }

    private final class PriorityRequest {
        let report: @Sendable (AudioThreadPriority.Outcome) -> Void
        init(_ report: @escaping @Sendable (AudioThreadPriority.Outcome) -> Void) { self.report = report }
    }

    /// Runs `body` with the loop locked (or directly when already on the loop thread, where it is held).
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if pa_threaded_mainloop_in_thread(handle) != 0 { return try body() }
        pa_threaded_mainloop_lock(handle)
        defer { pa_threaded_mainloop_unlock(handle) }
        return try body()
    }

    /// Arms a one-shot timer calling `callback` with `userdata` after `delay`. Loop thread or lock only;
    /// free it with `removeTimer` once fired or no longer wanted.
    func addTimer(after delay: Duration, userdata: UnsafeMutableRawPointer, _ callback: pa_time_event_cb_t) -> OpaquePointer? {
        let usec = pa_usec_t(max(0, delay / .microseconds(1)))
        return shim_pa_timer_new(api, usec, callback, userdata)
    }

    func removeTimer(_ timer: OpaquePointer) {
        shim_pa_timer_free(api, timer)
    }

    /// Runs `release` under the lock (to drop contexts and streams), then stops the thread. The loop itself is
    /// freed with this object, so a late `withLock` stays harmless. Must not be called from the loop thread;
    /// only the first call does anything.
    func shutdown(releasing release: () -> Void = {}) {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        pa_threaded_mainloop_lock(handle)
        release()
        pa_threaded_mainloop_unlock(handle)
        pa_threaded_mainloop_stop(handle)
    }

    deinit {
        shutdown()
        pa_threaded_mainloop_free(handle)
    }
}
