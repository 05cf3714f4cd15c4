import CLibNotify
import Foundation

/// Re-encodes an image that is over a Gateway's attachment limit as a smaller JPEG, as the iOS share extension's
/// `ShareImageProcessor` does (long edge at most 2560 px, quality 0.9 stepped down to 0.35, then smaller), with
/// gdk-pixbuf on a thread of its own (decoding a photo takes tens of milliseconds of CPU).
package enum ImageShrinker {
    package struct Settings: Sendable {
        package var maxLongEdge = 2560
        package var qualities = [90, 80, 70, 60, 50, 35]
        /// Each further round scales by this much, down to `minLongEdge`.
        package var scaleStep = 0.75
        package var minLongEdge = 320
        package init() {}
    }

    package enum ShrinkError: Error, Equatable, CustomStringConvertible {
        case unreadable(String)
        case cannotFit(bytes: Int)
        package var description: String {
            switch self {
            case .unreadable(let why): "the image could not be read: \(why)"
            case .cannotFit(let bytes): "the image does not fit in \(bytes) bytes even at \(Settings().minLongEdge) px"
            }
        }
    }

    /// A JPEG of at most `maxBytes`, or an error. Runs on a new thread.
    package static func shrink(_ data: [UInt8], toAtMost maxBytes: Int, settings: Settings = Settings()) async throws(ShrinkError) -> [UInt8] {
        let result: Result<[UInt8], ShrinkError> = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: shrinkNow(data, maxBytes: maxBytes, settings: settings)) }
            thread.name = "image-shrink"
            thread.start()
        }
        return try result.get()
    }

    static func shrinkNow(_ data: [UInt8], maxBytes: Int, settings: Settings) -> Result<[UInt8], ShrinkError> {
        guard let loader = gdk_pixbuf_loader_new() else { return .failure(.unreadable("no image loader")) }
        defer { clibnotify_loader_unref(loader) }
        var error: UnsafeMutablePointer<GError>?
        var closeError: UnsafeMutablePointer<GError>?
        let wrote = data.withUnsafeBufferPointer { gdk_pixbuf_loader_write(loader, $0.baseAddress, gsize($0.count), &error) }
        let closed = gdk_pixbuf_loader_close(loader, &closeError)
        defer { [error, closeError].forEach { if let e = $0 { g_error_free(e) } } }
        guard wrote != 0, closed != 0, let loaded = gdk_pixbuf_loader_get_pixbuf(loader) else {
            let why = (error ?? closeError).map { String(cString: $0.pointee.message) } ?? "not an image gdk-pixbuf reads"
            return .failure(.unreadable(why))
        }
        // The camera's orientation applied, and transparency flattened onto white (JPEG has none).
        guard let oriented = gdk_pixbuf_apply_embedded_orientation(loaded) else { return .failure(.unreadable("orientation")) }
        defer { clibnotify_pixbuf_unref(oriented) }
        let width = Int(gdk_pixbuf_get_width(oriented)), height = Int(gdk_pixbuf_get_height(oriented))
        guard width > 0, height > 0 else { return .failure(.unreadable("empty image")) }
        var longEdge = min(max(width, height), settings.maxLongEdge)
        while true {
            let scale = Double(longEdge) / Double(max(width, height))
            let w = max(1, Int((Double(width) * scale).rounded())), h = max(1, Int((Double(height) * scale).rounded()))
            guard let flat = gdk_pixbuf_new(GDK_COLORSPACE_RGB, 0, 8, Int32(w), Int32(h)) else { return .failure(.unreadable("memory")) }
            defer { clibnotify_pixbuf_unref(flat) }
            gdk_pixbuf_fill(flat, 0xFFFF_FFFF)
            gdk_pixbuf_composite(oriented, flat, 0, 0, Int32(w), Int32(h), 0, 0, scale, scale, GDK_INTERP_BILINEAR, 255)
            for quality in settings.qualities {
                var buffer: UnsafeMutablePointer<gchar>?
                var size: gsize = 0
                guard clibnotify_save_jpeg(flat, Int32(quality), &buffer, &size) != 0, let buffer else {
                    return .failure(.unreadable("JPEG encoding failed"))
                }
                defer { clibnotify_free_string(buffer) }
                if Int(size) <= maxBytes {
                    return .success(Array(UnsafeBufferPointer(start: UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: Int(size))))
                }
            }
            if longEdge <= settings.minLongEdge { return .failure(.cannotFit(bytes: maxBytes)) }
            longEdge = max(settings.minLongEdge, Int(Double(longEdge) * settings.scaleStep))
        }
    }
}
