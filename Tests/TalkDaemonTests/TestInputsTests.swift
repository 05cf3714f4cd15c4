import Foundation
import TalkTestSupport
import Testing

/// The rules the other tests rely on to find their inputs.
struct TestInputsTests {
    @Test func `the binary the tests use is the one built beside them`() throws {
        let path = try TestInput.builtBinary.path()
        #expect(path.hasPrefix(TestInputs.buildDirectory))
        #expect(URL(fileURLWithPath: path).lastPathComponent == "openclaw-talk")
    }

    @Test func `a missing input names itself and how to get it`() {
        let absent = TestInput(name: "the moon", remedy: "wait for night") { nil }
        #expect(!absent.isPresent)
        #expect(throws: TestInput.Missing.self) { try absent.path() }
        #expect(absent.missingReason == "the moon is missing: wait for night")
    }

    @Test(.requires(.sharedSchema)) func `the shared schema is found by the one rule`() throws {
        let path = try TestInput.sharedSchema.path()
        #expect(path.hasSuffix("/reference/openclaw-protocol.schema.json"))
    }
}

/// The reference Gateway's schema check seen from a test.
struct SchemaCheckTests {
    @Test func `a Gateway that loaded a schema is checking`() throws {
        try TestInput.requireSchemaCheck(reportedByGateway: "/some/schema.json", "nothing")
    }

    @Test(.requires(.sharedSchema)) func `a Gateway without the schema the tests can see fails the test`() throws {
        #expect(throws: TestInput.Missing.self) {
            try TestInput.requireSchemaCheck(reportedByGateway: nil, "the schema check")
        }
    }
}
