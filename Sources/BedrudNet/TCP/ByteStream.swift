/// A connected, ordered byte stream with deadlines: plain TCP or TLS over TCP.
///
/// Thread contract: one reader and one writer may use a stream at the same time
/// (a WebSocket's reader thread and its sender); `shutdown()` may be called from any
/// thread to wake both; `close()` only by the owner after both are done.
public protocol ByteStream: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes. Returns 0 at end of stream.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline) throws -> Int
    /// Writes all of `bytes` or throws.
    func write(_ bytes: UnsafeRawBufferPointer, deadline: Deadline) throws
    /// Wakes any blocked read or write; later calls fail. Safe from any thread.
    func shutdown()
    /// Releases the socket. Call once, after readers and writers have stopped.
    func close()
    /// `host:port`, for error messages.
    var endpoint: String { get }
    /// True if the peer has closed or the stream has failed, checked without blocking.
    /// Used before reusing an idle keep-alive connection.
    var isDeadWhenIdle: Bool { get }
}

extension ByteStream {
    public func write(_ bytes: [UInt8], deadline: Deadline) throws {
        try bytes.withUnsafeBytes { try write($0, deadline: deadline) }
    }
}
