import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One input line: its bytes without the line break, and its 1-based number.
public struct InputLine: Sendable {
    /// The bytes without `\n` (a `\r` before it is kept here; see `content`).
    public var bytes: [UInt8]
    public var number: Int
    /// The line was longer than the reader keeps; `bytes` holds only its start.
    public var truncated: Bool

    /// The line ends with `\r` (it came from a CRLF file).
    public var hasCarriageReturn: Bool { bytes.last == 0x0D }

    /// The line without a trailing `\r` (CRLF files are read as LF files).
    public var content: ArraySlice<UInt8> {
        hasCarriageReturn ? bytes.dropLast() : bytes[...]
    }
}

/// Reads lines from a file descriptor in large chunks, in constant memory: a line
/// longer than `maxKept` is cut there (it is rejected anyway, since events are at
/// most 64 KiB).
public final class LineReader {
    private let fd: Int32
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var eof = false
    private var lineNumber = 0
    /// Bytes read so far.
    public private(set) var bytesRead = 0
    public let maxKept: Int
    /// Called before a read that would wait for input (a pipe or terminal with nothing
    /// ready yet), so that what was read so far can be dealt with first.
    public var beforeWaiting: (() -> Void)?

    public init(fd: Int32, chunkSize: Int = 1 << 20, maxKept: Int = 16 << 20) {
        self.fd = fd
        self.buffer = [UInt8](repeating: 0, count: chunkSize)
        self.maxKept = maxKept
    }

    /// The next line, or nil at the end of input. A last line without `\n` counts.
    public func next() throws -> InputLine? {
        var long: [UInt8]? = nil
        var dropped = false
        func finish(_ tail: ArraySlice<UInt8>) -> InputLine {
            lineNumber += 1
            guard var head = long else {
                return InputLine(
                    bytes: Array(tail.prefix(maxKept)), number: lineNumber, truncated: tail.count > maxKept)
            }
            let room = max(0, maxKept - head.count)
            if tail.count > room { dropped = true }
            head += tail.prefix(room)
            return InputLine(bytes: head, number: lineNumber, truncated: dropped)
        }
        while true {
            if let nl = findNewline() {
                let line = finish(buffer[start..<nl])
                start = nl + 1
                return line
            }
            if eof {
                if start == end && long == nil { return nil }
                let line = finish(buffer[start..<end])
                start = end
                return line
            }
            if start > 0 {
                // Move the partial line to the front to make room.
                buffer.withUnsafeMutableBytes { raw in
                    _ = memmove(raw.baseAddress!, raw.baseAddress! + start, end - start)
                }
                end -= start
                start = 0
            } else if end == buffer.count {
                // A line longer than the buffer: keep its start, up to `maxKept`.
                var head = long ?? []
                let room = max(0, maxKept - head.count)
                if end > room { dropped = true }
                head += buffer[0..<min(end, room)]
                long = head
                end = 0
            }
            try fill()
        }
    }

    private func findNewline() -> Int? {
        guard start < end else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            guard let p = memchr(raw.baseAddress! + start, 0x0A, end - start) else { return nil }
            return p - UnsafeMutableRawPointer(mutating: raw.baseAddress!)
        }
    }

    private func fill() throws {
        if let beforeWaiting {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, 0) == 0 { beforeWaiting() }
        }
        let n = buffer.withUnsafeMutableBytes { raw in
            read(fd, raw.baseAddress! + end, raw.count - end)
        }
        if n < 0 {
            if errno == EINTR { return }
            throw StoreError.io("cannot read input: \(String(cString: strerror(errno)))")
        }
        if n == 0 { eof = true }
        end += n
        bytesRead += n
    }
}
