import TestSupport
import Testing

@testable import PushTrailModel
@testable import PushTrailStore

#if os(Linux)
    @Suite("MapPrefaulter: the writer's next map pages, faulted in from the other thread")
    struct MapPrefaulterTests {
        @Test("a maps line names the store's mapping only when it is data.mdb, shared, writable and from offset 0")
        func mapsLines() {
            func range(_ line: String, _ address: Int) -> (start: Int, end: Int)? {
                MapPrefaulter.mappingRange(Array(line.utf8)[...], containing: address)
            }
            let base = 0x7f02_5be0_0000
            let end = 0x7f03_2000_0000
            let good =
                "7f025be00000-7f0320000000 rw-s 00000000 fd:01 1234567                    /tmp/a b/store/data.mdb"
            #expect(range(good, base)! == (base, end))
            #expect(range(good, end - 1)! == (base, end))
            #expect(range(good, end) == nil)
            #expect(range(good, base - 1) == nil)
            for bad in [
                "7f025be00000-7f0320000000 rw-p 00000000 fd:01 1234567 /tmp/store/data.mdb",  // private
                "7f025be00000-7f0320000000 r--s 00000000 fd:01 1234567 /tmp/store/data.mdb",  // read-only
                "7f025be00000-7f0320000000 rw-s 00001000 fd:01 1234567 /tmp/store/data.mdb",  // not from the start
                "7f025be00000-7f0320000000 rw-s 00000000 fd:01 1234567 /tmp/store/lock.mdb",  // another file
                "7f025be00000-7f0320000000 rw-s 00000000 fd:01 1234567 /tmp/store/xdata.mdb",
                "7f025be00000-7f0320000000 rw-s 00000000 fd:01 1234567 /tmp/store/data.mdb (deleted)",
                "7f025be00000-7f0320000000 rw-s 00000000 00:00 0",  // anonymous
                "7f025be00000-7f0320000000 rw-s",  // cut short
                "7f025bg00000-7f0320000000 rw-s 00000000 fd:01 1234567 /tmp/store/data.mdb",  // not hex
            ] {
                #expect(range(bad, base + 4096) == nil, "\(bad)")
            }
        }

        @Test("inside a write transaction it faults in pages past the last commit only, and the store stays intact")
        func populatesPastTheCommittedPages() throws {
            try withStore { store, _ in
                // A first commit, so that there are committed pages to stay clear of.
                try appendTimeline(store)
                let prefaulter = try #require(MapPrefaulter.make())
                let lines = (0..<2000).map { i in
                    Fixture.action.with("id", jsonString("act-p\(i)")).with("task_id", "\(i % 50)")
                }
                let batch = try lines.map(pendingEvent)
                try store.write(recordedAt: fixedClock) { writer in
                    defer { prefaulter.pause() }
                    let used = store.fileBytes
                    _ = try writer.append(batch)
                    #expect(writer.newestRecord != 0)
                    let mapping = try #require(MapPrefaulter.storeMapping(containing: writer.newestRecord))
                    prefaulter.advance(to: writer.newestRecord, usedBytes: used)
                    prefaulter.populate()
                    let populated = try #require(prefaulter.lastPopulated)
                    #expect(populated.lowerBound >= mapping.start + used)
                    #expect(populated.lowerBound >= writer.newestRecord & ~4095)
                    #expect(populated.upperBound <= min(writer.newestRecord + MapPrefaulter.ahead, mapping.end))
                    #expect(prefaulter.populatedBytes == populated.count)
                    // Populated pages are still zero: nothing was written to them.
                    let last = UnsafeRawPointer(bitPattern: populated.upperBound - 8)!
                    #expect(last.loadUnaligned(as: UInt64.self) == 0)
                    // Again: nothing new until the records move on.
                    prefaulter.populate()
                    #expect(prefaulter.populatedBytes == populated.count)
                    // Records in a reused page, below what the last commit used: the pages
                    // below that line hold committed data and are never touched.
                    let other = try #require(MapPrefaulter.make())
                    other.advance(to: mapping.start + 4096, usedBytes: used)
                    other.populate()
                    if let range = other.lastPopulated { #expect(range.lowerBound >= mapping.start + used) }
                    #expect(
                        other.populatedBytes
                            == max(
                                0, min(mapping.start + 4096 + MapPrefaulter.ahead, mapping.end) - (mapping.start + used)
                            ))
                }
                // Paused: the map may move now.
                let before = prefaulter.populatedBytes
                prefaulter.populate()
                #expect(prefaulter.populatedBytes == before)
                let report = try store.verify()
                #expect(report.ok, "\(report)")
                #expect(report.events == 4 + 2000)
            }
        }
    }
#endif
