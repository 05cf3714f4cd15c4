/// First parsing pass (as in argument-parser's `SplitArguments`): argv words become typed elements.
enum ArgumentElement: Equatable, Sendable {
    /// `--name` or `--name=value`
    case long(String, value: String?)
    /// `-x`; bundles (`-abc`) are split into several
    case short(Character)
    /// a bare word, or anything after `--`
    case value(String)
}

enum ArgumentSplitter {
    static func split(_ argv: [String]) -> [ArgumentElement] {
        var out: [ArgumentElement] = []
        var terminated = false
        for word in argv {
            if terminated { out.append(.value(word)); continue }
            if word == "--" { terminated = true; continue }
            if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                if let eq = body.firstIndex(of: "=") {
                    out.append(.long(String(body[..<eq]), value: String(body[body.index(after: eq)...])))
                } else {
                    out.append(.long(String(body), value: nil))
                }
            } else if word.hasPrefix("-"), word.count > 1, !isNumber(word) {
                out.append(contentsOf: word.dropFirst().map { .short($0) })
            } else {
                out.append(.value(word))
            }
        }
        return out
    }

    /// `-5` and `-0.5` are values (negative numbers), not short options.
    private static func isNumber(_ w: String) -> Bool { Double(w) != nil }
}
