#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where events are read from: a file or standard input. Its own type so that both
/// ingest modes open inputs, and refuse a directory, the same way.
public struct InputSource: Sendable {
    /// The name used in messages (`FILE:LINE`); `-` for standard input.
    public var name: String
    public var path: String?

    public static let standardInput = InputSource(name: "stdin", path: nil)
    public static func file(_ path: String) -> InputSource { InputSource(name: path, path: path) }

    func open() throws -> Int32 {
        guard let path else { return 0 }
        let fd = systemOpen(path)
        if fd < 0 {
            throw StoreError.io("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw StoreError.io("cannot read \(path): it is a directory")
        }
        return fd
    }
}

@inline(__always) private func systemOpen(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC)
}
