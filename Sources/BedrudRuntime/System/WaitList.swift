/// The bookkeeping of timed waits: entries (a continuation, and whatever the owner needs
/// to decide when to resume it) parked until the owner's condition holds, or until their
/// time runs out. Kept inside the owner's mutex beside the state the condition reads, so
/// that looking at the condition and parking are one step under one lock.
///
/// A wait's timer runs on another task and can fire before the wait has parked: ``end(_:)``
/// then leaves a mark, ``park(_:_:)`` refuses that wait, and it returns at once. Pure.
public struct WaitList<Entry: Sendable>: Sendable {
    private var parked: [UInt64: Entry] = [:]
    /// Waits ended (timed out, cancelled) before they parked, or after they were resumed.
    private var endedEarly: Set<UInt64> = []
    private var lastID: UInt64 = 0

    public init() {}

    /// Entries parked now.
    public var count: Int { parked.count }

    /// The id of a new wait: take it before starting the wait's timer.
    public mutating func open() -> UInt64 {
        lastID &+= 1
        return lastID
    }

    /// Parks wait `id`'s entry; false (nothing parked: resume it yourself) when the wait
    /// has ended already.
    public mutating func park(_ id: UInt64, _ entry: Entry) -> Bool {
        if endedEarly.remove(id) != nil { return false }
        parked[id] = entry
        return true
    }

    /// Ends wait `id` (its timeout or its task's cancellation): its entry, to be resumed,
    /// when it is parked; else nil, and the wait will not park.
    public mutating func end(_ id: UInt64) -> Entry? {
        if let entry = parked.removeValue(forKey: id) { return entry }
        endedEarly.insert(id)
        return nil
    }

    /// Takes wait `id`'s entry out if it is parked, and leaves no mark: for an owner that
    /// parks before its timer can fire (one thread), where an end after the resume is moot.
    public mutating func remove(_ id: UInt64) -> Entry? {
        parked.removeValue(forKey: id)
    }

    /// Forgets wait `id` once it has returned (an end that came after it was resumed left a mark).
    public mutating func close(_ id: UInt64) {
        endedEarly.remove(id)
    }

    /// Takes out the entries `ready` accepts, to be resumed.
    public mutating func take(where ready: (Entry) -> Bool) -> [Entry] {
        var taken: [Entry] = []
        for (id, entry) in parked where ready(entry) {
            taken.append(entry)
            parked[id] = nil
        }
        return taken
    }

    /// Takes out every entry, to be resumed.
    public mutating func takeAll() -> [Entry] {
        defer { parked = [:] }
        return Array(parked.values)
    }
}

/// A timed wait's safety net: a task that calls `fire` once `seconds` have passed
/// (at most 10⁹ s), unless it is cancelled first.
public func waitTimeout(seconds: Double, _ fire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
    Task {
        guard (try? await Task.sleep(for: .milliseconds(Int64(min(max(seconds, 0), 1e9) * 1000)))) != nil else { return }
        fire()
    }
}
