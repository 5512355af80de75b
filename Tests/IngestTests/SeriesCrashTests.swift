import Foundation
import HealthGateTesting
import HealthModel
@testable import HealthStore
import Simulators
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Quantity series under a crash (issue #12): `healthgate run` writing two straps' heart rate
/// as series through the pipeline, SIGKILLed while each strap's chunk is open (a chunk holds
/// 120 readings, 30 s at 4 Hz), leaves a sound file, loses no more than the flush window, and
/// the next run continues the same series.
@Suite(.serialized) struct SeriesCrashTests {
    static let flushMs = 250
    /// Beyond one flush window: the commit in flight and the scheduling delay of a loaded
    /// machine (as RunSigkillTests); a writer that kept a chunk in memory until it filled would
    /// lose up to 30 s here and fail.
    static let inFlightAllowance = 2.0

    struct SeriesRow: Equatable {
        var uuid: UUID, device: String, count: Int, open: Int, chunkSum: Int, lastChunk: Int
    }

    /// The heart-rate series (the straps' energy readings are series of their own).
    static func seriesRows(_ store: HealthStore) throws -> [SeriesRow] {
        try store.withConnection { db in
            let st = try db.prepare("""
                SELECT s.uuid, d.name, \(SeriesTotalsSQL.count("s")), s.open,
                       (SELECT sum(count) FROM series_chunks c WHERE c.series_id = s.id),
                       (SELECT count FROM series_chunks c WHERE c.series_id = s.id ORDER BY seq DESC LIMIT 1)
                FROM series s JOIN devices d ON d.id = s.device_id
                WHERE s.type_id = (SELECT id FROM types WHERE identifier = 'heartRate') ORDER BY s.id
                """, cached: false)
            var out: [SeriesRow] = []
            while try st.step() {
                out.append(SeriesRow(uuid: st.uuid(0)!, device: st.string(1) ?? "?", count: st.int(2), open: st.int(3),
                                     chunkSum: st.int(4), lastChunk: st.int(5)))
            }
            return out
        }
    }

    @Test func sigkillMidChunkKeepsTheSeriesWithinTheBoundAndTheNextRunContinuesIt() async throws {
        let load = try SimulatedLoad(directory: shortTempDirectory("scrash"), straps: 2, rate: 4, pedometers: 0)
        defer { load.stop() }
        load.start()
        let db = tempDBPath("series-crash")
        // A few more seconds of readings after each strap has some: the open chunks hold
        // some, none is full yet.
        let killed = try await sigkillRunMidIngest(load, db: db, flushMs: Self.flushMs, inFlightAllowance: Self.inFlightAllowance,
                                                   moreSent: 24) { probe in
            load.straps.allSatisfy { probe.heartRate($0.name) >= 8 }
        }
        let (probe, config) = (killed.probe, killed.config)
        // Heart rate is in series only: one per strap, still marked open, killed mid-chunk; its
        // row agrees with its chunks and its quantities are numbered without a hole.
        let before = try Self.seriesRows(probe.store)
        #expect(before.count == 2 && Set(before.map(\.device)) == Set(load.straps.map(\.name)))
        for s in before {
            #expect(s.open == 1 && s.count == s.chunkSum && s.count == probe.heartRate(s.device))
            #expect(s.lastChunk > 0 && s.lastChunk < SeriesWriter.chunkQuantities, "\(s.device): killed with \(s.lastChunk) readings in the open chunk")
            let q = try probe.store.samples(SampleQuery(uuids: [s.uuid]))
            #expect(Set(q.compactMap(\.seriesIndex)) == Set(0..<s.count))
        }
        let keptBefore = try probe.store.samples(SampleQuery(type: .heartRate))

        // The next run (within the 60 s a series allows) continues each strap's series.
        let second = try Child(["run", "--config", config, "--db", db])
        let countBefore = Dictionary(before.map { ($0.device, $0.count) }, uniquingKeysWith: max)
        #expect(await eventually(seconds: 180) {
            load.straps.allSatisfy { strap in probe.heartRate(strap.name) >= (countBefore[strap.name] ?? 0) + 12 }
        }, "\(second.stderr)")
        second.signal(SIGTERM)
        let status = await offThread { second.wait() }
        #expect(status == 0, "\(second.stderr)")
        #expect(try probe.integrity() == "ok")
        let after = try Self.seriesRows(probe.store)
        #expect(after.map(\.uuid) == before.map(\.uuid), "the same series, grown")
        for (a, b) in zip(after, before) {
            #expect(a.count > b.count && a.count == a.chunkSum)
            let q = try probe.store.samples(SampleQuery(uuids: [a.uuid]))
            #expect(Set(q.compactMap(\.seriesIndex)) == Set(0..<a.count))
        }
        // Nothing stored before the kill changed.
        let keptAfter = try probe.store.samples(SampleQuery(type: .heartRate))
        let byKey = Dictionary(uniqueKeysWithValues: keptAfter.map { ("\($0.uuid)/\($0.seriesIndex!)", $0) })
        for s in keptBefore { #expect(byKey["\(s.uuid)/\(s.seriesIndex!)"] == s) }
    }
}
