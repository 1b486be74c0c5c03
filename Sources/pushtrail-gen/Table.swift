/// Fixed-size storage for the simulation's records (tasks, users, devices, homes):
/// allocated once and never resized or freed, with unchecked element access so the hot
/// loop does no bounds or copy-on-write uniqueness checks. Indices come from the
/// generator itself, never from input.
struct Table<Element> {
    let base: UnsafeMutablePointer<Element>
    let count: Int

    init(_ elements: [Element]) {
        count = elements.count
        base = .allocate(capacity: max(1, count))
        elements.withUnsafeBufferPointer { source in
            if let start = source.baseAddress { base.initialize(from: start, count: count) }
        }
    }

    init(repeating value: Element, count: Int) {
        self.count = count
        base = .allocate(capacity: max(1, count))
        base.initialize(repeating: value, count: count)
    }

    subscript(index: Int) -> Element {
        @inline(__always) unsafeAddress { UnsafePointer(base + index) }
        @inline(__always) nonmutating unsafeMutableAddress { base + index }
    }
}
