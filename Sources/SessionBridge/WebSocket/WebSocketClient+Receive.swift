extension WebSocketClient {
    /// Waits for the next whole message. Answers pings, notes pongs and handles the close handshake on the
    /// way. Throws `WebSocketError.closed(code:reason:)` when the server closes, the protocol error (after
    /// closing with its code) when the server breaks RFC 6455, or a `TransportError` when the socket fails.
    /// Cancelling the calling task throws `CancellationError` and leaves the connection usable.
    package func receive() async throws -> WebSocketMessage {
        if let terminalError { throw terminalError }
        guard !receiving else { throw WebSocketError.concurrentReceive }
        receiving = true
        defer { receiving = false }
        while true {
            let frame = try await nextFrame()
            logger.trace("frame", metadata: ["ws.opcode": "\(frame.opcode)", "ws.bytes": "\(frame.data.count)"])
            if let message = try await handle(stateMachine.frameReceived(frame)) { return message }
        }
    }

    /// Decodes the next frame, reading only when the buffer holds no whole frame. The decoder's limit is
    /// what is left of the message limit, so an oversized frame fails from its header.
    private func nextFrame() async throws -> WebSocketFrame {
        while true {
            // close() may have finished the connection while this receive waited for bytes.
            if let terminalError { throw terminalError }
            decoder.maxPayloadLength = aggregator.remainingCapacity
            do {
                if let frame = try decoder.nextFrame() { return frame }
            } catch .invalidFrameLength {
                // The frame limit is only what is left of the message limit: report the message limit.
                _ = try await handle(stateMachine.protocolViolation(.messageTooLarge(limit: aggregator.maxMessageSize)))
            } catch {
                _ = try await handle(stateMachine.protocolViolation(error))
            }
            let bytes: [UInt8]
            do {
                bytes = try await stream.read(maxBytes: Self.readChunkSize)
            } catch let error as TransportError {
                _ = try await handle(stateMachine.streamEnded(reason: error.description))
                continue
            }
            if bytes.isEmpty {
                let reason = decoder.bufferedByteCount > 0 ? "the stream ended inside a frame" : "end of stream"
                _ = try await handle(stateMachine.streamEnded(reason: reason))
                continue
            }
            decoder.append(bytes)
        }
    }

    /// Carries out one state-machine action; returns a message when one is complete. Terminal actions throw.
    private func handle(_ action: WebSocketConnection.StateMachine.Action) async throws -> WebSocketMessage? {
        switch action {
        case .forwardData(let frame):
            do {
                return try aggregator.append(frame)
            } catch {
                return try await handle(stateMachine.protocolViolation(error))
            }
        case .ignore:
            return nil
        case .sendPong(let payload):
            try? await stream.write(WebSocketFrameEncoder.encodeClientFrame(opcode: .pong, payload: payload))
            return nil
        case .pongReceived:
            lastPongReceivedAt = .now
            return nil
        case .sendClose(let code, let reason):
            try? await stream.write(Self.closeFrame(code: code, reason: reason))
            return nil
        case .echoCloseAndFinish(let code, let reason):
            try? await stream.write(Self.closeFrame(code: code, reason: ""))
            try await finish(WebSocketError.closed(code: code, reason: reason))
        case .finish(let code, let reason):
            try await finish(WebSocketError.closed(code: code, reason: reason))
        case .failConnection(let error, let sendClose):
            if sendClose, let code = error.closeCode {
                try? await stream.write(Self.closeFrame(code: code, reason: ""))
                await lingerUntilPeerCloses()
            }
            logger.debug("connection failed", metadata: ["ws.error": "\(error)"])
            try await finish(error)
        }
        return nil
    }

    /// Reads and discards until the server closes or a short bound passes. Closing a socket with unread
    /// data makes the kernel send a reset, which can destroy our close frame before the server reads
    /// it; draining first lets the server see the close code. Nothing is kept, so memory stays bounded.
    /// Only time bounds the drain, not bytes: a server that had megabytes of a message in flight (8 MB
    /// in 16 KiB fragments fills the loopback buffers) must be drained past them, or the reset still
    /// wins; a peer that keeps sending (the rest of a 60 MiB frame) is cut off at the deadline, which
    /// is checked between reads.
    private func lingerUntilPeerCloses() async {
        let stream = stream
        let deadline = ContinuousClock.now + min(closeTimeout, .seconds(1))
        _ = try? await Self.withDeadline(deadline, endpoint: endpoint, stage: "WebSocket close") {
            while !Task.isCancelled {
                let bytes = try await stream.read(maxBytes: Self.readChunkSize)
                if bytes.isEmpty { return }
            }
        }
    }

    /// Ends the connection: closes the stream and remembers the error every later call reports.
    private func finish(_ error: any Error) async throws -> Never {
        if terminalError == nil { terminalError = error }
        await stream.close()
        throw terminalError ?? error
    }

    /// Closes with the handshake: sends a close frame, waits up to the close timeout for the server's
    /// answer (through the running `receive()` if there is one), then closes the stream.
    package func close(code: WebSocketErrorCode = .normalClosure, reason: String = "") async {
        guard terminalError == nil else { return }
        _ = try? await handle(stateMachine.closeRequested(code: code, reason: reason))
        let deadline = ContinuousClock.now + closeTimeout
        if receiving {
            // The running receive() sees the server's close frame and finishes the connection.
            while terminalError == nil && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
        } else {
            _ = try? await Self.withDeadline(deadline, endpoint: endpoint, stage: "WebSocket close") {
                while true { _ = try await self.receive() }
            }
        }
        if terminalError == nil {
            _ = try? await handle(stateMachine.closeTimerFired())
        }
        if terminalError == nil { terminalError = WebSocketError.closed(code: code, reason: reason) }
        await stream.close()
    }

    /// A close frame: the code (omitted for 1005, which may not be sent) and a reason cut to fit 125 bytes.
    static func closeFrame(code: WebSocketErrorCode, reason: String) -> [UInt8] {
        guard code.isSendable else {
            return WebSocketFrameEncoder.encodeClientFrame(opcode: .connectionClose, payload: [])
        }
        var payload = [UInt8(code.codeNumber >> 8), UInt8(code.codeNumber & 0xFF)]
        var reasonBytes = Array(reason.utf8.prefix(123))
        while String(validating: reasonBytes, as: UTF8.self) == nil { reasonBytes.removeLast() }
        payload += reasonBytes
        return WebSocketFrameEncoder.encodeClientFrame(opcode: .connectionClose, payload: payload)
    }

    /// Runs `operation`, failing with `TransportError.timedOut` at `deadline`.
    static func withDeadline<T: Sendable>(
        _ deadline: ContinuousClock.Instant, endpoint: GatewayEndpoint, stage: String,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                throw TransportError.timedOut(host: endpoint.host, port: endpoint.port, stage: stage)
            }
            defer { group.cancelAll() }
            guard let result = try await group.next() else { throw CancellationError() }
            return result
        }
    }
}
