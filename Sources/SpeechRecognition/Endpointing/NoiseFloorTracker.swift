/// A running estimate of the background level: it follows a quieter room almost at once and a louder one
/// slowly, so speech raises it little while a fan switched on is learnt within seconds.
package struct NoiseFloorTracker: Sendable, Equatable {
    /// The estimate in dBFS; nil until the first frame.
    package private(set) var floorDb: Double?
    private let risePerFrame: Double
    private let riseInSpeechPerFrame: Double
    /// Share of the distance to a quieter frame covered per frame (about 60 ms time constant).
    private let fallFraction = 0.3

    package init(riseDbPerSecond: Double, riseInSpeechDbPerSecond: Double) {
        risePerFrame = riseDbPerSecond / 50
        riseInSpeechPerFrame = riseInSpeechDbPerSecond / 50
    }

    package mutating func update(levelDb: Double, inSpeech: Bool) {
        guard let floor = floorDb else {
            floorDb = levelDb
            return
        }
        if levelDb < floor {
            floorDb = floor + (levelDb - floor) * fallFraction
        } else {
            floorDb = min(levelDb, floor + (inSpeech ? riseInSpeechPerFrame : risePerFrame))
        }
    }
}
