import Foundation
import SessionBridge
import TalkLogging

extension OpenClawTalk {
    /// Lists the approvals waiting for this device: what the agent wants to run, where, until when, and the
    /// decisions it allows. Asks the Gateway itself (one operator socket), with or without a running daemon.
    struct Approvals: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approvals",
            abstract: "List the approvals waiting for a decision (commands the agent wants to run).",
            discussion: "Decide one with 'openclaw-talk approve ID allow-once|allow-always|deny' (a unique prefix of the id will do).",
            options: [.flag("json", help: "Print the approvals as a JSON array.")])

        var json: Bool
        init(_ parsed: ParsedArguments) throws { json = parsed.flag("json") }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.approvals")
            let pending = try await OperatorLink.with(logger: logger) { connection in
                let client = ApprovalClient(connection: connection, logger: logger)
                try await Self.list(client)
                return await client.approvals
            }
            if json {
                StandardStream.write(JSONValue.array(pending.map(\.json)).jsonText + "\n", to: STDOUT_FILENO)
                return
            }
            if pending.isEmpty {
                StandardStream.write("No approvals are waiting.\n", to: STDOUT_FILENO)
                return
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let ids = pending.map(\.id)
            for approval in pending { StandardStream.write(Self.describe(approval, among: ids, nowMs: now) + "\n", to: STDOUT_FILENO) }
        }

        /// Lists, turning a refused list (no approvals scope) into the plain error.
        static func list(_ client: ApprovalClient) async throws {
            if let failure = await client.refreshReportingFailure() { throw failure }
        }

        /// Hex digits of an id shown in the "decide with" hint, after upstream's reserved `plugin:` (a UUID's first
        /// group: one in four billion pairs share it); more when another approval listed shares them.
        static let hintCharacters = 8

        /// The shortest prefix of `id` that `approve` takes for it: `hintCharacters` past the `plugin:` prefix every
        /// plugin id has, longer until no other of `ids` starts with it.
        static func hint(for id: String, among ids: [String]) -> String {
            let reserved = id.hasPrefix("plugin:") ? "plugin:".count : 0
            var length = min(id.count, reserved + hintCharacters)
            while length < id.count, ids.contains(where: { $0 != id && $0.hasPrefix(id.prefix(length)) }) { length += 1 }
            return String(id.prefix(length))
        }

        /// One approval in a few lines: id, what, where, expiry, decisions.
        static func describe(_ a: PendingApproval, among ids: [String], nowMs: Int64) -> String {
            var lines = ["\(GatewayText.neutralized(a.id, limit: 80))  \(a.kind == .exec ? "run" : "plugin"): \(GatewayText.neutralized(a.headline, limit: 400))"]
            if let cwd = a.cwd { lines.append("    in \(GatewayText.neutralized(cwd))") }
            if let agent = a.agentId { lines.append("    agent \(GatewayText.neutralized(agent, limit: 80))" + (a.host.map { " on \(GatewayText.neutralized($0, limit: 40))" } ?? "")) }
            if let warning = a.warningText { lines.append("    warning: \(GatewayText.neutralized(warning))") }
            let minutes = max(0, (a.expiresAtMs - nowMs + 59_999) / 60_000)
            lines.append("    expires in \(minutes) min; decide with: openclaw-talk approve \(GatewayText.neutralized(hint(for: a.id, among: ids), limit: 80)) "
                         + a.allowedDecisions.map(\.rawValue).joined(separator: "|"))
            return lines.joined(separator: "\n")
        }
    }

    /// Decides one approval: allow-once, allow-always or deny, for the id (or a unique prefix of it).
    struct Approve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve",
            abstract: "Decide a waiting approval: allow-once, allow-always or deny.",
            discussion: "ID is the approval's id as 'approvals' shows it, or a prefix of it that only one approval has.",
            arguments: [
                ArgumentSpec(name: "id", help: "The approval's id (or a unique prefix)."),
                ArgumentSpec(name: "decision", help: "allow-once, allow-always or deny", choices: ApprovalDecision.allCases.map(\.rawValue)),
            ])

        var id: String
        var decision: ApprovalDecision

        init(_ parsed: ParsedArguments) throws {
            id = parsed.argument("id") ?? ""
            guard !id.isEmpty else { throw ValidationError("Missing expected argument '<id>'") }
            let word = parsed.argument("decision") ?? ""
            guard let decision = ApprovalDecision(rawValue: word) else {
                throw ValidationError("'\(word)' is not a decision; use allow-once, allow-always or deny")
            }
            self.decision = decision
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.approve")
            let (id, decision) = (id, decision)
            let decided = try await OperatorLink.with(logger: logger) { connection in
                let client = ApprovalClient(connection: connection, logger: logger)
                try await Approvals.list(client)
                do {
                    let full = try await client.resolve(id: id, decision: decision)
                    return full
                } catch {
                    throw OperatorLink.Failure(description: "\(error)")
                }
            }
            let done = switch decision {
            case .allowOnce: "Allowed once"
            case .allowAlways: "Allowed always"
            case .deny: "Denied"
            }
            StandardStream.write("\(done): \(GatewayText.neutralized(decided, limit: 80))\n", to: STDOUT_FILENO)
        }
    }
}
