import CSystemd

#if canImport(Glibc)
import Glibc
#endif

/// rtkit (RealtimeKit, the system bus's `org.freedesktop.RealtimeKit1`): the service through which a desktop
/// user's processes get realtime threads, as PulseAudio and PipeWire get theirs, where the account has neither
/// `CAP_SYS_NICE` nor an `RLIMIT_RTPRIO`. Talked to with libsystemd's sd-bus, one connection per request.
///
/// A request blocks the calling thread for D-Bus round trips (and rtkit's polkit check), so only the thread to be
/// made realtime makes it, once, as it starts: never a thread of the cooperative pool.
package struct RealtimeKitClient: Sendable {
    static let service = "org.freedesktop.RealtimeKit1"
    static let objectPath = "/org/freedesktop/RealtimeKit1"

    /// How long each of a request's three calls (two properties, the request) may block the asking thread, in µs: 2 s,
    /// room for the bus to start rtkit on first use and for rtkit to ask polkit (hundreds of ms on a cold desktop),
    /// while a hung bus delays the start of capture or playback by 6 s at most.
    package static let callTimeoutMicroseconds: UInt64 = 2_000_000

    package init() {}

    /// Makes the calling thread round-robin realtime at `wanted`, or at rtkit's `MaxRealtimePriority` if lower,
    /// having set `RLIMIT_RTTIME` first where rtkit needs it (`RealtimeKitRequest`). Returns the priority granted.
    package func makeCallingThreadRealtime(priority wanted: Int32) throws(RealtimeKitError) -> Int32 {
        let bus = try SystemBus()
        let maxPriority: Int32 = try bus.property("MaxRealtimePriority", type: "i", initial: 0)
        let maxTime: Int64 = try bus.property("RTTimeUSecMax", type: "x", initial: 0)
        let request = try RealtimeKitRequest(
            wanted: wanted, maxPriority: maxPriority, maxTimeMicroseconds: maxTime, current: Self.currentTimeLimit())
        if let limit = request.newTimeLimit {
            var value = rlimit(rlim_cur: rlim_t(limit.soft), rlim_max: rlim_t(limit.hard))
            guard setrlimit(Self.rtTime, &value) == 0 else { throw .timeLimitNotSet(errno: errno) }
        }
        try bus.makeThreadRealtime(thread: UInt64(csystemd_gettid()), priority: UInt32(request.priority))
        return request.priority
    }

    /// `RLIMIT_RTTIME` (glibc defines it as a macro for this enum case, which Swift does not import).
    static let rtTime = __rlimit_resource_t(__RLIMIT_RTTIME.rawValue)

    /// The process's `RLIMIT_RTTIME` (unlimited as `UInt64.max`).
    package static func currentTimeLimit() -> RealtimeKitRequest.TimeLimit {
        var value = rlimit()
        guard getrlimit(Self.rtTime, &value) == 0 else {
            return .init(soft: .max, hard: .max)
        }
        let unlimited = rlim_t(bitPattern: -1)
        return .init(soft: value.rlim_cur == unlimited ? .max : UInt64(value.rlim_cur),
                     hard: value.rlim_max == unlimited ? .max : UInt64(value.rlim_max))
    }
}

/// A connection to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else /run/dbus/system_bus_socket), closed when dropped.
private struct SystemBus: ~Copyable {
    private let bus: OpaquePointer

    init() throws(RealtimeKitError) {
        var opened: OpaquePointer?
        let result = sd_bus_open_system(&opened)
        guard result >= 0, let opened else { throw .noSystemBus(errno: -result) }
        bus = opened
        _ = sd_bus_set_method_call_timeout(bus, RealtimeKitClient.callTimeoutMicroseconds)
    }

    deinit { sd_bus_flush_close_unref(bus) }

    /// One of rtkit's properties, of D-Bus type `type` ("i": Int32, "x": Int64).
    func property<Value>(_ name: String, type: Character, initial: Value) throws(RealtimeKitError) -> Value {
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var value = initial
        let result = withUnsafeMutableBytes(of: &value) { bytes in
            sd_bus_get_property_trivial(
                bus, RealtimeKitClient.service, RealtimeKitClient.objectPath, RealtimeKitClient.service, name, &error,
                CChar(type.asciiValue ?? 0), bytes.baseAddress)
        }
        guard result >= 0 else { throw Self.failure(result, error) }
        return value
    }

    /// `MakeThreadRealtime(t thread, u priority)`: rtkit checks the thread belongs to the caller's process.
    func makeThreadRealtime(thread: UInt64, priority: UInt32) throws(RealtimeKitError) {
        var message: OpaquePointer?
        var result = sd_bus_message_new_method_call(
            bus, &message, RealtimeKitClient.service, RealtimeKitClient.objectPath, RealtimeKitClient.service,
            "MakeThreadRealtime")
        guard result >= 0, let message else { throw .failed(name: "sd_bus_message_new_method_call", message: Self.text(-result)) }
        defer { sd_bus_message_unref(message) }
        var thread = thread
        var priority = priority
        result = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "t")), &thread)
        if result >= 0 { result = sd_bus_message_append_basic(message, CChar(UInt8(ascii: "u")), &priority) }
        guard result >= 0 else { throw .failed(name: "sd_bus_message_append_basic", message: Self.text(-result)) }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        result = sd_bus_call(bus, message, 0, &error, &reply)
        if let reply { sd_bus_message_unref(reply) }
        guard result >= 0 else { throw Self.failure(result, error) }
    }

    /// A failed call as the log says it: rtkit absent or refusing by the D-Bus error's name, a bus that went away
    /// (or never authenticated) as no bus.
    private static func failure(_ result: Int32, _ error: sd_bus_error) -> RealtimeKitError {
        guard let cName = error.name else {
            let code = -result
            return [ENOENT, ECONNREFUSED, ECONNRESET, ENOTCONN, EACCES, EPERM].contains(code)
                ? .noSystemBus(errno: code) : .failed(name: "errno", message: text(code))
        }
        let name = String(cString: cName)
        let message = error.message.map { String(cString: $0) } ?? ""
        switch name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner": return .notRunning
        case "org.freedesktop.DBus.Error.AccessDenied": return .refused(message: message)
        default: return .failed(name: name, message: message)
        }
    }

    private static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}
