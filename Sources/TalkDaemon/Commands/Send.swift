import AudioIO
import Desktop
import Foundation
import SessionBridge
import SpeechSynthesis
import TalkLogging
import TalkSession

extension OpenClawTalk {
    /// The Linux Share Sheet: sends text (or standard input) with files to the chat through `chat.send`, checked
    /// against the Gateway's `hello-ok.policy` limits before anything goes (images over the limit re-encoded first),
    /// and prints the reply as it streams. A file manager's "Send to OpenClaw" action runs it.
    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "send",
            abstract: "Send text and files to the assistant's chat and print (or speak) the reply.",
            discussion: "Without TEXT (or with '-') the text is read from standard input, unless files are given; a bare "
                + "'send' on a terminal stops at once instead of waiting for typed input. Images "
                + "over the Gateway's limit are re-encoded as JPEG to fit; other files go where the Gateway's policy allows. "
                + "Every limit is checked before anything is sent.",
            options: [
                .option("file", short: "f", value: "path", help: "Attach this file (repeat for more).", repeated: true),
                .option("session", value: "key", help: "The chat session (default: the Gateway's main session)."),
                .flag("speak", help: "Also speak the reply with the local voice."),
            ] + AudioDeviceOptions.options(.speaker, help: Self.deviceHelp) + [
                .flag("notify", help: "Also show the reply (or why nothing was sent) as a desktop notification: for file-manager actions."),
                .flag("no-reply", help: "Print the acknowledgement and exit without waiting for the reply."),
            ],
            arguments: [ArgumentSpec(name: "text", help: "What to send ('-' for stdin).", optional: true)])

        static let deviceHelp = AudioDeviceOptions.Help(
            sink: "With --speak: the PulseAudio sink to speak on (default: the server's default).",
            output: "With --speak: write the spoken reply to this WAV file (22 050 Hz) instead of a sound card.")

        /// A file larger than this is refused before it is read: no Gateway takes it (their frames stop at 25 MiB).
        static let maxFileBytes = 64 << 20

        var text: String?
        var files: [String]
        var session: String?
        var speak: Bool
        /// Where `--speak` speaks: `--sink` or `--output`.
        var devices: AudioDeviceOptions
        var notify: Bool
        var waitForReply: Bool

        init(_ parsed: ParsedArguments) throws {
            text = parsed.argument("text")
            files = parsed.optionValues("file")
            session = parsed.option("session")
            speak = parsed.flag("speak")
            notify = parsed.flag("notify")
            waitForReply = !parsed.flag("no-reply")
            if speak, !waitForReply { throw ValidationError("'--speak' needs the reply; drop '--no-reply'") }
            devices = try AudioDeviceOptions(parsed, .speaker)
            if !speak, let given = devices.sink.map({ _ in "--sink" }) ?? devices.output.map({ _ in "--output" }) {
                throw ValidationError("'\(given)' says where the reply is spoken; add '--speak'")
            }
            if let session, session.isEmpty || session.utf8.count > 512 { throw ValidationError("'--session' takes a key of 1-512 bytes") }
        }

        func run() async throws {
            let logger = Logger(label: "openclaw-talk.send")
            guard notify else {
                try await send(logger: logger)
                return
            }
            // From a file manager there is no terminal: the outcome is shown where the user looks.
            let notifier = DesktopNotifier(logger: logger)
            do {
                let reply = try await send(logger: logger)
                try? await notifier.show(.init(title: "OpenClaw", body: String((reply ?? "Sent.").prefix(2000))))
            } catch {
                try? await notifier.show(.init(title: "Not sent to OpenClaw", body: "\(error)", urgency: .critical))
                throw error
            }
        }

        /// Sends; returns the reply's text (nil without waiting).
        @discardableResult
        func send(logger: Logger) async throws -> String? {
            var typed = text ?? ""
            let fromStandardInput = text == "-" || (text == nil && files.isEmpty)
            if text == nil, files.isEmpty, isatty(STDIN_FILENO) == 1 {
                throw ValidationError(Self.nothingGivenOnTerminal)
            }
            if fromStandardInput {
                typed = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            }
            let message = typed.trimmingCharacters(in: .whitespacesAndNewlines)
            let attachments = try files.map(Self.read)
            if message.isEmpty, attachments.isEmpty {
                throw ValidationError(fromStandardInput
                    ? "Nothing to send: standard input was empty. Pipe the message in, or give TEXT or --file."
                    : "Nothing to send: give TEXT, standard input or --file")
            }
            let (session, waitForReply, devices) = (session, waitForReply, devices)
            let reply = try await OperatorLink.with(logger: logger) { connection in
                guard let hello = await connection.hello else { throw OperatorLink.Failure(description: "The Gateway connection ended.") }
                let fitted = try await Self.fit(attachments, limits: hello.attachmentLimits, logger: logger)
                do {
                    try AttachmentPolicy.check(message: message, attachments: fitted, limits: hello.attachmentLimits, maxPayload: hello.maxPayload)
                } catch {
                    throw OperatorLink.Failure(description: "\(error)")
                }
                return try await Self.converse(message, attachments: fitted, session: session, wait: waitForReply,
                                               connection: connection, logger: logger)
            }
            if speak, let reply, !reply.isEmpty { try await Self.speakAloud(reply, on: devices, logger: logger) }
            return reply
        }

        /// Why a bare `send` on a terminal stops at once instead of waiting, like `cat`, for an end of input the user
        /// never meant to type.
        static let nothingGivenOnTerminal = "Nothing to send: give the message as 'send TEXT', attach files with "
            + "'send --file PATH', or pipe it in ('... | openclaw-talk send -')."

        /// Reads one file, refusing what no Gateway could take before reading it.
        static func read(_ path: String) throws -> ChatAttachment {
            var info = stat()
            guard stat(path, &info) == 0 else { throw ValidationError("\(path): \(String(cString: strerror(errno)))") }
            guard (info.st_mode & S_IFMT) == S_IFREG else { throw ValidationError("\(path) is not a regular file") }
            guard Int(info.st_size) <= maxFileBytes else {
                throw ValidationError("\(path) is \(AttachmentError.size(Int(info.st_size))); no Gateway takes more than 25 MB in one message. Nothing was sent.")
            }
            guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("\(path) cannot be read") }
            let bytes = [UInt8](data)
            let name = (path as NSString).lastPathComponent
            return ChatAttachment(mimeType: ChatAttachment.mimeType(of: bytes, fileName: name), fileName: name, data: bytes)
        }

        /// Images over the image limit re-encoded as JPEG to fit (as the iOS share extension does); the rest unchanged.
        static func fit(_ attachments: [ChatAttachment], limits: AttachmentLimits?, logger: Logger) async throws -> [ChatAttachment] {
            let imageLimit = (limits ?? .legacy).maxImageBytes
            var out: [ChatAttachment] = []
            for attachment in attachments {
                guard attachment.isImage, attachment.data.count > imageLimit else {
                    out.append(attachment)
                    continue
                }
                do {
                    let jpeg = try await ImageShrinker.shrink(attachment.data, toAtMost: imageLimit)
                    let name = ((attachment.fileName as NSString).deletingPathExtension) + ".jpg"
                    logger.info("re-encoded an image to fit the Gateway's limit",
                                metadata: ["file": "\(attachment.fileName)", "bytes.before": "\(attachment.data.count)", "bytes.after": "\(jpeg.count)"])
                    out.append(ChatAttachment(mimeType: "image/jpeg", fileName: name, data: jpeg))
                } catch {
                    throw OperatorLink.Failure(description: "\(attachment.fileName): \(error). Nothing was sent.")
                }
            }
            return out
        }

        /// Sends and prints the reply as it streams; returns its text (nil without waiting).
        static func converse(_ message: String, attachments: [ChatAttachment], session: String?, wait: Bool,
                             connection: GatewayConnection, logger: Logger) async throws -> String? {
            let chat = ChatClient(connection: connection, outbox: ChatOutbox(file: nil, logger: logger), logger: logger)
            let follower = Task { await chat.run() }
            defer { follower.cancel() }
            let reply = await chat.send(message, sessionKey: session, attachments: attachments)
            var printed = ""
            for await update in reply {
                switch update {
                case .accepted(let runId, let status):
                    logger.info("sent", metadata: ["chat.run_id": "\(runId ?? "-")", "chat.status": "\(status)"])
                    if !wait {
                        StandardStream.write("Sent.\n", to: STDOUT_FILENO)
                        return nil
                    }
                case .partial(let text, _):
                    printed = show(text, after: printed)
                case .final(let text, _):
                    _ = show(text, after: printed)
                    StandardStream.write("\n", to: STDOUT_FILENO)
                    return text
                case .aborted(let text):
                    _ = show(text, after: printed)
                    throw OperatorLink.Failure(description: "\nThe reply was aborted.")
                case .failed(let why):
                    throw OperatorLink.Failure(description: "The message was not answered: \(why)")
                }
            }
            throw OperatorLink.Failure(description: "The connection ended before the reply.")
        }

        /// Prints what `text` adds to what is on the screen; a rewritten reply starts a new line.
        private static func show(_ text: String, after printed: String) -> String {
            if text.hasPrefix(printed) {
                StandardStream.write(String(text.dropFirst(printed.count)), to: STDOUT_FILENO)
            } else {
                StandardStream.write("\n" + text, to: STDOUT_FILENO)
            }
            return text
        }

        /// Speaks the reply here, as a reply is spoken (`SentenceSpeaker`), where `--sink` or `--output` says.
        static func speakAloud(_ text: String, on devices: AudioDeviceOptions, logger: Logger) async throws {
            let (directive, sentences) = SpokenReply.sentences(of: text)
            let synthesizer = try EspeakSynthesizer(logger: logger)
            let device = try devices.playback(sampleRate: synthesizer.sampleRate, logger: logger)
            let voice = directive?.applied(to: VoiceSettings()) ?? VoiceSettings()
            let spoken = await SentenceSpeaker.speakLocally(sentences, voice: voice, synthesizer: synthesizer, player: device)
            await device.close()
            if let failure = spoken.failure { throw failure.error }
        }
    }
}
