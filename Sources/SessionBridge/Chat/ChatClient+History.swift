import TalkLogging

extension ChatClient {
    /// The fallback when no terminal event came (fact sheet §4.3, as iOS does it): poll `chat.history`
    /// for the newest assistant message newer than the send, every `historyPollInterval` for up to
    /// `historyWindow`; a terminal event arriving meanwhile still wins.
    func readReplyFromHistory(_ key: String) async {
        guard let track = tracks[key], let sessionKey = track.sessionKey else { return }
        logger.info("no final chat event in time; reading the reply from chat.history",
                    metadata: ["chat.run_id": "\(track.runId ?? "-")"])
        let deadline = dependencies.nowMs() + ChatOutbox.milliseconds(settings.historyWindow)
        while tracks[key] != nil {
            if let text = await newestAssistantText(sessionKey: sessionKey, after: track.sentAtMs) {
                tracks[key]?.state.finish()
                end(key, with: .final(text, source: .history))
                return
            }
            guard dependencies.nowMs() < deadline else { break }
            do { try await dependencies.sleep(settings.historyPollInterval) } catch { return }
        }
        end(key, with: .failed(.noReply))
    }

    /// The text of the newest assistant row stamped after `afterMs`, or nil. Malformed rows are skipped
    /// (and logged once per read); a failed request reads as "not there yet".
    private func newestAssistantText(sessionKey: String, after afterMs: Int64) async -> String? {
        let result: JSONValue?
        do {
            result = try await connection.request(method: "chat.history", params: ["sessionKey": .string(sessionKey), "limit": 50], timeout: nil)
        } catch {
            logger.debug("chat.history failed", metadata: ["error": "\(error)"])
            return nil
        }
        guard let rows = result?["messages"]?.arrayValue else {
            logger.error("chat.history answered without a messages array")
            return nil
        }
        var best: (at: Int64, text: String)?
        var skipped = 0
        for row in rows where row["role"]?.stringValue == "assistant" {
            guard let at = row["timestamp"]?.intValue else {
                skipped += 1
                continue
            }
            guard at > afterMs, at >= best?.at ?? .min else { continue }
            do { best = (at, try ChatEventPayload.messageText(row, field: "messages[]")) } catch {
                skipped += 1
                logger.error("skipped a malformed chat.history row", metadata: ["error": "\(error)"])
            }
        }
        if skipped > 0 { logger.debug("chat.history rows skipped", metadata: ["chat.skipped": "\(skipped)"]) }
        return best?.text
    }
}
