import Foundation
import HealthModel
#if canImport(Glibc)
import Glibc
#endif

/// The reading of one export: the scanner's tags turned into samples, workouts and the report.
/// One thread; made and used by ``AppleHealthExportReader/read(into:_:)``.
final class ExportParser {
    private let scanner: XMLScanner
    private let path: String
    private let options: Options
    private let totalBytes: Int64?
    var report = AppleHealthExportReport()

    typealias Options = AppleHealthExportReader.Options

    /// What the element open at level 1 (a child of `<HealthData>`) is.
    private enum Context { case none, record, correlation, workout, other }
    private var context = Context.none
    private var depth = 0
    private var rootClosed = false

    private var batch: [QuantitySample] = []
    private var workouts: [AppleHealthWorkout] = []
    private var lastDelivery: Int64 = 0

    // Decoded values by raw bytes (see ByteCache).
    /// A record type: its name, its HealthGate type and canonical unit (looked up once: the
    /// canonical unit is behind a lock in HealthModel), its slot in ``typeCounts``.
    private struct KnownType {
        var name: String
        var type: QuantityType?
        var canonical: HealthUnit
        var slot: Int
    }
    private var typeCache = ByteCache<KnownType>(size: 8)
    /// Samples per HealthGate type, by slot (copied into the report at each delivery).
    private var typeCounts: [Int] = []
    private var countedTypes: [String] = []
    private var nameCache = ByteCache<String>()
    private var versionCache = ByteCache<String?>()
    private var deviceCache = ByteCache<Device?>()
    private var unitCache = ByteCache<Result<HealthUnit, HealthModelError>>(size: 8)
    private var lastSource: Source?

    /// The record being read.
    private struct PendingRecord {
        var line: Int
        var typeName: String
        var type: QuantityType
        var canonical: HealthUnit
        var slot: Int
        var problem: String?
        var value = 0.0
        var unit = HealthUnit.count
        var start = ExportValues.Instant(seconds: 0, offset: 0)
        var end = ExportValues.Instant(seconds: 0, offset: 0)
        var source = Source(name: "")
        var device: Device?
        var metadata = Metadata()
        var syncIdentifier: String?
        var syncVersion: String?
        /// Heartbeat list entries: beats per minute and clock time in ms since local midnight (nil: unreadable).
        var beats: [(bpm: Double, clock: Int64?)] = []
    }
    private var record: PendingRecord?

    /// The workout being read.
    private struct PendingWorkout {
        var line: Int
        var activity: String
        var problem: String?
        var start: ExportValues.Instant?
        var end: ExportValues.Instant?
        var source = Source(name: "")
        var device: Device?
        var duration: TimeInterval?
        var events: [(type: String, date: Date, duration: TimeInterval?)] = []
        var statistics: [AppleHealthWorkout.Statistic] = []
        var routes: [String] = []
        var metadata: [String: String] = [:]
        var inRoute = false
    }
    private var workout: PendingWorkout?

    init(scanner: XMLScanner, path: String, options: Options, totalBytes: Int64?) {
        self.scanner = scanner
        self.path = path
        self.options = options
        self.totalBytes = totalBytes
        batch.reserveCapacity(options.batchSize)
    }

    // MARK: The loop

    func run(_ body: (AppleHealthExportBatch) throws -> Void) throws {
        defer {
            report.bytesRead = scanner.bytesConsumed
            report.lines = scanner.line
            countSamples()
        }
        while true {
            let token: XMLScanner.Token
            do { token = try scanner.next() } catch {
                // A damaged or cut-short export: what was read before the damage is delivered.
                try deliver(body)
                throw error
            }
            switch token {
            case .endOfDocument:
                guard rootClosed else { throw malformed("the document has no <HealthData> element") }
                try deliver(body)
                return
            case .start:
                let level = depth
                depth += 1
                try start(level: level)
            case .end:
                depth -= 1
                if depth == 1 { try endTopLevel() }
                if depth == 0 { rootClosed = true }
                if depth == 2, context == .workout { workout?.inRoute = false }
                if batch.count >= options.batchSize || scanner.bytesConsumed - lastDelivery >= options.progressBytes {
                    try deliver(body)
                }
            }
        }
    }

    private func deliver(_ body: (AppleHealthExportBatch) throws -> Void) throws {
        let b = AppleHealthExportBatch(samples: batch, workouts: workouts, bytesRead: scanner.bytesConsumed, totalBytes: totalBytes)
        batch.removeAll(keepingCapacity: true)
        workouts.removeAll()
        lastDelivery = scanner.bytesConsumed
        report.bytesRead = scanner.bytesConsumed
        report.lines = scanner.line
        countSamples()
        try body(b)
    }

    /// The per-type counts into the report (they are counted by slot on the hot path).
    private func countSamples() {
        for (slot, identifier) in countedTypes.enumerated() where typeCounts[slot] > 0 {
            report.samples[identifier, default: 0] += typeCounts[slot]
            typeCounts[slot] = 0
        }
    }

    private func malformed(_ reason: String) -> AppleHealthExportError {
        .malformedXML(path: path, line: scanner.line, reason: reason)
    }

    private func bad(_ line: Int, _ type: String, _ reason: String) {
        report.badRecordCount += 1
        if report.badRecords.count < options.maxBadRecordsKept {
            report.badRecords.append(AppleHealthBadRecord(line: line, type: type, reason: reason))
        }
    }

    private func start(level: Int) throws {
        switch level {
        case 0:
            guard !rootClosed else { throw malformed("an element <\(scanner.name)> after the end of <HealthData>") }
            guard scanner.nameIs("HealthData") else {
                throw AppleHealthExportError.notAnExport(path: path, reason: "its root element is <\(scanner.name)>, not <HealthData>")
            }
            report.locale = scanner.attribute("locale").map(scanner.string)
        case 1:
            if scanner.nameIs("Record") {
                beginRecord()
            } else if scanner.nameIs("Workout") {
                beginWorkout()
            } else {
                context = .other
                let name = scanner.name
                switch name {
                case "Me":
                    readMe()
                case "ExportDate":
                    if let a = scanner.attribute("value") { report.exportDate = ExportValues.instant(scanner.rawValue(a))?.date }
                case "Correlation":
                    context = .correlation
                    report.otherElements[name, default: 0] += 1
                default:
                    report.otherElements[name, default: 0] += 1
                }
            }
        default:
            switch context {
            case .record: recordChild(level: level)
            case .correlation: if level == 2, scanner.nameIs("Record") { report.correlationCopies += 1 }
            case .workout: workoutChild(level: level)
            case .none, .other: break
            }
        }
    }

    private func endTopLevel() throws {
        switch context {
        case .record: finishRecord()
        case .workout: finishWorkout()
        case .correlation, .other, .none: break
        }
        context = .none
    }

    private func readMe() {
        for a in scanner.attributes {
            let key = scanner.nameString(a), value = scanner.string(a)
            report.characteristics[key] = value
            if key == "HKCharacteristicTypeIdentifierDateOfBirth" { report.dateOfBirth = CalendarDay(value) }
        }
    }

    // MARK: Records

    private func beginRecord() {
        let s = scanner
        var type: XMLScanner.Attribute?, unit: XMLScanner.Attribute?, value: XMLScanner.Attribute?
        var sourceName: XMLScanner.Attribute?, sourceVersion: XMLScanner.Attribute?, device: XMLScanner.Attribute?
        var startDate: XMLScanner.Attribute?, endDate: XMLScanner.Attribute?
        for a in s.attributes {
            switch a.nameCount {
            case 4: if s.name(of: a, is: "type") { type = a } else if s.name(of: a, is: "unit") { unit = a }
            case 5: if s.name(of: a, is: "value") { value = a }
            case 6: if s.name(of: a, is: "device") { device = a }
            case 7: if s.name(of: a, is: "endDate") { endDate = a }
            case 9: if s.name(of: a, is: "startDate") { startDate = a }
            case 10: if s.name(of: a, is: "sourceName") { sourceName = a }
            case 13: if s.name(of: a, is: "sourceVersion") { sourceVersion = a }
            default: break
            }
        }
        guard let type else {
            context = .other
            bad(s.line, "Record", "it has no type attribute")
            return
        }
        let known = typeCache.value(for: s.rawValue(type)) {
            let name = s.string(type)
            guard let t = options.types[name] else { return KnownType(name: name, type: nil, canonical: .count, slot: -1) }
            let slot = countedTypes.firstIndex(of: t.identifier) ?? {
                countedTypes.append(t.identifier)
                typeCounts.append(0)
                return countedTypes.count - 1
            }()
            return KnownType(name: name, type: t, canonical: t.canonicalUnit, slot: slot)
        }
        guard let qtype = known.type else {
            context = .other
            report.unknownRecordTypes[known.name, default: 0] += 1
            return
        }
        context = .record
        var r = PendingRecord(line: s.line, typeName: known.name, type: qtype, canonical: known.canonical, slot: known.slot)
        defer { record = r }
        func problem(_ p: String) { if r.problem == nil { r.problem = p } }

        if let sourceName {
            let name = nameCache.value(for: s.rawValue(sourceName)) { s.string(sourceName) }
            let version = sourceVersion.flatMap { v in versionCache.value(for: s.rawValue(v)) { s.string(v) } }
            if let last = lastSource, last.name == name, last.version == version { r.source = last } else {
                r.source = Source(name: name, identifier: AppleHealthExportReader.sourceIdentifier(name: name), version: version)
                lastSource = r.source
            }
        } else {
            problem("it has no sourceName")
        }
        if let device { r.device = deviceCache.value(for: s.rawValue(device)) { ExportValues.device(s.string(device)) } }
        if let startDate, let i = ExportValues.instant(s.rawValue(startDate)) { r.start = i } else {
            problem("its startDate '\(startDate.map(s.string) ?? "")' is not a date such as 2023-01-05 07:31:21 +0100 (or the day does not exist)")
        }
        if let endDate, let i = ExportValues.instant(s.rawValue(endDate)) { r.end = i } else {
            problem("its endDate '\(endDate.map(s.string) ?? "")' is not a date such as 2023-01-05 07:31:21 +0100 (or the day does not exist)")
        }
        if let value, let v = value.needsDecoding ? ExportValues.decimal(s.string(value).trimmingCharacters(in: .whitespaces)) : ExportValues.number(s.rawValue(value)) {
            r.value = v
        } else {
            problem("its value '\(value.map(s.string) ?? "")' is not a number")
        }
        if let unit {
            let parsed = unitCache.value(for: s.rawValue(unit)) { () -> Result<HealthUnit, HealthModelError> in
                let text = s.string(unit)
                do { return .success(try HealthUnit(text)) } catch let e as HealthModelError { return .failure(e) } catch {
                    return .failure(.invalidUnit(text, reason: "\(error)"))
                }
            }
            switch parsed {
            case .success(let u):
                if u.isCompatible(with: known.canonical) { r.unit = u } else {
                    problem("\(HealthModelError.incompatibleUnits(u, known.canonical))".dropLast() + " (a \(qtype.identifier) is in \(qtype.canonicalUnitString))")
                }
            case .failure(let e): problem(String("\(e)".dropLast()))
            }
        } else {
            problem("it has no unit")
        }
    }

    private func recordChild(level: Int) {
        guard record != nil else { return }
        let s = scanner
        if level == 2, s.nameIs("MetadataEntry") {
            guard let k = s.attribute("key"), let v = s.attribute("value") else { return }
            metadataEntry(key: s.rawValue(k), keyAttribute: k, value: v)
        } else if level == 3, s.nameIs("InstantaneousBeatsPerMinute") {
            let bpm = s.attribute("bpm").flatMap { ExportValues.number(s.rawValue($0)) } ?? 0
            let clock = s.attribute("time").flatMap { ExportValues.clockMilliseconds(s.rawValue($0)) }
            record?.beats.append((bpm, clock))
        }
    }

    private static func equal(_ raw: UnsafeBufferPointer<UInt8>, _ s: StaticString) -> Bool {
        raw.count == s.utf8CodeUnitCount && memcmp(raw.baseAddress!, s.utf8Start, raw.count) == 0
    }

    /// A record's `<MetadataEntry key value>`: HealthKit's keys HealthGate types go to their fields
    /// (motion context, sensor location, sync identifier and version, was user entered); any
    /// other key is free metadata, its value a date when it is one in the export's format, else text.
    private func metadataEntry(key: UnsafeBufferPointer<UInt8>, keyAttribute: XMLScanner.Attribute, value: XMLScanner.Attribute) {
        let s = scanner
        let raw = s.rawValue(value)
        if Self.equal(key, "HKMetadataKeyHeartRateMotionContext") {
            if let n = ExportValues.number(raw), let c = HeartRateMotionContext(rawValue: Int(n)) { record?.metadata.heartRateMotionContext = c; return }
        } else if Self.equal(key, "HKMetadataKeyHeartRateSensorLocation") {
            if let n = ExportValues.number(raw), let l = HeartRateSensorLocation(rawValue: Int(n)) { record?.metadata.heartRateSensorLocation = l; return }
        } else if Self.equal(key, "HKMetadataKeySyncIdentifier") {
            record?.syncIdentifier = s.string(value)
            return
        } else if Self.equal(key, "HKMetadataKeySyncVersion") {
            record?.syncVersion = s.string(value)
            return
        } else if Self.equal(key, "HKWasUserEntered") || Self.equal(key, "HKMetadataKeyWasUserEntered") {
            let v = s.string(value)
            if v == "1" || v == "0" || v == "true" || v == "false" { record?.metadata.wasUserEntered = v == "1" || v == "true"; return }
        }
        var name = s.string(keyAttribute)
        // A key the model reserves that did not fit its typed field: kept, under a free name.
        if name.isEmpty || Metadata.reservedKeys[name] != nil { name = "appleHealth:" + name }
        guard !name.utf8.contains(0) else { return }
        let text = s.string(value)
        if raw.count >= 19, raw.count <= 25, let i = ExportValues.instant(raw), raw[10] == 0x20 {
            record?.metadata.user[name] = .date(i.date)
        } else {
            record?.metadata.user[name] = .string(text)
        }
    }

    private func finishRecord() {
        guard var r = record else { return }
        record = nil
        if let p = r.problem { return bad(r.line, r.typeName, p) }
        // HealthKit's sync identifiers are unique per source, HealthGate's in the whole store:
        // the source's identifier makes them so.
        switch (r.syncIdentifier, r.syncVersion.flatMap { Int($0) }) {
        case (let id?, let v?):
            r.metadata.syncIdentifier = r.source.identifier + "/" + id
            r.metadata.syncVersion = v
        default:
            if let id = r.syncIdentifier { r.metadata.user["appleHealth:HKMetadataKeySyncIdentifier"] = .string(id) }
            if let v = r.syncVersion { r.metadata.user["appleHealth:HKMetadataKeySyncVersion"] = .string(v) }
        }
        let start = r.start.date, end = r.end.date
        let canonical = (try? r.unit.convert(r.value, to: r.canonical)) ?? r.value
        let uuid = ContentIdentity.sample(type: r.type.identifier, source: r.source.name, start: start, end: end, canonicalValue: canonical,
                                          scheme: options.sampleIdentity)
        let sample: QuantitySample
        do {
            sample = try QuantitySample(uuid: uuid, type: r.type, quantity: Quantity(r.value, r.unit), start: start, end: end,
                                        source: r.source, device: r.device, metadata: r.metadata)
        } catch {
            return bad(r.line, r.typeName, String("\(error)".dropLast()))
        }
        batch.append(sample)
        typeCounts[r.slot] += 1
        if options.heartbeatSamples, !r.beats.isEmpty { heartbeats(r, of: sample) }
    }

    /// The heartbeat list of an SDNN record as heart-rate samples with RR intervals, one per run
    /// of beats without a gap (docs/apple-health.md, "Heartbeat lists").
    ///
    /// A beat's time is a local clock time in the record's offset on the record's day, or the day
    /// before or after: whichever is nearest to the beat before it (the first: to the record's
    /// start), so a list crossing midnight stays in order. An interval is the difference of two
    /// beat times (kept to 1/100 s in the export), in 1/1024 s ticks. The listed rate is the
    /// rate of the interval ending at its beat (60/RR): a difference more than 25 % off that
    /// rate means beats are missing between (or an unreadable time), and a new run starts there.
    private func heartbeats(_ r: PendingRecord, of sdnn: QuantitySample) {
        let offsetMs = Int64(r.start.offset) * 1000
        let local = r.start.seconds + Int64(r.start.offset)
        let localDay = local >= 0 ? local / 86_400 : -((-local + 86_399) / 86_400)
        var reference = r.start.seconds * 1000
        var runs: [[Int64]] = [[]]
        for beat in r.beats {
            guard let clock = beat.clock else { runs.append([]); continue }
            var t = localDay * 86_400_000 + clock - offsetMs
            while t < reference - 43_200_000 { t += 86_400_000 }
            while t > reference + 43_200_000 { t -= 86_400_000 }
            reference = t
            if let previous = runs[runs.count - 1].last {
                let diff = t - previous
                let expected = beat.bpm > 0 ? 60_000 / beat.bpm : Double(diff)
                if diff <= 0 || diff > 60_000 || abs(Double(diff) - expected) > 0.25 * expected { runs.append([]) }
            }
            runs[runs.count - 1].append(t)
        }
        var index = 0
        for run in runs where run.count >= 2 {
            defer { index += 1 }
            let ticks = zip(run, run.dropFirst()).map { a, b in UInt16(clamping: ((b - a) * 1024 + 500) / 1000) }
            guard !ticks.contains(0) else { continue }
            let total = ticks.reduce(0) { $0 + Double($1) }
            let bpm = 60 * 1024 * Double(ticks.count) / total
            let meta = Metadata(user: ["HGHeartbeatsOf": .string(sdnn.uuid.uuidString.lowercased())])
            let start = Date(timeIntervalSince1970: Double(run[0]) / 1000)
            guard let s = try? QuantitySample(uuid: ContentIdentity.beats(of: sdnn.uuid, run: index, start: start, scheme: options.sampleIdentity),
                                              type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: start,
                                              end: Date(timeIntervalSince1970: Double(run[run.count - 1]) / 1000),
                                              source: sdnn.source, device: sdnn.device, metadata: meta,
                                              rrIntervals: RRIntervals(ticks: ticks, precededByGap: true))
            else { continue }
            batch.append(s)
            report.heartbeatSamples += 1
        }
    }

    // MARK: Workouts

    private func beginWorkout() {
        let s = scanner
        context = .workout
        var w = PendingWorkout(line: s.line, activity: s.attribute("workoutActivityType").map(s.string) ?? "")
        func instant(_ name: StaticString) -> ExportValues.Instant? {
            guard let a = s.attribute(name) else { return nil }
            return ExportValues.instant(s.rawValue(a))
        }
        w.start = instant("startDate")
        w.end = instant("endDate")
        if w.start == nil || w.end == nil { w.problem = "its startDate or endDate is missing or not a date such as 2023-01-05 07:31:21 +0100" }
        if w.activity.isEmpty { w.problem = "it has no workoutActivityType" }
        if let n = s.attribute("sourceName").map(s.string) {
            w.source = Source(name: n, identifier: AppleHealthExportReader.sourceIdentifier(name: n), version: s.attribute("sourceVersion").map(s.string))
        } else {
            w.problem = "it has no sourceName"
        }
        w.device = s.attribute("device").flatMap { ExportValues.device(s.string($0)) }
        w.duration = quantity("duration", unit: "durationUnit").flatMap { try? $0.doubleValue(for: .second) }
        for (total, unit) in [("totalDistance", "totalDistanceUnit"), ("totalEnergyBurned", "totalEnergyBurnedUnit")] {
            if let q = quantity(total, unit: unit) {
                w.statistics.append(.init(type: total, quantityType: nil, sum: q))
            }
        }
        workout = w
    }

    /// The quantity of attribute `value` in the unit of attribute `unit` (nil if either is missing or unreadable).
    private func quantity(_ value: String, unit: String) -> Quantity? {
        let s = scanner
        guard let v = s.attributes.first(where: { s.nameString($0) == value }).flatMap({ ExportValues.number(s.rawValue($0)) }),
              let u = s.attributes.first(where: { s.nameString($0) == unit }).flatMap({ try? HealthUnit(s.string($0)) })
        else { return nil }
        return Quantity(v, u)
    }

    private func workoutChild(level: Int) {
        let s = scanner
        guard workout != nil else { return }
        if level == 2 {
            if s.nameIs("WorkoutEvent") {
                guard let type = s.attribute("type").map(s.string), let date = s.attribute("date").flatMap({ ExportValues.instant(s.rawValue($0)) }) else { return }
                workout?.events.append((type, date.date, quantity("duration", unit: "durationUnit").flatMap { try? $0.doubleValue(for: .second) }))
            } else if s.nameIs("WorkoutStatistics") {
                let type = s.attribute("type").map(s.string) ?? ""
                func q(_ name: String) -> Quantity? { quantity(name, unit: "unit") }
                workout?.statistics.append(.init(type: type, quantityType: options.types[type], sum: q("sum"), average: q("average"),
                                                 minimum: q("minimum"), maximum: q("maximum")))
            } else if s.nameIs("WorkoutRoute") {
                workout?.inRoute = true
            } else if s.nameIs("MetadataEntry"), let k = s.attribute("key"), let v = s.attribute("value") {
                workout?.metadata[s.string(k)] = s.string(v)
            }
        } else if level == 3, workout?.inRoute == true, s.nameIs("FileReference"), let p = s.attribute("path") {
            workout?.routes.append(s.string(p))
        }
    }

    /// The workout: pauses and resumes kept when they alternate, a pause first, inside the
    /// workout; every other event in ``AppleHealthWorkout/otherEvents``.
    private func finishWorkout() {
        guard let w = workout else { return }
        workout = nil
        if let p = w.problem { return bad(w.line, "Workout", p) }
        guard let start = w.start?.date, let end = w.end?.date, start <= end else {
            return bad(w.line, "Workout", "it starts after it ends")
        }
        var kept: [WorkoutEvent] = []
        var other: [AppleHealthWorkout.OtherEvent] = []
        for e in w.events.enumerated().sorted(by: { ($0.element.date, $0.offset) < ($1.element.date, $1.offset) }).map(\.element) {
            let paused = kept.last?.kind == .pause
            let inside = e.date >= start && e.date <= end
            if e.type == "HKWorkoutEventTypePause", !paused, inside, e.date >= (kept.last?.date ?? start) {
                kept.append(WorkoutEvent(.pause, at: e.date))
            } else if e.type == "HKWorkoutEventTypeResume", paused, inside, e.date >= (kept.last?.date ?? start) {
                kept.append(WorkoutEvent(.resume, at: e.date))
            } else {
                other.append(.init(type: e.type, date: e.date, duration: e.duration))
            }
        }
        let activity = WorkoutActivityType(name: w.activity) ?? .other
        let model = Workout(uuid: ContentIdentity.workout(activity: w.activity, source: w.source.name, start: start, end: end),
                            activity: activity, start: start, end: end, events: kept, devices: [], source: w.source)
        workouts.append(AppleHealthWorkout(workout: model, activityTypeName: w.activity, device: w.device, duration: w.duration,
                                           statistics: w.statistics, routeFiles: w.routes, otherEvents: other,
                                           metadata: w.metadata, line: w.line))
        report.workouts += 1
    }
}
