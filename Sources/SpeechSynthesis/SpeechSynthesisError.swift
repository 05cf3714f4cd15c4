/// What went wrong making speech; each description says what failed and what to do.
package enum SpeechSynthesisError: Error, Equatable, CustomStringConvertible {
    /// No espeak-ng data folder (phontab, phondata, ...) was found; `searched` lists every place looked at.
    case dataNotFound(searched: [String])
    /// espeak-ng was already set up with another data folder in this process (its state is process-wide).
    case dataFolderInUse(current: String, requested: String)
    /// espeak-ng refused to start; `reason` is its own message.
    case engineFailed(reason: String)
    /// The engine has no voice of that name.
    case unknownVoice(String)
    /// The text is longer than one request may be (the Talk loop sends sentences, not books).
    case textTooLong(characters: Int, limit: Int)
    /// Synthesis failed midway; `reason` is the engine's message.
    case synthesisFailed(reason: String)

    package var description: String {
        switch self {
        case .dataNotFound(let searched):
            return "No espeak-ng data found (looked in: \(searched.joined(separator: ", "))). "
                + "Install Debian's espeak-ng-data package (apt-get install espeak-ng), or set ESPEAK_DATA_PATH "
                + "to the folder holding phontab."
        case .dataFolderInUse(let current, let requested):
            return "espeak-ng already runs with the data in \(current) in this process; it cannot switch to "
                + "\(requested) (its state is process-wide). Use one data folder per process."
        case .engineFailed(let reason):
            return "espeak-ng could not start: \(reason). Reinstall espeak-ng-data (apt-get install --reinstall espeak-ng-data)."
        case .unknownVoice(let name):
            return "espeak-ng has no voice '\(name)'. List the voices with 'espeak-ng --voices' "
                + "and pass one of their names (e.g. en-us, en-gb, en+f3) with --voice."
        case .textTooLong(let characters, let limit):
            return "The text to speak has \(characters) characters, more than the \(limit) one request may hold; "
                + "split it into sentences (SpokenReply does)."
        case .synthesisFailed(let reason):
            return "espeak-ng failed while speaking: \(reason)."
        }
    }
}
