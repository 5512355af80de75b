import Foundation
import GATT
import Simulators
import Synchronization
import HealthModel
import HealthStore
import HealthGateTesting
import HeartRateProfile
import Logging
import Testing
@testable import Gateway
@testable import Ingest
import Locking

/// The daemon's allocation-free notification → record mapping stores what `live`'s
/// `HeartRateSampleBuilder` stores (heart rate, contact, location, RR with gap marks, energy
/// intervals across resets and reconnects), and `run`'s strap path really writes it.
@Suite struct HeartRateRecordMapperTests {
    /// A Heart Rate Measurement payload: uint8 bpm, contact bits, optional energy and RR.
    static func payload(bpm: UInt8, contact: UInt8 = 3, energy: UInt16? = nil, rr: [UInt16] = []) -> [UInt8] {
        var flags = contact << 1
        if energy != nil { flags |= 0x08 }
        if !rr.isEmpty { flags |= 0x10 }
        var p: [UInt8] = [flags, bpm]
        if let e = energy { p += [UInt8(e & 0xFF), UInt8(e >> 8)] }
        for t in rr { p += [UInt8(t & 0xFF), UInt8(t >> 8)] }
        return p
    }

    struct Step { var payload: [UInt8]; var t: Double; var reconnect = false }

    /// Energy growth, a reset, saturation, 0 bpm carrying RR, invalid RR ticks before and after
    /// valid ones, a long run without RR, a reconnect, and no-contact readings.
    static let script: [Step] = {
        var s: [Step] = []
        var t = 1_790_000_000.0
        func add(_ p: [UInt8], reconnect: Bool = false) { s.append(Step(payload: p, t: t, reconnect: reconnect)); t += 1 }
        add(payload(bpm: 70, energy: 100, rr: [880]))
        add(payload(bpm: 71, energy: 103, rr: [870, 860]))
        add(payload(bpm: 0, energy: 103, rr: [850]))                // no reading: RR dropped, gap next
        add(payload(bpm: 72, energy: 110, rr: [840]))
        add(payload(bpm: 73, rr: [830, 0xFFFF, 820]))                // only 820 placeable, with a gap
        add(payload(bpm: 74, rr: [0]))                               // nothing placeable
        add(payload(bpm: 75, energy: 5, rr: [810]))                  // energy reset to 5
        add(payload(bpm: 76, contact: 2))                            // no RR, no contact
        t += 10
        add(payload(bpm: 77, contact: 0, rr: [800]))                 // long silence without RR: gap
        add(payload(bpm: 78, energy: 0xFFFF, rr: [790]), reconnect: true)
        add(payload(bpm: 79, energy: 0xFFFF, rr: [780]))             // saturated: no energy
        add(payload(bpm: 80, energy: 12, rr: [770, 760, 750]))
        t -= 3600                                                    // the clock steps back an hour
        add(payload(bpm: 81, energy: 20, rr: [740]))
        add([0x0E, 82, 0x10])                                        // energy announced, one byte: truncated
        return s
    }()

    struct Row: Equatable, CustomStringConvertible {
        var type: String, value: Double, start: Double, end: Double, rr: [UInt16], gap: Bool, contact: SensorContact?,
            location: HeartRateSensorLocation?, keys: [String]
        var description: String { "\(type) \(value) [\(start)…\(end)] rr=\(rr) gap=\(gap) contact=\(contact.map { "\($0)" } ?? "-") loc=\(location.map { "\($0)" } ?? "-") keys=\(keys)" }
    }

    @Test func mapsExactlyWhatLiveStores() throws {
        let table = SlotTable()
        let slots = try HeartRateRecordMapper.Slots(table: table, source: StrapSource.source, device: Device(localIdentifier: "AA:BB:CC:DD:EE:01"))
        var mapper = HeartRateRecordMapper(slots: slots, sensorLocation: .chest)
        var builder = HeartRateSampleBuilder(device: Device(localIdentifier: "AA:BB:CC:DD:EE:01"), sensorLocation: .chest)
        builder.connectionStarted()
        mapper.connectionStarted()
        var mine: [Row] = [], live: [Row] = []
        for step in Self.script {
            if step.reconnect {
                builder.connectionStarted(energyContinues: true)
                mapper.connectionStarted()
            }
            let m = try step.payload.withUnsafeBytes { try HeartRateMeasurement.decode($0) }
            mapper.map(m, at: step.t) { r, extra in
                #expect(extra == nil)
                let isHR = r.typeSlot == slots.heartRate
                let contact: SensorContact? = !isHR ? nil : !r.flags.contains(.contactSupported) ? .notSupported
                    : r.flags.contains(.contactDetected) ? .detected : .notDetected
                mine.append(Row(type: isHR ? "heartRate" : "activeEnergyBurned", value: r.value, start: r.start, end: r.end,
                                rr: r.rrTicks, gap: r.flags.contains(.rrPrecededByGap), contact: contact,
                                location: isHR ? r.heartRateSensorLocation : nil,
                                keys: (r.flags.contains(.payloadTruncated) ? [Metadata.payloadTruncatedKey] : [])
                                    + (r.flags.contains(.energySaturated) ? [Metadata.energySaturatedKey] : [])))
            }
            for s in try builder.add(m, receivedAt: Date(timeIntervalSince1970: step.t)).samples {
                live.append(Row(type: s.type.identifier, value: s.quantity.value, start: s.startDate.timeIntervalSince1970,
                                end: s.endDate.timeIntervalSince1970, rr: s.rrIntervals?.ticks ?? [],
                                gap: s.rrIntervals?.precededByGap ?? false,
                                contact: s.type == .heartRate ? (s.metadata.sensorContact ?? .notSupported) : nil,
                                location: s.metadata.heartRateSensorLocation, keys: s.metadata.user.keys.sorted()))
            }
        }
        #expect(mine == live)
        #expect(!mine.contains { $0.type == "heartRateVariabilitySDNN" })   // too short for a 60 s window
        // And the script did exercise what it claims to.
        // 100→103→110, reset to 5, 5→0xFFFF across the reconnect, saturated (nothing), reset to 12.
        // …and 12→20 across a clock step backwards: zero-length at the new time, never end < start.
        #expect(mine.filter { $0.type == "activeEnergyBurned" }.map(\.value) == [3, 7, 5, 65530, 12, 8])
        #expect(mine.allSatisfy { $0.start <= $0.end })
        #expect(mapper.skipped == 1 && mapper.energyResets == 2)
        #expect(mine.filter { $0.keys == [Metadata.payloadTruncatedKey] }.map(\.value) == [82])
        #expect(mine.filter { $0.keys == [Metadata.energySaturatedKey] }.map(\.value) == [65530])
    }

    @Test func sdnnWindowsMatchLive() throws {
        // 400 notifications 1 s apart, one or two RR each (800–1250 ticks, deterministic noise);
        // a 0xFFFF tick at #120, a 0-bpm reading at #230, a reconnect at #300, the clock stepped
        // back an hour at #350 (in the middle of a window): each starts a new window.
        var x: UInt64 = 0x2545F4914F6CDD1D
        func noise() -> UInt16 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return UInt16(x % 450) }
        let table = SlotTable()
        let device = Device(localIdentifier: "AA:BB:CC:DD:EE:03")
        let slots = try HeartRateRecordMapper.Slots(table: table, source: StrapSource.source, device: device)
        var mapper = HeartRateRecordMapper(slots: slots)
        var builder = HeartRateSampleBuilder(device: device, sensorLocation: nil)
        mapper.connectionStarted(); builder.connectionStarted()
        var mine: [(Double, Double, Double)] = [], live: [(Double, Double, Double)] = []
        for i in 0..<400 {
            let t = 1_790_000_000.0 + Double(i) - (i >= 350 ? 3600 : 0)
            if i == 300 { mapper.connectionStarted(); builder.connectionStarted(energyContinues: true) }
            var rr = [800 + noise()]
            if i % 3 == 0 { rr.append(800 + noise()) }
            if i == 120 { rr.insert(0xFFFF, at: 0) }
            let p = Self.payload(bpm: i == 230 ? 0 : 70, rr: rr)
            let m = try p.withUnsafeBytes { try HeartRateMeasurement.decode($0) }
            mapper.map(m, at: t) { r, _ in if r.typeSlot == slots.sdnn { mine.append((r.value, r.start, r.end)) } }
            for s in try builder.add(m, receivedAt: Date(timeIntervalSince1970: t)).samples where s.type == .heartRateVariabilitySDNN {
                live.append((s.quantity.value, s.startDate.timeIntervalSince1970, s.endDate.timeIntervalSince1970))
            }
        }
        #expect(live.count >= 4, "the series should complete several 60 s windows")
        #expect(mine.allSatisfy { $0.1 <= $0.2 }, "an SDNN window ends before it starts")
        #expect(mine.count == live.count)
        for (a, b) in zip(mine, live) {
            // The mapper's workspace correction against the builder's one-shot one: equal to
            // floating-point rounding, and to the mapper keeping values to 1 µs, starts to 1 ms.
            #expect(abs(a.0 - b.0) <= 0.0005 + 1e-9 && a.0 > 0, "SDNN \(a.0) vs \(b.0)")
            #expect(a.0 == HeartRateRecordMapper.storedHRV(a.0), "SDNN \(a.0) is not on the 1 µs grid")
            #expect(abs(a.1 - b.1) <= 0.0005 + 1e-6 && a.2 == b.2, "window [\(a.1), \(a.2)] vs [\(b.1), \(b.2)]")
            #expect(a.1 == (a.1 * 1000).rounded() / 1000, "window start \(a.1) is not on the 1 ms grid")
        }
    }

    @Test func moreRRThanFitInlineAllRideInAnAttachment() throws {
        let slots = try HeartRateRecordMapper.Slots(table: SlotTable(), source: StrapSource.source, device: nil)
        var mapper = HeartRateRecordMapper(slots: slots)
        mapper.connectionStarted()
        var out: [(SampleRecord, SampleAttachment?)] = []
        for (k, rr) in [[UInt16](800..<812), [820], [830]].enumerated() {
            let m = try Self.payload(bpm: 70, rr: rr).withUnsafeBytes { try HeartRateMeasurement.decode($0) }
            mapper.map(m, at: 1_790_000_000 + Double(k) * 10) { out.append(($0, $1)) }
        }
        // 12 intervals, 9 fit inline: all 12 go in the attachment, none is cut; the gap mark is
        // the connection's (the first RR after connecting), not a cut.
        #expect(out.count == 3)
        #expect(out[0].1?.rrIntervals == Array(800..<812) && out[0].0.rrCount == 0)
        #expect(out[0].0.flags.contains(.rrPrecededByGap))
        #expect(out[1].0.rrTicks == [820] && out[1].1 == nil && !out[1].0.flags.contains(.rrPrecededByGap))
        #expect(out[2].0.rrTicks == [830] && out[2].1 == nil && !out[2].0.flags.contains(.rrPrecededByGap))
    }

    @Test func rrBeyondTheDecodersCapacityAreReadFromThePayload() throws {
        let slots = try HeartRateRecordMapper.Slots(table: SlotTable(), source: StrapSource.source, device: nil)
        // 40 intervals (an MTU of 100 carries them): the decoder keeps 32 and says so.
        let big = Self.payload(bpm: 70, rr: (0..<40).map { 700 + UInt16($0) })
        let m = try big.withUnsafeBytes { try HeartRateMeasurement.decode($0) }
        #expect(m.rrIntervals.count == RRTicks.capacity && m.malformation == .rrOverflow(dropped: 8))
        let next = try Self.payload(bpm: 70, rr: [820]).withUnsafeBytes { try HeartRateMeasurement.decode($0) }
        for withPayload in [true, false] {
            var mapper = HeartRateRecordMapper(slots: slots)
            mapper.connectionStarted()
            var out: [(SampleRecord, SampleAttachment?)] = []
            big.withUnsafeBytes { raw in _ = mapper.map(m, at: 1_790_000_000, payload: withPayload ? raw : nil) { out.append(($0, $1)) } }
            mapper.map(next, at: 1_790_000_001) { out.append(($0, $1)) }
            if withPayload {
                // Every interval the strap sent, and nothing was cut, so no gap before the next.
                #expect(out[0].1?.rrIntervals == (0..<40).map { 700 + UInt16($0) })
                #expect(!out[1].0.flags.contains(.rrPrecededByGap))
            } else {
                // Without the bytes only the decoded 32 can be kept, and beats are missing after them.
                #expect(out[0].1?.rrIntervals == (0..<32).map { 700 + UInt16($0) })
                #expect(out[1].0.flags.contains(.rrPrecededByGap))
            }
        }
    }

    @Test func aNotificationWithManyRRIsStoredWithAllOfThem() async throws {
        let store = try HealthStore(path: tempDBPath("many-rr"))
        let pipeline = try IngestPipeline(sink: try StoreSink(store: store))
        let ring = try pipeline.makeRing(name: "strap")
        let device = Device(localIdentifier: "AA:BB:CC:DD:EE:06")
        var mapper = HeartRateRecordMapper(slots: try HeartRateRecordMapper.Slots(table: pipeline.slots, source: StrapSource.source, device: device),
                                           sensorLocation: .chest)
        mapper.connectionStarted()
        pipeline.start()
        // 60 intervals in one notification (124 bytes: flags, bpm, energy, RR — a raised MTU):
        // more than fit inline and more than the decoder keeps.
        let big = Self.payload(bpm: 72, energy: 10, rr: (0..<60).map { 600 + UInt16($0) })
        for (k, p) in [big, Self.payload(bpm: 73, energy: 12, rr: [900])].enumerated() {
            let m = try p.withUnsafeBytes { try HeartRateMeasurement.decode($0) }
            p.withUnsafeBytes { raw in
                _ = mapper.map(m, at: 1_790_000_000 + Double(k), payload: raw) { r, extra in
                    if let extra { ring.push(r, attachment: extra) } else { ring.push(r) }
                }
            }
        }
        let final = await offThread { pipeline.stop() }
        #expect(final.committed == 3 && pipeline.attachments.outstandingCount == 0)   // 2 heart rate + 1 energy
        let heart = try store.samples(SampleQuery(type: .heartRate))
        #expect(heart.map { $0.rrIntervals?.ticks ?? [] } == [(0..<60).map { 600 + UInt16($0) }, [900]])
        #expect(heart.map { $0.rrIntervals?.precededByGap } == [true, false])
        #expect(heart.allSatisfy { $0.metadata.heartRateSensorLocation == .chest && $0.metadata.sensorContact == .detected })
        // Nothing was cut, so nothing is marked truncated.
        #expect(heart.allSatisfy { $0.metadata.user.isEmpty && $0.device?.localIdentifier == "AA:BB:CC:DD:EE:06" }, "\(heart.map { ($0.metadata, $0.device) })")
        #expect(try store.samples(SampleQuery(type: .activeEnergyBurned)).map(\.quantity.value) == [2])
    }

    @Test func theDaemonsStrapPathStoresEnergyAndTheSensorLocation() async throws {
        let path = tempDBPath("mapper")
        let store = try HealthStore(path: path)
        let pipeline = try IngestPipeline(sink: try StoreSink(store: store))
        let runner = SourceRunner(pipeline: pipeline, logger: Logger(label: "test"))
        var config = SimulatedStrapConfiguration()
        config.bodySensorLocation = 2   // wrist
        let strap = SimulatedPeripheral.heartRateStrap(config)
        let connections = Lock<[StrapSource.Connection]>([])
        let batteries = Lock<[Int]>([])
        let source = StrapSource(name: "strap", localIdentifier: "AA:BB:CC:DD:EE:02", reconnects: false,
                                 events: { e in
                                     switch e {
                                     case .connected(let c): connections.withLock { $0.append(c) }
                                     case .battery(let level, _): batteries.withLock { $0.append(level) }
                                     default: break
                                     }
                                 }) { _ in
            try strap.connectSocketPair()
        }
        pipeline.start()
        try runner.start(source)
        let payloads = [Self.payload(bpm: 60, energy: 40, rr: [1024]), Self.payload(bpm: 61, energy: 45, rr: [1000]),
                        Self.payload(bpm: 62, energy: 2, rr: [990]), Self.payload(bpm: 63, energy: 0xFFFF),
                        [0x0E, 64, 0x10]]   // energy announced, one byte of it: truncated
        // The first notification goes out once the daemon has subscribed.
        #expect(await eventually { strap.notifyHeartRate(payloads[0]) })
        for p in payloads.dropFirst() { #expect(strap.notifyHeartRate(p)) }
        // What the connection learned, for the device registry, and a battery notification.
        let c = try #require(connections.withLock { $0 }.first)
        #expect(c.device.localIdentifier == "AA:BB:CC:DD:EE:02" && c.device.manufacturer == config.manufacturer)
        #expect(c.sensorLocation == .wrist && c.battery == 87)
        #expect(strap.notify(BluetoothUUID(0x2A19), value: [50]))
        #expect(await eventually { batteries.withLock { $0 } == [50] })
        #expect(await eventually { pipeline.stats.pushed == 8 })   // 5 heart rate + 3 energy
        let final = await offThread { runner.stopAll(); return pipeline.stop() }
        #expect(final.committed == 8)

        let heart = try store.samples(SampleQuery(type: .heartRate))
        #expect(heart.map(\.quantity.value) == [60, 61, 62, 63, 64])
        // The flags live stores as metadata, stored by the daemon's path too.
        #expect(heart.map { $0.metadata.user } == [[:], [:], [:], [:], [Metadata.payloadTruncatedKey: .number(1)]])
        #expect(heart.allSatisfy { $0.metadata.heartRateSensorLocation == .wrist })
        #expect(heart.allSatisfy { $0.device?.localIdentifier == "AA:BB:CC:DD:EE:02" })
        let energy = try store.samples(SampleQuery(type: .activeEnergyBurned))
        #expect(energy.map(\.quantity.value) == [5, 2, 65533])   // 40 → 45, reset to 2, then saturated
        #expect(energy.map { $0.metadata.user } == [[:], [:], [Metadata.energySaturatedKey: .number(1)]])
        #expect(energy.first?.endDate == heart[1].startDate)
    }
}
