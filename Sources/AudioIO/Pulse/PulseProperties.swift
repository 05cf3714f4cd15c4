import CPulse

/// The properties every openclaw-talk context and stream carries, so desktop mixers show the right name and
/// echo-cancel / ducking modules treat the streams as a phone call.
enum PulseProperties {
    static let applicationName = "openclaw-talk"
    static let applicationID = "ai.openclaw.talk"
    static let mediaRole = "phone"

    /// A new proplist; the caller frees it with `pa_proplist_free`.
    static func make(mediaName: String? = nil) -> OpaquePointer {
        // libpulse aborts on allocation failure rather than returning NULL, so the IUO is always set.
        let props: OpaquePointer = pa_proplist_new()
        pa_proplist_sets(props, "application.name", applicationName)
        pa_proplist_sets(props, "application.id", applicationID)
        pa_proplist_sets(props, "media.role", mediaRole)
        if let mediaName { pa_proplist_sets(props, "media.name", mediaName) }
        return props
    }
}
