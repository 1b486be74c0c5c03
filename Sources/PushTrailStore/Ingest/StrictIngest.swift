import PushTrailModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The all-or-nothing ingest (`--strict`): every line in one write transaction, on this
/// thread, so that the first bad line or conflict leaves the store as it was. It has no
/// pipeline because it cannot commit part of the input, and it need not be fast.
extension Ingest {
    private struct StrictStop: Error {
        let rejection: Rejection
        /// Lines read before the stop.
        var read = 0
    }

    func runStrict() throws -> IngestSummary {
        // Standard input cannot be read twice, and a retry after the map grows must
        // start over: spool it to a private file first.
        var spooled: String?
        defer { if let spooled { unlink(spooled) } }
        let inputs = try sources.map { source -> InputSource in
            guard source.path == nil else { return source }
            let path = try Ingest.spool(standardInputInto: store.path)
            spooled = path
            return InputSource(name: source.name, path: path)
        }
        var result = IngestSummary()
        // Records are compressed with the store's dictionary when it has one; an
        // all-or-nothing ingest does not train one.
        let compressor =
            options.compress ? try store.latestDictionary().flatMap { RecordCompressor(dictionary: $0) } : nil
        do {
            result = try store.write(recordedAt: clock) { writer in
                var summary = IngestSummary()
                var decoder = EventDecoder()
                var bytesRead = 0
                for source in inputs {
                    let fd = try source.open()
                    defer { close(fd) }
                    let reader = LineReader(fd: fd)
                    var batch: [PendingEvent] = []
                    func flush() throws {
                        compressor?.compress(&batch)
                        let outcomes = try writer.append(batch, dictionary: compressor?.dictionary)
                        try batch.withUnsafeBufferPointer { events in
                            for i in outcomes.indices {
                                if case .conflict(let seq) = outcomes[i] {
                                    throw StrictStop(rejection: Ingest.conflict(events[i], seq), read: summary.read)
                                }
                                tally(outcomes[i], events.baseAddress! + i, into: &summary)
                            }
                        }
                        batch.removeAll(keepingCapacity: true)
                        onProgress(summary, bytesRead + reader.bytesRead)
                    }
                    while let line = try reader.next() {
                        guard !Ingest.isBlank(line.bytes) else { continue }
                        summary.read += 1
                        switch Ingest.decode(line, source: source.name, decoder: &decoder) {
                        case .success(let pending): batch.append(pending)
                        case .failure(let rejection): throw StrictStop(rejection: rejection, read: summary.read)
                        }
                        if batch.count >= TransactionPolicy.handoffLimit(options).events { try flush() }
                    }
                    try flush()
                    bytesRead += reader.bytesRead
                }
                return summary
            }
        } catch let stop as StrictStop {
            var summary = IngestSummary()
            summary.read = stop.read
            report(stop.rejection, into: &summary)
            return summary
        }
        return result
    }

    private func tally(
        _ outcome: AppendOutcome, _ pending: UnsafePointer<PendingEvent>, into summary: inout IngestSummary
    ) {
        switch outcome {
        case .appended(let seq):
            summary.appended += 1
            if summary.firstSeq == nil { summary.firstSeq = seq }
            summary.lastSeq = seq
        case .duplicate:
            summary.duplicates += 1
        case .conflict(let seq):
            report(Ingest.conflict(pending.pointee, seq), into: &summary)
        }
    }
}
