import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `pushtrail-stream publish|consume`: events to and from NATS JetStream. `pushtrail
/// publish` and `pushtrail consume` run it (it links libnats, which has no static
/// archive, so it is an executable of its own, as the server is).
public enum StreamMain {
    static let usage = """
        usage: pushtrail-stream publish [FILE…] --server URL[,URL…] --partitions N [--stream NAME] [--replicas R] [-q]
               pushtrail-stream consume --server URL[,URL…] --partitions LIST [--stream NAME] [--store DIR]
                                        [--rejects PATH] [--replicas R] [--drain] [-q]

        publish puts each event line of the files (or standard input) on the JetStream
        stream NAME (default PUSHTRAIL) as one message on pushtrail.events.P, P being the
        CRC-32 of its task id modulo N (a delivery goes with its notification), with
        Nats-Msg-Id set to the event's id, and waits for every acknowledgement. consume
        appends the messages of the partitions in LIST (such as 0-3 or 1,5) to the
        store with ingest's rules; the stream sequence it reached in each partition
        commits with the events, and it resumes after it, so every message is stored
        once whenever it is stopped or killed. Both create the stream (file storage,
        R replicas, default 1) when it does not exist. consume runs until SIGTERM or
        SIGINT (it commits its batch and exits 0), or with --drain until it has caught up.

        exit: 0 done · 2 usage · 65 lines or messages rejected · 74 NATS or the store failed
        """

    struct Usage: Error { let message: String }

    struct Options {
        var command = ""
        var files: [String] = []
        var servers: [String] = []
        var stream = EventSubjects.defaultStream
        var partitionCount: Int?
        var partitionList: String?
        var replicas = 1
        var store: String?
        var rejects: String?
        var drain = false
        var quiet = false
    }

    static func parse(_ args: [String]) throws -> Options {
        var o = Options()
        guard let command = args.first, command == "publish" || command == "consume" else {
            throw Usage(message: "say publish or consume (see --help)")
        }
        o.command = command
        var i = 1
        func value(_ name: String) throws -> String {
            i += 1
            guard i < args.count, !args[i].isEmpty else { throw Usage(message: "\(name) needs a value") }
            return args[i]
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "--server": o.servers = try value(a).split(separator: ",").map(String.init)
            case "--stream": o.stream = try value(a)
            case "--replicas":
                guard let r = Int(try value(a)), (1...5).contains(r) else {
                    throw Usage(message: "--replicas takes 1 to 5")
                }
                o.replicas = r
            case "--partitions":
                let text = try value(a)
                if command == "publish" {
                    guard let n = Int(text), n > 0, n <= 4096 else {
                        throw Usage(message: "--partitions takes the number of partitions, 1 to 4096")
                    }
                    o.partitionCount = n
                } else {
                    o.partitionList = text
                }
            case "--store": o.store = try value(a)
            case "--rejects": o.rejects = try value(a)
            case "--drain" where command == "consume": o.drain = true
            case "-q", "--quiet": o.quiet = true
            default:
                guard command == "publish", !a.hasPrefix("-") || a == "-" else {
                    throw Usage(message: "unknown option \(a) for \(command)")
                }
                o.files.append(a)
            }
            i += 1
        }
        guard !o.servers.isEmpty else { throw Usage(message: "name the NATS servers: --server nats://HOST:4222") }
        if command == "publish" && o.partitionCount == nil {
            throw Usage(message: "--partitions N is needed: the partition count the consumers use")
        }
        if command == "consume" {
            guard let list = o.partitionList else {
                throw Usage(message: "--partitions LIST is needed: the partitions this store owns, e.g. 0-3")
            }
            guard Partition.parseList(list, count: 4096) != nil else {
                throw Usage(message: "--partitions takes partition numbers and ranges, e.g. 0-3 or 1,5, not \(list)")
            }
        }
        return o
    }

    public static func run(_ args: [String]) -> Int32 {
        if args.contains("-h") || args.contains("--help") {
            print(usage)
            return 0
        }
        let options: Options
        do {
            options = try parse(args)
        } catch let usage as Usage {
            say(usage.message)
            return 2
        } catch {
            return 2
        }
        do {
            return options.command == "publish" ? try publish(options) : try consume(options)
        } catch {
            say("\(error)")
            return 74
        }
    }

    /// Connects, retrying with a growing pause while no server answers, and says so.
    static func connect(_ options: Options) throws -> JetStreamConnection {
        var pause: UInt32 = 1
        while true {
            do {
                return try JetStreamConnection(servers: options.servers) { say($0) }
            } catch let failure as NATSFailure where failure.isUnreachable {
                say("no NATS server answers at \(options.servers.joined(separator: ",")); trying again in \(pause) s")
                if stopRequested() { throw failure }
                sleep(pause)
                pause = min(pause * 2, 30)
            }
        }
    }

    static func publish(_ options: Options) throws -> Int32 {
        let connection = try connect(options)
        try connection.ensureStream(options.stream, replicas: options.replicas)
        let publisher = Publisher(connection: connection, partitions: options.partitionCount!)
        for file in options.files.isEmpty ? ["-"] : options.files {
            let fd = file == "-" ? 0 : open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                say("cannot read \(file): \(String(cString: strerror(errno)))")
                return 74
            }
            defer { if fd != 0 { close(fd) } }
            let reader = LineReader(fd: fd)
            let name = file == "-" ? "stdin" : file
            while let line = try reader.next() {
                if line.content.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                for (label, reason) in try publisher.publish(Array(line.content), label: "\(name):\(line.number)") {
                    say("\(label): \(reason)")
                }
            }
        }
        for (label, reason) in try publisher.finish() { say("\(label): \(reason)") }
        let s = publisher.summary
        if !options.quiet || s.rejected > 0 || s.failed > 0 {
            say(
                "published \(s.published) of \(s.read) events to \(options.stream): \(s.stored) stored, "
                    + "\(s.duplicates) already there, \(s.rejected) rejected, \(s.failed) not acknowledged")
        }
        for failure in publisher.failures() { say("not acknowledged: \(failure)") }
        if s.failed > 0 { return 74 }
        return s.rejected > 0 ? 65 : 0
    }

    static func consume(_ options: Options) throws -> Int32 {
        installStopHandlers()
        let partitions = Partition.parseList(options.partitionList!, count: 4096)!
        let path = options.store ?? getenv("PUSHTRAIL_STORE").map { String(cString: $0) } ?? "pushtrail.lmdb"
        let store = try Store(path: path, create: true)
        var rejectsFD: Int32 = -1
        if let rejects = options.rejects {
            rejectsFD = open(rejects, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard rejectsFD >= 0 else {
                say("cannot write \(rejects): \(String(cString: strerror(errno)))")
                return 74
            }
        }
        defer { if rejectsFD >= 0 { close(rejectsFD) } }
        let connection = try connect(options)
        try connection.ensureStream(options.stream, replicas: options.replicas)
        let consumer = try Consumer(
            connection: connection, store: store, stream: options.stream, partitions: partitions)
        // As for ingest: smaller transactions, for crash tests that kill among many commits.
        if let n = getenv("PUSHTRAIL_BATCH_EVENTS").flatMap({ Int(String(cString: $0)) }), n > 0 {
            consumer.batchEvents = n
        }
        consumer.tell = { say($0) }
        consumer.stopping = stopRequested
        let terminal = isatty(2) == 1 && !options.quiet
        var lastProgress = 0.0
        // Unowned: the consumer holds this closure, and must be freed at the end (its
        // store then trims its file, and its consumers on the server are deleted).
        let progress = { [unowned consumer] in
            guard terminal, monotonicSeconds() - lastProgress > 1 else { return }
            lastProgress = monotonicSeconds()
            let lag = partitions.map { "\($0):\(consumer.lag[$0] ?? 0)" }.joined(separator: " ")
            writeError("\rconsumed \(consumer.received) messages; lag by partition \(lag)\u{1B}[K")
        }
        consumer.onRound = progress
        var pause: UInt32 = 1
        while !stopRequested() {
            let stored: Int?
            do {
                stored = try consumer.step(waitMilliseconds: options.drain ? 500 : 1000, clock: WallClock.now) { r in
                    say("\(r.label): \(r.reason)")
                    if rejectsFD >= 0 {
                        let line = r.data + (r.data.last == 0x0A ? [] : [0x0A])
                        _ = line.withUnsafeBytes { write(rejectsFD, $0.baseAddress, $0.count) }
                    }
                }
                pause = 1
            } catch let failure as NATSFailure {
                // Nothing of the batch was kept; the partitions are read again from the
                // store's positions once NATS answers (the consumer subscribes again
                // those it could not).
                say("\(failure); trying again in \(pause) s")
                sleep(pause)
                pause = min(pause * 2, 30)
                continue
            }
            progress()
            if stored == nil && options.drain {
                do {
                    if try consumer.caughtUp() { break }
                } catch let failure as NATSFailure {
                    say("\(failure); trying again in \(pause) s")
                    sleep(pause)
                    pause = min(pause * 2, 30)
                }
            }
        }
        if terminal { writeError("\r\u{1B}[K") }
        let s = consumer.summary
        let through = partitions.map { "\($0)@\(consumer.positions[$0] ?? 0)" }.joined(separator: " ")
        say(
            "consumed \(s.read) messages of \(options.stream): \(s.appended) appended, \(s.duplicates) duplicates, "
                + "\(s.rejected) rejected; stored through \(through)")
        return s.rejected > 0 ? 65 : 0
    }

    static func say(_ line: String) { writeError("pushtrail: \(line)\n") }

    static func writeError(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// SIGTERM and SIGINT ask the consumer to finish its batch and stop.
nonisolated(unsafe) private var stopSignal: sig_atomic_t = 0

private func installStopHandlers() {
    signal(SIGTERM) { _ in stopSignal = 1 }
    signal(SIGINT) { _ in stopSignal = 1 }
}

private func stopRequested() -> Bool { stopSignal != 0 }
