import CLibNotify
import Foundation
import Threading

/// The one thread that talks to libnotify: it runs a GLib main loop on a context of its own, so the D-Bus calls
/// (`notify_notification_show` blocks on the session bus) never run on the cooperative pool and the "action" and
/// "closed" signals are delivered here. Work reaches it through `g_main_context_invoke`.
final class GLibThread: @unchecked Sendable {
    private let context: OpaquePointer
    private let loop: OpaquePointer
    private let started = DispatchSemaphore(value: 0)

    init(name: String) {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        let handles = Handles(context: context, loop: loop)
        let started = started
        NamedThread.start(name) {
            g_main_context_push_thread_default(handles.context)
            started.signal()
            g_main_loop_run(handles.loop)
            g_main_context_pop_thread_default(handles.context)
        }
        started.wait()
    }

    /// Runs `work` on the thread and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let box = Unmanaged.passRetained(WorkBox { continuation.resume(returning: work()) })
            g_main_context_invoke(context, { data in
                let box = Unmanaged<WorkBox>.fromOpaque(data!).takeRetainedValue()
                box.work()
                return 0   // G_SOURCE_REMOVE
            }, box.toOpaque())
        }
    }

    /// Runs `work` on the thread and waits for it (setup only, never from the cooperative pool's hot paths).
    func runSync<T>(_ work: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        var result: T?
        let box = Unmanaged.passRetained(WorkBox {
            result = work()
            done.signal()
        })
        g_main_context_invoke(context, { data in
            Unmanaged<WorkBox>.fromOpaque(data!).takeRetainedValue().work()
            return 0
        }, box.toOpaque())
        done.wait()
        return result!
    }

    /// GLib's handles, which the loop thread uses and GLib makes safe to share.
    private struct Handles: @unchecked Sendable {
        let context: OpaquePointer
        let loop: OpaquePointer
    }

    private final class WorkBox: @unchecked Sendable {
        let work: () -> Void
        init(_ work: @escaping () -> Void) { self.work = work }
    }
}
