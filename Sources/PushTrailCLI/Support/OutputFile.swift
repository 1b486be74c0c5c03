import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file pushtrail writes (rejects, exports, reports): created 0600 whatever the
/// umask, never through a symlink, and never over an existing file unless asked.
final class OutputFile {
    let path: String
    private var fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    /// Creates `path`. Without `overwrite`, an existing file is an error that names
    /// `--force`.
    static func create(_ path: String, overwrite: Bool) throws -> OutputFile {
        // O_NONBLOCK: a FIFO planted at the path must not hang the open; it is refused
        // below as not a regular file.
        var flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        flags |= overwrite ? O_TRUNC : O_EXCL
        let fd = open(path, flags, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST { throw CommandError.io("\(path) already exists: pass --force to overwrite it") }
            if code == ELOOP { throw CommandError.io("\(path) is a symbolic link: refusing to write through it") }
            if code == ENXIO { throw CommandError.io("cannot write \(path): not a regular file") }
            throw CommandError.io("cannot write \(path): \(String(cString: strerror(code)))")
        }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG {
            systemClose(fd)
            throw CommandError.io("cannot write \(path): not a regular file")
        }
        fchmod(fd, 0o600)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return OutputFile(path: path, fd: fd)
    }

    func write(_ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                throw CommandError.io("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            off += n
        }
    }

    func close() {
        if fd >= 0 { systemClose(fd) }
        fd = -1
    }

    deinit { close() }
}

@inline(__always) private func systemWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }
@inline(__always) private func systemClose(_ fd: Int32) { _ = close(fd) }
