import Foundation

/// A file sent with a chat message (`chat.send` `attachments[]`: `{type, mimeType, fileName, content}`, content in
/// base64), as the iOS chat transport sends them (fact sheet approvals §3).
package struct ChatAttachment: Sendable, Equatable {
    package var mimeType: String
    package var fileName: String
    package var data: [UInt8]

    package init(mimeType: String, fileName: String, data: [UInt8]) {
        self.mimeType = mimeType
        self.fileName = fileName
        self.data = data
    }

    package var isImage: Bool { mimeType.hasPrefix("image/") }

    /// `image` for images, `file` for the rest.
    package var type: String { isImage ? "image" : "file" }

    var json: JSONValue {
        ["type": .string(type), "mimeType": .string(mimeType), "fileName": .string(fileName),
         "content": .string(Data(data).base64EncodedString())]
    }

    /// Bytes the attachment adds to the request frame: its base64 text and its fields.
    var frameBytes: Int { (data.count + 2) / 3 * 4 + fileName.utf8.count * 2 + mimeType.utf8.count + 96 }

    /// The MIME type of a file: by its first bytes for the image formats a Gateway reads, else by its name.
    package static func mimeType(of data: [UInt8], fileName: String) -> String {
        let head = Array(data.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if head.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if head.count == 12, head.starts(with: Array("RIFF".utf8)), Array(head[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        let ext = (fileName as NSString).pathExtension.lowercased()
        return knownTypes[ext] ?? "application/octet-stream"
    }

    static let knownTypes: [String: String] = [
        "txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "json": "application/json", "pdf": "application/pdf",
        "html": "text/html", "xml": "application/xml", "log": "text/plain", "yaml": "application/yaml", "yml": "application/yaml",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
    ]
}

/// Why attachments cannot go: found before anything is sent, so nothing is half-sent.
package enum AttachmentError: Error, Equatable, CustomStringConvertible {
    case tooLarge(fileName: String, bytes: Int, limit: Int)
    case frameTooLarge(bytes: Int, limit: Int)
    /// An older Gateway states no attachment policy and reads images only.
    case onlyImages(fileName: String, mimeType: String)

    package var description: String {
        switch self {
        case .tooLarge(let name, let bytes, let limit):
            "\(name) is \(Self.size(bytes)); the Gateway accepts at most \(Self.size(limit)) per attachment of its kind. Nothing was sent."
        case .frameTooLarge(let bytes, let limit):
            "The message with its attachments would be \(Self.size(bytes)) on the wire; the Gateway accepts at most \(Self.size(limit)) per message. Nothing was sent."
        case .onlyImages(let name, let type):
            "\(name) (\(type)) cannot be sent: this Gateway states no attachment policy and takes images only. Nothing was sent."
        }
    }

    package static func size(_ bytes: Int) -> String {
        bytes >= 1_000_000 ? String(format: "%.1f MB", Double(bytes) / 1_000_000) : "\(bytes) bytes"
    }
}

/// The checks `chat.send` attachments must pass (docs gateway/clients.md "Validate attachments before sending"):
/// each one's decoded size against `policy.attachments` (images against `maxImageBytes`), and the whole request
/// frame, base64 and all, against `policy.maxPayload`.
package enum AttachmentPolicy {
    /// What a request's envelope adds besides the message and attachments (ids, keys, session key): generous.
    static let envelopeBytes = 2048

    package static func check(message: String, attachments: [ChatAttachment], limits: AttachmentLimits?,
                              maxPayload: Int) throws(AttachmentError) {
        let stated = limits
        let limits = limits ?? .legacy
        for attachment in attachments {
            if stated == nil, !attachment.isImage {
                throw .onlyImages(fileName: attachment.fileName, mimeType: attachment.mimeType)
            }
            let limit = attachment.isImage ? limits.maxImageBytes : limits.maxBytes
            if attachment.data.count > limit { throw .tooLarge(fileName: attachment.fileName, bytes: attachment.data.count, limit: limit) }
        }
        let frame = frameBytes(message: message, attachments: attachments)
        if frame > maxPayload { throw .frameTooLarge(bytes: frame, limit: maxPayload) }
    }

    /// The request frame's size, counted without building it.
    package static func frameBytes(message: String, attachments: [ChatAttachment]) -> Int {
        JSONValue.string(message).jsonText.utf8.count + envelopeBytes + attachments.reduce(0) { $0 + $1.frameBytes }
    }
}
