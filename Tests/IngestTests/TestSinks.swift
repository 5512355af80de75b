import Foundation
import HealthGateTesting
import Synchronization
@testable import Ingest
import Locking

/// A sink that remembers every committed record's tag, and can be told to stall or fail.
/// (Test double for the writer's contract; the SQLite-backed sink is tested on a real DB.)
final class RecordingSink: SampleSink, @unchecked Sendable {
    struct State {
        var committed: [UInt64] = []
        var batchSizes: [Int] = []
        var attempts = 0
        var failNext: Int = 0
        var failKind: SinkError.Kind = .diskFull
        var failEvery: Int = 0
        var maxStallMicros: UInt32 = 0
    }
    let state = Lock(State())
    private let rngState = Lock(UInt64(0x9E3779B97F4A7C15))

    func write(_ records: UnsafeBufferPointer<SampleRecord>, slots: SlotTable) throws(SinkError) {
        let (fail, kind, stall) = state.withLock { s -> (Bool, SinkError.Kind, UInt32) in
            s.attempts += 1
            var fail = false
            if s.failNext > 0 { s.failNext -= 1; fail = true }
            if s.failEvery > 0, s.attempts % s.failEvery == 0 { fail = true }
            return (fail, s.failKind, s.maxStallMicros)
        }
        if stall > 0 { usleep(UInt32(nextRandom() % UInt64(stall))) }
        if fail { throw SinkError(kind, "injected \(kind.rawValue)") }
        let tags = records.map(\.tag)
        state.withLock { s in
            s.committed += tags
            s.batchSizes.append(tags.count)
        }
    }

    private func nextRandom() -> UInt64 {
        rngState.withLock { x in
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            return x
        }
    }

    var committed: [UInt64] { state.withLock { $0.committed } }
}


