import BedrudRuntime
import Testing

/// `WaitList`: the timed-wait bookkeeping RoomSession, WebRTCTransport and PeerTransport share.
@Suite struct WaitListTests {
    @Test func aWaitEndedBeforeItParksIsRefusedAndItsMarkIsForgotten() {
        var list = WaitList<String>()
        let id = list.open()
        let ended = list.end(id)              // the timer fired first
        let parked = list.park(id, "late")    // so the wait returns at once
        #expect(ended == nil && !parked && list.count == 0)
        list.close(id)
        let next = list.open()
        let parkedNext = list.park(next, "parked")
        #expect(next != id && parkedNext && list.count == 1)
    }

    @Test func anEndTakesOutAParkedEntryOnce() {
        var list = WaitList<String>()
        let a = list.open(), b = list.open()
        let parked = (list.park(a, "a"), list.park(b, "b"))
        #expect(parked == (true, true))
        let endA = list.end(a), removeA = list.remove(a)
        #expect(endA == "a" && removeA == nil && list.count == 1)
        let removeB = list.remove(b)
        let lateEnd = list.end(b)             // an end after the resume leaves a mark …
        list.close(b)                         // … that the returning wait forgets
        #expect(removeB == "b" && lateEnd == nil && list.count == 0)
        let again = list.park(b, "b again")   // no mark left: a park under b's id is taken
        #expect(again)
    }

    @Test func takeResumesOnlyTheReadyAndTakeAllTheRest() {
        var list = WaitList<Int>()
        for n in 1...5 { _ = list.park(list.open(), n) }
        let even = list.take { $0 % 2 == 0 }.sorted()
        #expect(even == [2, 4] && list.count == 3)
        let rest = list.takeAll().sorted(), none = list.takeAll()
        #expect(rest == [1, 3, 5] && none.isEmpty && list.count == 0)
    }
}
