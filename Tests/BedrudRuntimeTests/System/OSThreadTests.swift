import BedrudRuntime
import Foundation
import Testing

@Suite struct OSThreadTests {
    @Test func osThreadRunsNamedAndLockGuards() async {
        let lock = PosixLock()
        final class Box: @unchecked Sendable { var name = ""; var n = 0 }
        let box = Box()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            OSThread.start(name: "bedrud.test.thread.long", stackSize: 1 << 20) {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                lock.withLock {
                    box.name = comm.trimmingCharacters(in: .newlines)
                    box.n += 1
                }
                c.resume()
            }
        }
        #expect(lock.withLock { box.name } == "bedrud.test.thr")
        #expect(lock.withLock { box.n } == 1)
    }
}
