import BedrudCore
import Synchronization

/// One side of the smoke test: its login, and its room session once connecting.
final class SmokeSide: Sendable {
    let name: String
    let plan: JoinPlan
    let transport: WebRTCTransport
    private let sessionBox = Mutex<RoomSession?>(nil)
    var session: RoomSession? { sessionBox.withLock { $0 } }

    init(name: String, plan: JoinPlan, transport: WebRTCTransport) {
        self.name = name
        self.plan = plan
        self.transport = transport
    }

    func connect(_ join: JoinRoomResponse) async {
        let session = RoomSession(plan: plan, join: join, transport: transport)
        sessionBox.withLock { $0 = session }
        await session.connect()
    }

    /// Why the side's room ended, if it has.
    var ended: RoomDisconnectReason? { session?.ended }

    func leave() async -> RoomDisconnectReason? { await session?.end() }
}
