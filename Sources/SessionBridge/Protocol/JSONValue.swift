import Foundation

/// Any JSON value, for frames whose payloads vary by method or event. Integers stay integers on the wire.
package enum JSONValue: Sendable, Equatable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// The most values one message may hold. A Gateway may send 25 MiB frames; as `[0,0,0,...]` that is
    /// twelve million values, about a gigabyte once Foundation and this enum hold them. No Talk
    /// message comes near this (a clip is one long string).
    package static let maxValueCount = 250_000

    /// Parses UTF-8 JSON text; nil when it is not JSON, nests deeper than `maxDepth` (a hostile `[[[[...`
    /// must not exhaust the stack of the recursive decoder) or holds more than `maxValues` values.
    package static func parse(_ bytes: [UInt8], maxDepth: Int = 128, maxValues: Int = maxValueCount) -> JSONValue? {
        let shape = shape(bytes)
        guard shape.depth <= maxDepth, shape.values <= maxValues,
              let any = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        else { return nil }
        // JSONSerialization is about fifty times faster here than decoding through Codable.
        return JSONValue(foundation: any)
    }

    private init?(foundation value: Any) {
        switch value {
        case is NSNull: self = .null
        case let s as String: self = .string(s)
        case let n as NSNumber:
            // Booleans come back as NSNumbers of C type char; integers keep an integer type.
            switch String(cString: n.objCType) {
            case "c", "B": self = .bool(n.boolValue)
            case "d", "f": self = .double(n.doubleValue)
            case "Q": self = n.uint64Value <= UInt64(Int64.max) ? .int(n.int64Value) : .double(n.doubleValue)
            default: self = .int(n.int64Value)
            }
        case let a as [Any]:
            var out: [JSONValue] = []
            out.reserveCapacity(a.count)
            for e in a {
                guard let v = JSONValue(foundation: e) else { return nil }
                out.append(v)
            }
            self = .array(out)
        case let o as [String: Any]:
            var out: [String: JSONValue] = [:]
            for (k, e) in o {
                guard let v = JSONValue(foundation: e) else { return nil }
                out[k] = v
            }
            self = .object(out)
        default: return nil
        }
    }

    /// The deepest nesting of arrays and objects, ignoring brackets inside strings.
    static func nestingDepth(_ bytes: [UInt8]) -> Int { shape(bytes).depth }

    /// The deepest nesting and (an upper bound of) the number of values, from one pass over the bytes
    /// that skips strings: each value after the first in a container follows a comma.
    static func shape(_ bytes: [UInt8]) -> (depth: Int, values: Int) {
        var depth = 0
        var deepest = 0
        var values = 1
        var inString = false
        var escaped = false
        for b in bytes {
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                values += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            case UInt8(ascii: ","), UInt8(ascii: ":"): values += 1
            default: break
            }
        }
        return (deepest, values)
    }

    /// Compact JSON text with sorted keys and unescaped slashes.
    package var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    package var description: String { jsonText }

    package subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    package var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    package var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    package var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    package var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }

    /// The value as a whole number (a double without a fraction counts).
    package var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9e15: return Int64(d)
        default: return nil
        }
    }

    /// Non-empty strings of an array; nil when this is not an array of strings.
    package var stringArray: [String]? {
        guard let a = arrayValue else { return nil }
        let strings = a.compactMap(\.stringValue)
        return strings.count == a.count ? strings : nil
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .int(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}
