import SessionBridge

/// Event lines of kept `bench talk` live sessions (OPENCLAW_TALK_BENCH_KEEP=1), as the `run` child wrote them: events
/// that do not bear on the verdict (partials, reply levels, recognition) left out, long texts shortened.
enum SelfEchoSessions {
    static func events(_ lines: String) -> [JSONValue] {
        lines.split(separator: "\n").compactMap { JSONValue.parse(Array($0.utf8)) }
    }

    /// Base eccba81, PipeWire, 25 s realtime reply: the relay answered the echo twice and the client's queue overflowed.
    static let realtimeOverflowAnsweredAgain = events(#"""
        {"event":"state","from":"idle","monotonicMs":14,"reason":"started","time":"2026-12-06T03:55:48.274Z","to":"listening"}
        {"event":"relay","message":"output cleared","monotonicMs":4229,"time":"2026-12-06T03:55:52.489Z"}
        {"event":"replyFinal","monotonicMs":6716,"text":"Sure, here is what I found about that.","time":"2026-12-06T03:55:54.977Z"}
        {"event":"state","from":"listening","monotonicMs":6791,"reason":"relay audio","time":"2026-12-06T03:55:55.052Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":6791,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:55:55.052Z","voice":"gateway-realtime"}
        {"event":"replyFinal","monotonicMs":19995,"text":"Sure, here is what I found about that.","time":"2026-12-06T03:56:08.255Z"}
        {"event":"replyFinal","monotonicMs":23933,"text":"Sure, here is what I found about that.","time":"2026-12-06T03:56:12.193Z"}
        {"event":"error","message":"the relay's audio came faster than it plays; the output is cut","monotonicMs":24835,"time":"2026-12-06T03:56:13.095Z"}
        {"completed":true,"event":"speakingStopped","monotonicMs":24835,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:56:13.095Z"}
        {"event":"state","from":"speaking","monotonicMs":24835,"reason":"reply done","time":"2026-12-06T03:56:13.095Z","to":"listening"}
        {"event":"turnEnded","monotonicMs":24835,"reason":"reply done","time":"2026-12-06T03:56:13.095Z"}
        {"event":"relay","message":"output cleared","monotonicMs":24839,"time":"2026-12-06T03:56:13.099Z"}
        {"event":"state","from":"listening","monotonicMs":24920,"reason":"relay audio","time":"2026-12-06T03:56:13.180Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":24920,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:56:13.180Z","voice":"gateway-realtime"}
        {"event":"state","from":"speaking","monotonicMs":27875,"reason":"stopped","time":"2026-12-06T03:56:16.135Z","to":"idle"}
        """#)

    /// The same run: the answer played to its end, once.
    static let realtimeClean = events(#"""
        {"event":"state","from":"idle","monotonicMs":21,"reason":"started","time":"2026-12-06T03:58:17.246Z","to":"listening"}
        {"event":"relay","message":"output cleared","monotonicMs":4237,"time":"2026-12-06T03:58:21.462Z"}
        {"event":"replyFinal","monotonicMs":6604,"text":"Sure, here is what I found about that.","time":"2026-12-06T03:58:23.829Z"}
        {"event":"state","from":"listening","monotonicMs":6698,"reason":"relay audio","time":"2026-12-06T03:58:23.923Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":6698,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:58:23.923Z","voice":"gateway-realtime"}
        {"event":"relay","message":"mark reply-end acknowledged","monotonicMs":32992,"time":"2026-12-06T03:58:50.217Z"}
        {"completed":true,"event":"speakingStopped","monotonicMs":32992,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:58:50.217Z"}
        {"event":"state","from":"speaking","monotonicMs":32992,"reason":"reply done","time":"2026-12-06T03:58:50.217Z","to":"listening"}
        {"event":"turnEnded","monotonicMs":32992,"reason":"reply done","time":"2026-12-06T03:58:50.217Z"}
        {"event":"state","from":"listening","monotonicMs":36051,"reason":"stopped","time":"2026-12-06T03:58:53.275Z","to":"idle"}
        """#)

    /// The same run: a barge-in cut the answer 10.6 s in, and another answer began.
    static let realtimeCutAndAnsweredAgain = events(#"""
        {"event":"state","from":"idle","monotonicMs":19,"reason":"started","time":"2026-12-06T04:02:50.131Z","to":"listening"}
        {"event":"relay","message":"output cleared","monotonicMs":4238,"time":"2026-12-06T04:02:54.350Z"}
        {"event":"replyFinal","monotonicMs":6723,"text":"Sure, here is what I found about that.","time":"2026-12-06T04:02:56.835Z"}
        {"event":"state","from":"listening","monotonicMs":6872,"reason":"relay audio","time":"2026-12-06T04:02:56.984Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":6872,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T04:02:56.984Z","voice":"gateway-realtime"}
        {"detectionLatencyMs":215.2,"event":"bargeIn","monotonicMs":17494,"offsetSeconds":10.62,"partial":"","time":"2026-12-06T04:03:07.606Z"}
        {"completed":false,"event":"speakingStopped","monotonicMs":17494,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T04:03:07.606Z"}
        {"event":"state","from":"speaking","monotonicMs":17494,"reason":"barge-in","time":"2026-12-06T04:03:07.606Z","to":"listening"}
        {"event":"turnEnded","monotonicMs":17494,"reason":"barge-in","time":"2026-12-06T04:03:07.606Z"}
        {"event":"relay","message":"output cleared","monotonicMs":17495,"time":"2026-12-06T04:03:07.607Z"}
        {"event":"replyFinal","monotonicMs":18285,"text":"Sure, here is what I found about that.","time":"2026-12-06T04:03:08.397Z"}
        {"event":"state","from":"listening","monotonicMs":18377,"reason":"relay audio","time":"2026-12-06T04:03:08.489Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":18377,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T04:03:08.489Z","voice":"gateway-realtime"}
        {"event":"state","from":"speaking","monotonicMs":20530,"reason":"stopped","time":"2026-12-06T04:03:10.642Z","to":"idle"}
        """#)

    /// Base eccba81, PulseAudio, local voice, 25 s reply: the echo's 'but' cut the reply, its 'what what' went out as a turn.
    static let nativeCutByBut = events(#"""
        {"event":"state","from":"idle","monotonicMs":7,"reason":"started","time":"2026-12-06T03:49:25.427Z","to":"listening"}
        {"event":"state","from":"listening","monotonicMs":6616,"reason":"transcript sent","time":"2026-12-06T03:49:32.037Z","to":"thinking"}
        {"event":"transcriptSent","interruptedAtSeconds":null,"monotonicMs":6620,"text":"go forward ten meters","time":"2026-12-06T03:49:32.040Z"}
        {"event":"replyFinal","monotonicMs":6633,"text":"Sure, here is what I found about that.","time":"2026-12-06T03:49:32.053Z"}
        {"event":"state","from":"thinking","monotonicMs":6649,"reason":"reply","time":"2026-12-06T03:49:32.069Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":6649,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:49:32.069Z","voice":"local:en-us"}
        {"completed":true,"event":"speakingStopped","monotonicMs":8919,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:49:34.339Z"}
        {"event":"speakingStarted","monotonicMs":8920,"sentence":"The forecast stays mild and clear all ","time":"2026-12-06T03:49:34.340Z","voice":"local:en-us"}
        {"detectionLatencyMs":7.1,"event":"bargeIn","monotonicMs":9556,"offsetSeconds":2.88,"partial":"but","time":"2026-12-06T03:49:34.976Z"}
        {"event":"state","from":"speaking","monotonicMs":9556,"reason":"barge-in","time":"2026-12-06T03:49:34.976Z","to":"listening"}
        {"event":"turnEnded","monotonicMs":9556,"reason":"barge-in","time":"2026-12-06T03:49:34.976Z"}
        {"completed":false,"event":"speakingStopped","monotonicMs":9562,"sentence":"The forecast stays mild and clear all ","time":"2026-12-06T03:49:34.982Z"}
        {"event":"state","from":"listening","monotonicMs":10233,"reason":"transcript sent","time":"2026-12-06T03:49:35.653Z","to":"thinking"}
        {"event":"transcriptSent","interruptedAtSeconds":2.88,"monotonicMs":10236,"text":"what what","time":"2026-12-06T03:49:35.656Z"}
        {"event":"replyFinal","monotonicMs":10247,"text":"Sure, here is what I found about that.","time":"2026-12-06T03:49:35.667Z"}
        {"event":"state","from":"thinking","monotonicMs":10252,"reason":"reply","time":"2026-12-06T03:49:35.672Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":10252,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:49:35.672Z","voice":"local:en-us"}
        {"completed":true,"event":"speakingStopped","monotonicMs":12515,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T03:49:37.935Z"}
        {"event":"speakingStarted","monotonicMs":12515,"sentence":"The forecast stays mild and clear all ","time":"2026-12-06T03:49:37.935Z","voice":"local:en-us"}
        {"completed":false,"event":"speakingStopped","monotonicMs":12760,"sentence":"The forecast stays mild and clear all ","time":"2026-12-06T03:49:38.180Z"}
        {"event":"state","from":"speaking","monotonicMs":12761,"reason":"stopped","time":"2026-12-06T03:49:38.181Z","to":"idle"}
        """#)

    /// On r3g3 (main d95b8e9), PulseAudio, local voice, 25 s reply: played to its end (sentences 3 to 7 left out here).
    static let nativeClean = events(#"""
        {"event":"state","from":"idle","monotonicMs":16,"reason":"started","time":"2026-12-06T04:30:39.540Z","to":"listening"}
        {"event":"state","from":"listening","monotonicMs":6875,"reason":"transcript sent","time":"2026-12-06T04:30:46.399Z","to":"thinking"}
        {"event":"transcriptSent","interruptedAtSeconds":null,"monotonicMs":6879,"text":"go forward ten meters","time":"2026-12-06T04:30:46.403Z"}
        {"event":"replyFinal","monotonicMs":6900,"text":"Sure, here is what I found about that.","time":"2026-12-06T04:30:46.424Z"}
        {"event":"state","from":"thinking","monotonicMs":6930,"reason":"reply","time":"2026-12-06T04:30:46.454Z","to":"speaking"}
        {"event":"speakingStarted","monotonicMs":6930,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T04:30:46.454Z","voice":"local:en-us"}
        {"completed":true,"event":"speakingStopped","monotonicMs":9199,"sentence":"Sure, here is what I found about that.","time":"2026-12-06T04:30:48.723Z"}
        {"event":"speakingStarted","monotonicMs":9401,"sentence":"The forecast stays mild and clear all ","time":"2026-12-06T04:30:48.925Z","voice":"local:en-us"}
        {"completed":true,"event":"speakingStopped","monotonicMs":13078,"sentence":"The forecast stays mild and clear all ","time":"2026-12-06T04:30:52.602Z"}
        {"event":"speakingStarted","monotonicMs":27223,"sentence":"Humidity hovers around half, which fee","time":"2026-12-06T04:31:06.747Z","voice":"local:en-us"}
        {"completed":true,"event":"speakingStopped","monotonicMs":30339,"sentence":"Humidity hovers around half, which fee","time":"2026-12-06T04:31:09.863Z"}
        {"event":"state","from":"speaking","monotonicMs":30340,"reason":"reply done","time":"2026-12-06T04:31:09.864Z","to":"listening"}
        {"event":"turnEnded","monotonicMs":30340,"reason":"reply done","time":"2026-12-06T04:31:09.864Z"}
        {"event":"state","from":"listening","monotonicMs":33365,"reason":"stopped","time":"2026-12-06T04:31:12.889Z","to":"idle"}
        """#)
}
