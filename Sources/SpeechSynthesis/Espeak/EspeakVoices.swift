import CEspeakNG

/// One voice espeak-ng lists: what `say --list-voices` prints.
package struct EspeakVoice: Sendable, Equatable {
    /// The given name ("English (America)").
    package var name: String
    /// The voice file within espeak-ng's data ("gmw/en-US").
    package var identifier: String
    /// The languages it speaks, most preferred first ("en-us", "en").
    package var languages: [String]
}

/// The voices a reply's voice directive may choose: those espeak-ng lists (`espeak_ListVoices`, which leaves out
/// MBROLA voices, whose loading makes libespeak-ng fork and execute `mbrola` from PATH inside our process), with
/// one of the listed variants after a `+`. The user's own `--voice` or config is not held to this list.
package struct EspeakVoices: Sendable, Equatable {
    package var voices: [EspeakVoice]
    /// Variant file names ("f3", "Alex"), added to a voice as `+name`.
    package var variants: [String]

    package init(voices: [EspeakVoice], variants: [String]) {
        self.voices = voices
        self.variants = variants
    }

    /// Reads the lists from the running engine. Worker thread only (espeak-ng's state is global).
    static func read() -> EspeakVoices {
        let listed = list(nil).filter { !$0.identifier.hasPrefix("mb/") && !$0.languages.contains("variant") }
        let variants = list(spec: "variant").compactMap { v -> String? in
            guard v.identifier.hasPrefix("!v/") else { return nil }
            return String(v.identifier.dropFirst(3))
        }
        return EspeakVoices(voices: listed, variants: variants)
    }

    /// The voice file `requested` stands for, when a directive may use it: a listed identifier, name or language
    /// (for a language, espeak-ng's own choice among the listed voices, never an MBROLA one), with an optional
    /// listed `+variant`. Nil for anything else. Worker thread only (a language is looked up in the engine).
    func resolve(_ requested: String) -> String? {
        let parts = requested.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let base = parts[0].lowercased()
        var suffix = ""
        if parts.count == 2 {
            guard let variant = variants.first(where: { $0.lowercased() == parts[1].lowercased() }) else { return nil }
            suffix = "+" + variant
        }
        guard !base.isEmpty else { return nil }
        func same(_ a: String) -> Bool { a.lowercased().replacingOccurrences(of: "_", with: " ") == base.replacingOccurrences(of: "_", with: " ") }
        if let voice = voices.first(where: { same($0.identifier) || same($0.name) }) { return voice.identifier + suffix }
        let speakers = Set(voices.filter { $0.languages.contains { $0.lowercased() == base } }.map(\.identifier))
        guard !speakers.isEmpty else { return nil }
        // espeak-ng's preference among them (it would otherwise pick by language among every voice, MBROLA's too).
        let preferred = Self.list(spec: base).map(\.identifier).first(where: speakers.contains) ?? speakers.sorted().first
        return preferred.map { $0 + suffix }
    }

    private static func list(spec language: String) -> [EspeakVoice] {
        language.withCString { name in
            var spec = espeak_VOICE()
            spec.languages = name
            return list(&spec)
        }
    }

    private static func list(_ spec: UnsafeMutablePointer<espeak_VOICE>?) -> [EspeakVoice] {
        guard let array = espeak_ListVoices(spec) else { return [] }
        var out: [EspeakVoice] = []
        var i = 0
        while let entry = array[i] {
            let v = entry.pointee
            out.append(EspeakVoice(name: v.name.map { String(cString: $0) } ?? "", identifier: v.identifier.map { String(cString: $0) } ?? "",
                                   languages: languages(v.languages)))
            i += 1
        }
        return out
    }

    /// espeak-ng's packed list: a priority byte, a name and its zero byte, again, then a zero byte.
    private static func languages(_ packed: UnsafePointer<CChar>?) -> [String] {
        guard var p = packed else { return [] }
        var out: [String] = []
        while p.pointee != 0 {
            p += 1  // the priority byte
            let name = String(cString: p)
            out.append(name)
            p += name.utf8.count + 1
        }
        return out
    }
}
