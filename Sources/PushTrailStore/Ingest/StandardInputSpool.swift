#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Copies standard input to a private file beside the store: a strict ingest may have
/// to read its input again (a retry after the map grows starts over), and a pipe can
/// be read only once.
extension Ingest {
    static func spool(standardInputInto directory: String) throws -> String {
        var template = Array((directory + "/.stdin-spool-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw StoreError.io("cannot spool standard input in \(directory): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw StoreError.io("cannot read standard input: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            var off = 0
            while off < n {
                let w = buffer.withUnsafeBytes { write(fd, $0.baseAddress! + off, n - off) }
                if w < 0 && errno == EINTR { continue }
                if w < 0 { throw StoreError.io("cannot spool standard input: \(String(cString: strerror(errno)))") }
                off += w
            }
        }
        return path
    }
}
