import Glibc

/// What the descriptor must become before a blocked operation is retried.
enum SocketWait {
    case readable, writable
}

/// The outcome of one non-blocking read or write.
enum SocketIOResult {
    case transferred(Int)
    case wouldBlock(SocketWait)
    case endOfStream
    case failed(String)
}

/// A connected non-blocking socket, plain or TLS, driven by one `SocketIOThread` and touched by no other
/// thread: OpenSSL's `SSL` object is not safe to share, so this protocol is deliberately not `Sendable`.
protocol SocketIO: AnyObject {
    var fileDescriptor: Int32 { get }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> SocketIOResult
    func write(_ bytes: UnsafeRawBufferPointer) -> SocketIOResult
    /// Ends the session politely where the protocol has a way (TLS close_notify); never blocks.
    func shutdown()
    /// Frees everything and closes the descriptor. Called exactly once.
    func release()
}

/// A plain TCP socket.
final class PlainSocketIO: SocketIO {
    let fileDescriptor: Int32

    init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> SocketIOResult {
        let count = recv(fileDescriptor, buffer.baseAddress, buffer.count, 0)
        if count > 0 { return .transferred(count) }
        if count == 0 { return .endOfStream }
        return Self.classify(errno)
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> SocketIOResult {
        // MSG_NOSIGNAL: a peer that went away gives EPIPE rather than a process-killing SIGPIPE.
        let count = send(fileDescriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
        if count >= 0 { return .transferred(count) }
        return Self.classifyWrite(errno)
    }

    func shutdown() { _ = Glibc.shutdown(fileDescriptor, Int32(SHUT_WR)) }

    func release() { _ = Glibc.close(fileDescriptor) }

    static func classify(_ code: Int32) -> SocketIOResult {
        switch code {
        case EAGAIN, EWOULDBLOCK, EINTR: .wouldBlock(.readable)
        default: .failed(String(cString: strerror(code)))
        }
    }
}

extension PlainSocketIO {
    /// `classify` says readable for EAGAIN; a write that would block waits for writable instead.
    static func classifyWrite(_ code: Int32) -> SocketIOResult {
        if case .wouldBlock = classify(code) { return .wouldBlock(.writable) }
        return classify(code)
    }
}
