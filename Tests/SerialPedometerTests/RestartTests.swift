import Foundation
import HealthModel
import HealthStore
import Testing
@testable import SerialPedometer

/// Stores one pedometer's samples in batches with the counter state after them in the same
/// transaction (`HealthStore.save(_:state:)`), as the ingest writer does with a pedometer's side
/// channel: the rule these tests check against a real store, without the pipeline around it.
final class BatchRecorder {
    let store: HealthStore
    let key: String
    private(set) var pending: [QuantitySample] = []
    private(set) var saved = 0
    static let source = Source(name: "HealthGate serial", identifier: "org.healthgate.serial")

    init(store: HealthStore, deviceID: String) {
        self.store = store
        self.key = "serial.counter.\(deviceID)"
    }

    func loadState() throws -> CounterState? {
        try store.state(key).flatMap { try? JSONDecoder().decode(CounterState.self, from: $0) }
    }

    func add(_ interval: StepInterval) throws { pending.append(try interval.quantitySample(source: Self.source, device: nil)) }

    func flush(state: CounterState) throws {
        try store.save(pending, state: [key: try JSONEncoder().encode(state)])
        saved += pending.count
        pending.removeAll()
    }
}

/// A gateway restart in the middle of a stream: totals stay exact, using a real SQLite store.
@Suite struct RestartTests {
    private func tempDB() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hg-serial-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("health.sqlite").path
    }

    private func storedSteps(_ path: String) throws -> Double {
        try HealthStore(path: path).samples(SampleQuery(type: .stepCount)).reduce(0) { $0 + $1.quantity.value }
    }

    /// Runs `lines` through a session that flushes every `batch` samples; returns the session.
    private func run(_ lines: ArraySlice<(String, Double)>, db: String, batch: Int, flushAtEnd: Bool) throws -> Int {
        let store = try HealthStore(path: db)
        let recorder = BatchRecorder(store: store, deviceID: "PTY")
        let state = try recorder.loadState() ?? CounterState()
        var session = makeSession(state: state)
        for (line, t) in lines {
            for e in session.feed(Array((line + "\n").utf8), receivedAt: Date(timeIntervalSince1970: t)) {
                if case .sample(let s) = e { try recorder.add(s) }
            }
            if recorder.pending.count >= batch { try recorder.flush(state: session.counter.state) }
        }
        if flushAtEnd { try recorder.flush(state: session.counter.state) }
        return recorder.saved
    }

    private var stream: [(String, Double)] {
        // 60 lines, one per second: +3 steps each, a reset (boot change) at line 30, a duplicate.
        var out: [(String, Double)] = []
        var c = 1000
        for i in 0..<60 {
            if i == 30 { c = 0 }
            c += 3
            out.append(("{\"steps\":\(c),\"seq\":\(i),\"boot\":\"\(i < 30 ? "A" : "B")\"}", 1_700_000_000 + Double(i)))
            if i == 45 { out.append(out.last!) }
        }
        return out
    }
    // True steps: line 0 is the baseline (1003); lines 1–29 add 3 each (87); line 30 is the
    // reset with 3 steps since power-up; lines 31–59 add 3 each (87). Total 177.
    private let trueTotal = 177.0

    @Test func cleanRestartMidStreamKeepsTotalsExact() throws {
        let db = tempDB()
        let lines = stream[...]
        _ = try run(lines[..<25], db: db, batch: 5, flushAtEnd: true)
        _ = try run(lines[25...], db: db, batch: 5, flushAtEnd: true)
        #expect(try storedSteps(db) == trueTotal)
    }

    @Test func crashBeforeAFlushLosesNothing() throws {
        let db = tempDB()
        let lines = stream[...]
        // The first run dies with unflushed samples (batch of 7, no final flush) …
        _ = try run(lines[..<40], db: db, batch: 7, flushAtEnd: false)
        // … and the restarted gateway resumes from the last committed state.
        _ = try run(lines[40...], db: db, batch: 7, flushAtEnd: true)
        #expect(try storedSteps(db) == trueTotal)
    }

    @Test func replayingAfterRestartNeverDoubleCounts() throws {
        let db = tempDB()
        let lines = stream[...]
        _ = try run(lines[..<35], db: db, batch: 4, flushAtEnd: true)
        // The device resends its last 20 lines after the restart (same seq, same boot).
        _ = try run(lines[15...], db: db, batch: 4, flushAtEnd: true)
        #expect(try storedSteps(db) == trueTotal)
    }

    @Test func sameSamplesSavedTwiceAreStoredOnce() throws {
        let db = tempDB()
        let store = try HealthStore(path: db)
        var counter = StepCounter(configuration: try CounterConfiguration(deviceID: "X"))
        _ = counter.process(PedometerReading(steps: 1, seq: 1), receivedAt: Date(timeIntervalSince1970: 10))
        let out = counter.process(PedometerReading(steps: 9, seq: 2), receivedAt: Date(timeIntervalSince1970: 11))
        for _ in 0..<2 {  // a retried batch: new sample UUIDs, the same sync identifiers
            let r = BatchRecorder(store: store, deviceID: "X")
            for s in out.samples { try r.add(s) }
            try r.flush(state: counter.state)
        }
        #expect(try storedSteps(db) == 8)
    }
}
