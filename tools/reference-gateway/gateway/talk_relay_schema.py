"""Params of the Talk relay methods newer than the protocol-3 schema (fact sheet §5.1, §9.1-9.8).

The schema file knows only the `talk.realtime.*` relay set; these closed definitions, from the fact
sheet, let refgw check the newer names as strictly as the schema checks the old ones.
"""

import jsonschema

_ID = {"type": "string", "minLength": 1}
_STR = {"type": "string"}
_NUM = {"type": "number"}
_INT = {"type": "integer", "minimum": 0}


def _closed(properties, required=()):
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


PARAMS = {
    "talk.catalog": _closed({}),
    "talk.session.create": _closed({
        "sessionKey": _STR, "spawnedBy": _STR, "provider": _STR, "model": _STR, "voice": _STR,
        "language": {"type": "string", "pattern": "^[a-z]{2}$"}, "vadThreshold": _NUM,
        "silenceDurationMs": _INT, "prefixPaddingMs": _INT, "reasoningEffort": _STR,
        "mode": {"enum": ["realtime", "transcription", "stt-tts"]}, "transport": _STR, "brain": _STR,
        "ttlMs": {"type": "integer", "minimum": 1000, "maximum": 3600000}}),
    "talk.session.appendAudio": _closed({"sessionId": _ID, "audioBase64": _ID, "timestamp": _NUM},
                                        ["sessionId", "audioBase64"]),
    "talk.session.cancelOutput": _closed({"sessionId": _ID, "turnId": _STR, "reason": _STR},
                                         ["sessionId"]),
    "talk.session.acknowledgeMark": _closed({"sessionId": _ID, "markName": _STR},
                                            ["sessionId", "markName"]),
    "talk.session.submitToolResult": _closed({
        "sessionId": _ID, "callId": _ID, "result": {},
        "options": _closed({"suppressResponse": {"type": "boolean"},
                            "willContinue": {"type": "boolean"}})},
        ["sessionId", "callId", "result"]),
    "talk.session.close": _closed({"sessionId": _ID}, ["sessionId"]),
    "talk.session.steer": _closed({"sessionId": _ID, "sessionKey": _STR, "text": _STR,
                                   "mode": {"enum": ["status", "steer", "cancel", "followup"]}},
                                  ["sessionId", "text"]),
    "talk.client.toolCall": _closed({"sessionKey": _STR, "voiceSessionId": _STR, "callId": _ID,
                                     "name": _ID, "args": {}, "relaySessionId": _STR},
                                    ["sessionKey", "callId", "name"]),
    # Transitional-era adapters (§9.8); their shapes follow the realtime ones of the snapshot.
    "talk.realtime.toolCall": _closed({"sessionKey": _STR, "callId": _ID, "name": _ID, "args": {},
                                       "relaySessionId": _STR}, ["sessionKey", "callId", "name"]),
    "talk.realtime.relayCancel": _closed({"relaySessionId": _ID, "reason": _STR, "turnId": _STR},
                                         ["relaySessionId"]),
    "talk.transcription.session": _closed({"sessionKey": _STR, "provider": _STR, "model": _STR}),
    "talk.transcription.relayAudio": _closed({"transcriptionSessionId": _ID, "audioBase64": _ID,
                                              "timestamp": _NUM},
                                             ["transcriptionSessionId", "audioBase64"]),
    "talk.transcription.relayCancel": _closed({"transcriptionSessionId": _ID},
                                              ["transcriptionSessionId"]),
    "talk.transcription.relayStop": _closed({"transcriptionSessionId": _ID},
                                            ["transcriptionSessionId"]),
}

_VALIDATORS = {name: jsonschema.Draft7Validator(schema) for name, schema in PARAMS.items()}


def param_errors(method, params):
    """Error strings for the params of a method defined here (empty when valid or not defined)."""
    validator = _VALIDATORS.get(method)
    if validator is None:
        return []
    errors = sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
    return ["params%s: %s" % ("".join("." + str(p) for p in e.absolute_path), e.message[:300])
            for e in errors[:5]]
