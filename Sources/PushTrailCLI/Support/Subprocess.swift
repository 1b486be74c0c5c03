#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process run without a shell (posix_spawn): the arguments as given, bytes
/// on its standard input through a pipe, its standard output discarded and its
/// standard error collected.
enum Subprocess {
    enum Termination: Equatable {
        case exit(Int32)
        case signal(Int32)
    }

    /// The first regular, executable file `name` in the colon-separated `path` (an
    /// empty entry is the current directory, as for execvp); without a PATH, the
    /// system default `/usr/bin:/bin`.
    static func find(_ name: String, path: String?) -> String? {
        for entry in (path ?? "/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (entry.isEmpty ? "." : String(entry)) + "/" + name
            var st = stat()
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// Runs `executable` with `arguments` (argv[0] first) and `environment`, writes
    /// `input` to its standard input and closes it, then waits. Returns how it ended
    /// and the first 64 KiB of its standard error.
    ///
    /// The input is written before standard error is read: a child that wrote more
    /// than a pipe's worth of errors before reading its input would wait forever, which
    /// `simctl push` (it reads the payload first) does not do. A child that exits
    /// without reading gets its input cut short (EPIPE: the binary ignores SIGPIPE).
    static func run(
        _ executable: String, _ arguments: [String], input: [UInt8], environment: [String: String]
    ) throws -> (Termination, [UInt8]) {
        let stdin = try makePipe()
        let stderr: (read: Int32, write: Int32)
        do { stderr = try makePipe() } catch {
            _ = close(stdin.read)
            _ = close(stdin.write)
            throw error
        }

        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t? = nil
        #else
            var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stderr.write, 2)

        // pushtrail ignores SIGPIPE; the child gets the default back, as any program expects.
        #if canImport(Darwin)
            var attributes: posix_spawnattr_t? = nil
        #else
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }

        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        // The child has its copies (or there is no child): close ours.
        _ = close(stdin.read)
        _ = close(stderr.write)
        guard spawned == 0 else {
            _ = close(stdin.write)
            _ = close(stderr.read)
            throw CommandError.io("cannot run \(executable): \(String(cString: strerror(spawned)))")
        }

        var off = 0
        while off < input.count {
            let n = input.withUnsafeBytes { write(stdin.write, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                break  // EPIPE: the child stopped reading; its exit status says why.
            }
            off += n
        }
        _ = close(stdin.write)

        var errors: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(stderr.read, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            if errors.count < 1 << 16 { errors += chunk[0..<n] }
        }
        _ = close(stderr.read)

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                throw CommandError.io("cannot wait for \(executable): \(String(cString: strerror(errno)))")
            }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
        let termination: Termination = status & 0x7F == 0 ? .exit((status >> 8) & 0xFF) : .signal(status & 0x7F)
        return (termination, errors)
    }

    /// A pipe whose ends are closed in the child on exec (the child gets dup2'd copies).
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw CommandError.io("cannot make a pipe: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }
}
