import Foundation
import PushTrailModel
import PushTrailStore
import TestSupport
import Testing

/// The server keeps decoded events for later questions (`StoreOptions.keptEvents`): its
/// answers must be the ones a store without them gives, warm or cold, at any horizon,
/// with the kept events turned over many times.
@Suite("Decoded events kept between questions change no answer")
struct DecodedEventsTests {
    @Test("task and thread reports, cold and warm, at several horizons, equal a store's that keeps nothing")
    func sameAnswers() throws {
        try withTemporaryDirectory { dir in
            let input = dir + "/events.ndjson"
            try AgreementFixtures.generate(
                ["--events", "6000", "--seed", "5", "--anomalies", "0.05", "--android-share", "0.3", "-o", input],
                in: dir)
            var options = StoreOptions()
            options.noSync = true
            let plain = try Store(path: dir + "/store", create: true, options: options)
            let summary = try Ingest(
                store: plain, sources: [.file(input)], options: IngestOptions(),
                clock: { AgreementFixtures.recordedAt }
            ).run()
            #expect(summary.appended == 6000)
            // A small capacity, so that the questions below turn the kept events over.
            var keeping = StoreOptions()
            keeping.keptEvents = 64
            let kept = try Store(path: dir + "/store", create: false, options: keeping)

            var taskIDs = Set<Int64>()
            var times: [Timestamp] = []
            try plain.read { r in
                try r.log(LogQuery()) {
                    if let t = $0.event.taskID { taskIDs.insert(t) }
                    times.append($0.event.at)
                    return true
                }
            }
            let tasks = taskIDs.sorted()
            #expect(tasks.count > 100)
            // No horizon, two times within the stream, and a seq half way.
            let horizons: [Horizon?] = [
                nil, .time(times[times.count / 3]), .time(times[2 * times.count / 3]), .sequence(3000),
            ]
            func answers(_ store: Store, _ id: Int64, _ horizon: Horizon?) throws -> String {
                try store.read { r in
                    let task = try r.taskReport(id, horizon: horizon).map {
                        Presentation.task($0, asOf: "", tokens: { $0 }).serialized()
                    }
                    let thread = try r.threadReport("task-\(id)", horizon: horizon).map {
                        Presentation.thread($0, asOf: "", tokens: { $0 }).serialized()
                    }
                    return (task ?? "no task") + "\n" + (thread ?? "no thread")
                }
            }
            var compared = 0
            // Twice over: the second pass finds many events kept by the first.
            for _ in 0..<2 {
                for id in tasks.prefix(150) {
                    for horizon in horizons {
                        let expected = try answers(plain, id, horizon)
                        #expect(
                            try answers(kept, id, horizon) == expected, "task \(id) at \(String(describing: horizon))")
                        compared += 1
                    }
                }
            }
            #expect(compared == 2 * 150 * horizons.count)
        }
    }
}
