import Threading

/// How a recogniser's decoding thread is scheduled, and which of its calls run there when it is realtime: a value with
/// no I/O (`PocketSphinxRecognizer` carries it out through `ThreadSerialExecutor`'s `BoundedRealtime`).
///
/// The live session's decoder must keep up with the microphone: on a busy desktop, in the normal class, it waited for
/// a CPU most of the time it wanted one and reported the user's speech seconds late, so barge-in came late or not at
/// all. Realtime under the audio threads puts it ahead of every normal thread. Only the live session's: file decodes,
/// tests and bench judges decode faster than real time, and at realtime would hold a core for as long as they run.
package enum DecodingThread: Sendable, Equatable {
    /// The normal class: `transcribe`, `bench`, a bench judge, tests.
    case normal
    /// The live session's: round-robin realtime at `realtimePriority` where the kernel or rtkit allows it, its runs
    /// bounded, its long calls (`runsRealtime(_:utteranceSamples:)`) in the normal class.
    case live

    /// SCHED_RR 1, the lowest realtime priority: ahead of every normal thread, behind the audio threads (SCHED_RR 3,
    /// `AudioThreadPriority.realtimePriority`) and the sound server's, which must never wait for a decode.
    package static let realtimePriority: Int32 = 1

    /// The normal-class thread a live recogniser's long calls run on while its decoding thread waits.
    package static let longCallThreadName = "sphinx-long"

    /// The longest utterance, in seconds of audio, whose search is ended in place on the realtime thread when it is
    /// dropped (`reset`): ending a search costs about 8-16 ms a second of audio (a 25 s monologue's final pass 0.2-0.4 s,
    /// `DecoderSegmentation`), so 2 s stays under the run budget (`RealtimeBurst`, 50 ms). Shorter drops are frequent
    /// over a reply (each echo start decoded ahead and given up), and a trip to the normal class for each would hold
    /// the decoder behind a busy desktop again.
    package static let inPlaceResetMaximumSeconds = 2.0

    /// A call on the decoder.
    package enum Call: Sendable, Equatable {
        /// Feeding audio, asking for a partial, starting an utterance: milliseconds each.
        case frame, partial, start
        /// Dropping the utterance in progress: its search is ended, at a cost that grows with its length.
        case reset
        /// Ending the utterance: the final pass, and where asked the warm-up re-decode and the grammar's phone-loop
        /// check, each over the whole utterance.
        case end
        /// Choosing a grammar: compiling it, and the first time loading the phone model (hundreds of ms).
        case grammar
    }

    /// Whether `call` runs on the realtime thread itself (true) or in the normal class while it waits (false), for an
    /// utterance of `utteranceSamples` 16 kHz samples so far.
    package static func runsRealtime(_ call: Call, utteranceSamples: Int) -> Bool {
        switch call {
        case .frame, .partial, .start: true
        case .reset: Double(utteranceSamples) / 16_000 <= inPlaceResetMaximumSeconds
        case .end, .grammar: false
        }
    }
}
