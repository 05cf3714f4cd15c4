import Testing

@testable import SessionBridge

/// Attachments are checked against hello-ok's policy before anything is sent.
struct AttachmentPolicyTests {
    static let limits = AttachmentLimits(maxBytes: 1000, maxImageBytes: 500)

    @Test func `images and other files each meet their own limit`() throws {
        let image = ChatAttachment(mimeType: "image/png", fileName: "a.png", data: Array(repeating: 1, count: 501))
        #expect(throws: AttachmentError.tooLarge(fileName: "a.png", bytes: 501, limit: 500)) {
            try AttachmentPolicy.check(message: "hi", attachments: [image], limits: Self.limits, maxPayload: 1 << 20)
        }
        let text = ChatAttachment(mimeType: "text/plain", fileName: "a.txt", data: Array(repeating: 1, count: 900))
        try AttachmentPolicy.check(message: "hi", attachments: [text], limits: Self.limits, maxPayload: 1 << 20)
    }

    @Test func `the whole frame must fit maxPayload, base64 included`() {
        let text = ChatAttachment(mimeType: "text/plain", fileName: "a.txt", data: Array(repeating: 1, count: 900))
        #expect(throws: AttachmentError.self) {
            try AttachmentPolicy.check(message: "hi", attachments: [text, text], limits: Self.limits, maxPayload: 3000)
        }
    }

    @Test func `a Gateway without a policy takes images only`() {
        let text = ChatAttachment(mimeType: "text/plain", fileName: "a.txt", data: [1])
        #expect(throws: AttachmentError.onlyImages(fileName: "a.txt", mimeType: "text/plain")) {
            try AttachmentPolicy.check(message: "hi", attachments: [text], limits: nil, maxPayload: 1 << 20)
        }
    }

    @Test func `the type is read from the bytes before the name`() {
        #expect(ChatAttachment.mimeType(of: [0x89, 0x50, 0x4E, 0x47, 0, 0], fileName: "x.txt") == "image/png")
        #expect(ChatAttachment.mimeType(of: Array("hello".utf8), fileName: "notes.md") == "text/markdown")
    }
}
