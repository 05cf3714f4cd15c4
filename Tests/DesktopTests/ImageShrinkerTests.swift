import Foundation
import Testing

@testable import Desktop

/// Re-encoding an image over a Gateway's limit, with gdk-pixbuf.
struct ImageShrinkerTests {
    /// A binary PPM (P6) of noise: large as JPEG too, so the shrinker has to work for it.
    static func noise(width: Int, height: Int) -> [UInt8] {
        var state: UInt64 = 42
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for i in pixels.indices {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            pixels[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        return Array("P6\n\(width) \(height)\n255\n".utf8) + pixels
    }

    @Test func `an image over the limit becomes a JPEG under it`() async throws {
        let image = Self.noise(width: 1200, height: 800)
        let jpeg = try await ImageShrinker.shrink(image, toAtMost: 150_000)
        #expect(jpeg.count <= 150_000)
        #expect(jpeg.starts(with: [0xFF, 0xD8, 0xFF]))
        // Still an image: it decodes again.
        let again = try await ImageShrinker.shrink(jpeg, toAtMost: 150_000)
        #expect(again.starts(with: [0xFF, 0xD8, 0xFF]))
    }

    @Test func `a file that is no image is refused, not sent`() async throws {
        await #expect(throws: ImageShrinker.ShrinkError.self) {
            _ = try await ImageShrinker.shrink(Array("not an image at all".utf8), toAtMost: 1000)
        }
    }
}
