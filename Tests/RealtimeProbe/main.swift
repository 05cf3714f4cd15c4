import Foundation
import Threading

// Asks for a realtime thread as the audio threads do (`AudioThreadPriority.raiseCallingThread()`), on a thread of its
// own, prints `tid=TID outcome=OUTCOME`, and holds that thread until stdin ends, so the test reads its policy from
// /proc meanwhile (not from what this process says).
let ended = DispatchSemaphore(value: 0)
NamedThread.start("rt-probe") {
    let outcome = AudioThreadPriority.raiseCallingThread()
    let tid = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last
    FileHandle.standardOutput.write(Data("tid=\(tid.map(String.init) ?? "?") outcome=\(outcome)\n".utf8))
    while readLine() != nil {}
    ended.signal()
}
ended.wait()
