"""The realtime relay's playback marks, as upstream's relay handles its provider's.

The provider makes a mark behind each audio delta and keeps it until it is acknowledged (OpenAI's bridge,
openclaw/openclaw extensions/openai/realtime-voice-provider.ts: `sendMark` after each `onAudio`, named
`audio-<ms>`; `acknowledgeMark` drops the oldest, and does nothing when none is held; a barge-in truncates the
answer only while one is outstanding, and forgets them). Who acknowledges them is the relay's `markStrategy`
(src/talk/session-runtime.ts `onMark`):
- "transport", upstream's relay today (src/gateway/talk/relay/session-create.ts @8032cf1f) and the runtime's default:
  each goes to the client as `{type: "mark", markName}`, with a `talkEvent` `output.audio.done` whose payload is
  `{markName}`, behind its audio; the client acknowledges it with `talk.session.acknowledgeMark` once that audio has
  played (src/gateway/talk/handlers/session-mark.ts: accepted, `{ok: true}`, and passed to the provider);
- "ack-immediately", the relay as created before (src/gateway/talk-realtime-relay.ts @0a44de75): the relay
  acknowledges each itself and the client gets none.
The answer's end is `audioDone` either way; no mark follows it.
"""

MARK_STRATEGIES = ("transport", "ack-immediately")


class PlaybackMarks:
    """A relay session's marks (a mixin of `RelaySession`: `marks`, `pending_marks`, `output`, `emit`)."""

    async def playback_mark(self, turn_id):
        """The provider's mark after an audio delta (`markStrategy`): sent to the client, or acknowledged here."""
        self.marks += 1
        if self.output is not None:
            self.output["marks"] = self.output.get("marks", 0) + 1
        if self.relay.settings["markStrategy"] != "transport":
            return
        name = "audio-%d" % self.marks
        self.pending_marks.append(name)
        # session-create.ts `sendMark`: the mark carries a talkEvent `output.audio.done` with payload {markName}.
        await self.emit("mark", {"markName": name}, "output.audio.done", turn_id, True,
                        talk_payload={"markName": name})

    def acknowledge_mark(self, name):
        """The client played through `name` (None: the oldest). True when it was outstanding; a late or unknown
        name is ignored, as the provider ignores it. Acknowledgements come in playback order, so one clears the
        marks before it too."""
        if name is None:
            return bool(self.pending_marks) and bool(self.pending_marks.pop(0))
        if name not in self.pending_marks:
            return False
        del self.pending_marks[:self.pending_marks.index(name) + 1]
        return True

    def truncate_marks(self):
        """A barge-in truncates the answer and forgets its outstanding marks (the OpenAI bridge's `handleBargeIn`)."""
        self.pending_marks = []
