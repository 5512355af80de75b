import Foundation
import HealthModel

/// A record the reader skipped: where, what, and why.
public struct AppleHealthBadRecord: Sendable, Hashable, CustomStringConvertible {
    /// The line of the record's start tag in export.xml.
    public var line: Int
    /// Its type as written (`HKQuantityTypeIdentifierHeartRate`), or `Workout`.
    public var type: String
    /// Why it was skipped, one phrase.
    public var reason: String

    public init(line: Int, type: String, reason: String) {
        self.line = line
        self.type = type
        self.reason = reason
    }

    public var description: String { "export.xml:\(line): skipped \(type): \(reason)" }
}

/// A workout as the export describes it: the ``Workout`` to store, and what the store does not
/// keep (it computes totals from samples) for the integrator to show or compare.
public struct AppleHealthWorkout: Sendable, Hashable {
    /// One `<WorkoutStatistics>` (or a legacy `totalDistance`/`totalEnergyBurned` attribute).
    public struct Statistic: Sendable, Hashable {
        /// The type as written (`HKQuantityTypeIdentifierActiveEnergyBurned`; `totalDistance` for the legacy attribute).
        public var type: String
        /// The HealthGate type it maps to, if any.
        public var quantityType: QuantityType?
        public var sum: Quantity?
        public var average: Quantity?
        public var minimum: Quantity?
        public var maximum: Quantity?
    }

    /// A `<WorkoutEvent>` that is not part of the pause/resume sequence ``Workout/events`` keeps:
    /// laps, markers, segments, motion pauses, and pauses or resumes that do not alternate.
    public struct OtherEvent: Sendable, Hashable {
        /// As written (`HKWorkoutEventTypeLap`).
        public var type: String
        public var date: Date
        public var duration: TimeInterval?
    }

    /// The workout to store: UUID from its content, activity, start, end, pause/resume events.
    public var workout: Workout
    /// The activity as written (`HKWorkoutActivityTypeRunning`): ``Workout/activity`` is `.other`
    /// for a name HealthGate does not know.
    public var activityTypeName: String
    /// The device that recorded it.
    public var device: Device?
    /// The `duration` attribute (pauses excluded, per HealthKit), in seconds.
    public var duration: TimeInterval?
    /// Its statistics, as the export lists them.
    public var statistics: [Statistic]
    /// Its route files (`/workout-routes/route_….gpx`), relative to `apple_health_export/`.
    public var routeFiles: [String]
    /// Events not kept in ``Workout/events``.
    public var otherEvents: [OtherEvent]
    /// Its metadata entries, as written.
    public var metadata: [String: String]
    /// The line of its start tag.
    public var line: Int
}

/// One delivery of the reader: up to a batch size of samples, the workouts read meanwhile,
/// and how far the reading is.
public struct AppleHealthExportBatch: Sendable {
    /// Quantity samples, UUIDs derived from content, in export order.
    public var samples: [QuantitySample]
    /// Workouts finished since the previous batch.
    public var workouts: [AppleHealthWorkout]
    /// XML bytes consumed so far (uncompressed for a zip).
    public var bytesRead: Int64
    /// The XML's size (the entry's uncompressed size for a zip), for a progress bar.
    public var totalBytes: Int64?
}

/// What an export held and what the reading did with it. Filled in as the reading goes, so a
/// reading stopped by an error (or by the caller's closure) still says how far it got.
public struct AppleHealthExportReport: Sendable {
    /// `<HealthData locale>`.
    public var locale: String?
    /// `<ExportDate value>`.
    public var exportDate: Date?
    /// `<Me HKCharacteristicTypeIdentifierDateOfBirth>`.
    public var dateOfBirth: CalendarDay?
    /// Every attribute of `<Me>` (biological sex, blood type, skin type …), as written.
    public var characteristics: [String: String] = [:]
    /// Samples delivered per HealthGate type identifier, from the export's records (the heart-rate
    /// samples made from heartbeat lists are counted in ``heartbeatSamples`` only).
    public var samples: [String: Int] = [:]
    /// Heart-rate samples with RR intervals made from the SDNN records' heartbeat lists.
    public var heartbeatSamples = 0
    /// Workouts delivered.
    public var workouts = 0
    /// Records of types not imported, per type as written.
    public var unknownRecordTypes: [String: Int] = [:]
    /// Other elements directly under `<HealthData>` (ActivitySummary, ClinicalRecord, Correlation …), per name.
    public var otherElements: [String: Int] = [:]
    /// Records inside a `<Correlation>`: copies of top-level records, so not read twice.
    public var correlationCopies = 0
    /// Records and workouts skipped, the first ``AppleHealthExportReader/Options/maxBadRecordsKept``.
    public var badRecords: [AppleHealthBadRecord] = []
    /// All records and workouts skipped.
    public var badRecordCount = 0
    /// XML bytes read.
    public var bytesRead: Int64 = 0
    /// The XML's size, when known.
    public var totalBytes: Int64?
    /// The line of the last tag read (the document's last line when it is complete).
    public var lines = 0
    /// Whether the whole document was read (false after an error or a stop).
    public var complete = false

    public init() {}

    /// Samples delivered in all (records and heartbeat lists).
    public var sampleTotal: Int { samples.values.reduce(0, +) + heartbeatSamples }
}
