import Testing

@testable import SessionBridge
@testable import TalkSession

/// The spoken approval prompt's words, with no audio: the question, its grammar, and what an answer means.
struct ApprovalPromptTests {
    static func approval(_ command: String, cwd: String? = "/home/u/proj", allowed: [ApprovalDecision] = ApprovalDecision.allCases) -> PendingApproval {
        var a = PendingApproval(id: "a1", kind: .exec, createdAtMs: 0, expiresAtMs: 1, allowedDecisions: allowed, command: command)
        a.cwd = cwd
        return a
    }

    @Test func `the question is short and speakable`() {
        #expect(ApprovalPrompt.question(for: Self.approval("rm -rf build"))
                == "The agent wants to run: r m dash r f build, in proj. Allow once, always, or deny?")
        #expect(ApprovalPrompt.question(for: Self.approval("ls", cwd: nil, allowed: [.allowOnce, .deny]))
                == "The agent wants to run: l s. Allow once, or deny?")
        let long = ApprovalPrompt.speakable(command: "git commit -m a b c d e f g h i")
        #expect(long.hasSuffix("and more"))
        #expect(ApprovalPrompt.speakable(command: "cat /etc/passwd | grep root") == "cat passwd pipe grep root")
    }

    @Test func `the grammar holds only the decisions offered`() {
        let grammar = ApprovalPrompt.grammar(allowed: [.allowOnce, .deny])
        #expect(grammar.contains("allow once"))
        #expect(!grammar.contains("always"))
        #expect(grammar.contains("repeat"))
    }

    @Test func `answers are read as what they mean, and an unoffered one says so`() {
        let all = ApprovalDecision.allCases
        #expect(ApprovalPrompt.interpret("Allow once.", allowed: all) == .decision(.allowOnce))
        #expect(ApprovalPrompt.interpret("deny", allowed: all) == .decision(.deny))
        #expect(ApprovalPrompt.interpret("allow always", allowed: [.allowOnce, .deny]) == .unavailable(.allowAlways))
        #expect(ApprovalPrompt.interpret("repeat", allowed: all) == .repeatQuestion)
        #expect(ApprovalPrompt.interpret("yes", allowed: all) == .yes)
        #expect(ApprovalPrompt.interpret("the weather is nice", allowed: all) == nil)
    }
}
