import Foundation

/// Any JSON value: control requests carry free-form `id`s and `args`, and a malformed line must be
/// told apart from a well-formed one with the wrong shape, so lines decode into this first.
/// SessionBridge has a richer `JSONValue` for Gateway frames; this module may not import SessionBridge,
/// and a distinct name keeps the executable, which imports both, free of ambiguity.
package enum ControlJSON: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ControlJSON])
    case object([String: ControlJSON])

    package init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([ControlJSON].self) { self = .array(a) }
        else { self = .object(try c.decode([String: ControlJSON].self)) }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    package var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    package var objectValue: [String: ControlJSON]? { if case .object(let o) = self { o } else { nil } }
    package subscript(key: String) -> ControlJSON? { objectValue?[key] }

    /// One line of compact JSON (no newline inside: the wire is JSON lines).
    package func line() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = [UInt8]((try? encoder.encode(self)) ?? Data("null".utf8))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Re-reads any `Encodable` as a JSON value (status documents become results this way).
    package static func from<T: Encodable>(_ value: T, encoder: JSONEncoder = .serviceEncoder) throws -> ControlJSON {
        try JSONDecoder().decode(ControlJSON.self, from: encoder.encode(value))
    }
}

extension JSONEncoder {
    /// ISO 8601 times, stable key order: what `status --json` and status.json print.
    package static var serviceEncoder: JSONEncoder {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .iso8601
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }
}

extension JSONDecoder {
    package static var serviceDecoder: JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }
}
