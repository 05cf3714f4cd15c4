import CPulse
import TalkLogging

/// Asynchronous server queries (default devices, source and sink lists) on a ready context.
/// Completions run on the loop thread; call these only there or with the loop locked.
enum PulseIntrospection {
    /// The names the server currently uses as default sink and source.
    struct Defaults {
        var sink: String?
        var source: String?
    }

    private final class Collector<Item> {
        var items: [Item] = []
        let done: ([Item]) -> Void
        init(done: @escaping ([Item]) -> Void) { self.done = done }
    }

    static func defaults(_ context: OpaquePointer, completion: @escaping (Defaults) -> Void) {
        let box = Collector<Defaults>(done: { completion($0.first ?? Defaults()) })
        let op = pa_context_get_server_info(context, { _, info, userdata in
            guard let userdata else { return }
            let box = Unmanaged<Collector<Defaults>>.fromOpaque(userdata).takeRetainedValue()
            // PipeWire's Pulse server names a default it does not have yet (WirePlumber picks the defaults a
            // moment after the server starts) "@DEFAULT_SINK@" / "@DEFAULT_SOURCE@"; PulseAudio gives none.
            func name(_ value: UnsafePointer<CChar>?) -> String? {
                value.map { String(cString: $0) }.flatMap { $0.hasPrefix("@DEFAULT_") && $0.hasSuffix("@") ? nil : $0 }
            }
            let defaults = info.map { Defaults(sink: name($0.pointee.default_sink_name), source: name($0.pointee.default_source_name)) }
            box.done(defaults.map { [$0] } ?? [])
        }, Unmanaged.passRetained(box).toOpaque())
        finish(op, box)
    }

    /// Every device of one kind, with `isDefault` left false (see `defaults`).
    static func devices(_ kind: PulseDeviceKind, _ context: OpaquePointer, completion: @escaping ([PulseDevice]) -> Void) {
        let box = Collector<PulseDevice>(done: completion)
        let userdata = Unmanaged.passRetained(box).toOpaque()
        let op: OpaquePointer?
        switch kind {
        case .sink:
            op = pa_context_get_sink_info_list(context, { _, info, eol, userdata in
                guard let userdata else { return }
                let box = Unmanaged<Collector<PulseDevice>>.fromOpaque(userdata)
                if let i = info?.pointee {
                    box.takeUnretainedValue().items.append(
                        PulseIntrospection.device(.sink, i.name, i.description, i.sample_spec, monitorOf: nil))
                }
                if eol != 0 { let c = box.takeRetainedValue(); c.done(c.items) }
            }, userdata)
        case .source:
            op = pa_context_get_source_info_list(context, { _, info, eol, userdata in
                guard let userdata else { return }
                let box = Unmanaged<Collector<PulseDevice>>.fromOpaque(userdata)
                if let i = info?.pointee {
                    box.takeUnretainedValue().items.append(
                        PulseIntrospection.device(.source, i.name, i.description, i.sample_spec, monitorOf: i.monitor_of_sink_name))
                }
                if eol != 0 { let c = box.takeRetainedValue(); c.done(c.items) }
            }, userdata)
        }
        finish(op, box)
    }

    /// The sink named `name` while it exists, else the server's default (by name, so events can say which);
    /// nil for no name gives the default too.
    static func sink(named name: String?, _ context: OpaquePointer, logger: Logger, completion: @escaping (String?) -> Void) {
        defaults(context) { defaults in
            guard let name else {
                completion(defaults.sink)
                return
            }
            devices(.sink, context) { sinks in
                if sinks.contains(where: { $0.name == name }) {
                    completion(name)
                } else {
                    logger.info("Sink is gone; playing to the default sink", metadata: ["audio.device": "\(name)"])
                    completion(defaults.sink)
                }
            }
        }
    }

    /// When the request could not even be sent the callback never runs: answer empty and drop the box.
    private static func finish<Item>(_ op: OpaquePointer?, _ box: Collector<Item>) {
        if let op {
            pa_operation_unref(op)
        } else {
            Unmanaged.passUnretained(box).release()
            box.done([])
        }
    }

    private static func device(
        _ kind: PulseDeviceKind, _ name: UnsafePointer<CChar>?, _ description: UnsafePointer<CChar>?,
        _ spec: pa_sample_spec, monitorOf: UnsafePointer<CChar>?
    ) -> PulseDevice {
        PulseDevice(
            kind: kind, name: name.map { String(cString: $0) } ?? "",
            description: description.map { String(cString: $0) } ?? "",
            sampleFormat: pa_sample_format_to_string(spec.format).map { String(cString: $0) } ?? "unknown",
            sampleRate: Int(spec.rate), channels: Int(spec.channels), isDefault: false,
            monitorOfSink: monitorOf.map { String(cString: $0) })
    }
}
