import Foundation

/// What kind of exercise a workout is: HealthKit's `HKWorkoutActivityType`, by the names its
/// Swift API uses (`running`, `traditionalStrengthTraining`). Stored by name.
public enum WorkoutActivityType: String, Sendable, Hashable, Codable, CaseIterable {
    case americanFootball, archery, australianFootball, badminton, baseball, basketball, bowling, boxing
    case climbing, cricket, crossTraining, curling, cycling, dance, elliptical, equestrianSports, fencing
    case fishing, functionalStrengthTraining, golf, gymnastics, handball, hiking, hockey, hunting, lacrosse
    case martialArts, mindAndBody, paddleSports, play, preparationAndRecovery, racquetball, rowing, rugby
    case running, sailing, skatingSports, snowSports, soccer, softball, squash, stairClimbing, surfingSports
    case swimming, tableTennis, tennis, trackAndField, traditionalStrengthTraining, volleyball, walking
    case waterFitness, waterPolo, waterSports, wrestling, yoga, barre, coreTraining, crossCountrySkiing
    case downhillSkiing, flexibility, highIntensityIntervalTraining, jumpRope, kickboxing, pilates
    case snowboarding, stairs, stepTraining, wheelchairWalkPace, wheelchairRunPace, taiChi, mixedCardio
    case handCycling, discSports, fitnessGaming, cardioDance, socialDance, pickleball, cooldown
    case swimBikeRun, transition, underwaterDiving, other

    /// The type named `text`: HealthKit's name in any letter case (`running`, `Running`), or the
    /// constant as Apple Health's export writes it (`HKWorkoutActivityTypeRunning`). Nil when
    /// no type has that name.
    public init?(name text: String) {
        let bare = text.hasPrefix("HKWorkoutActivityType") ? String(text.dropFirst("HKWorkoutActivityType".count)) : text
        let key = bare.lowercased()
        guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == key }) else { return nil }
        self = match
    }
}

/// A moment the user paused or resumed a workout (HKWorkoutEvent's `.pause` and `.resume`).
public struct WorkoutEvent: Sendable, Hashable, Codable {
    /// Pause or resume.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case pause, resume
    }
    /// Which.
    public var kind: Kind
    /// When.
    public var date: Date

    /// An event of `kind` at `date`.
    public init(_ kind: Kind, at date: Date) {
        self.kind = kind
        self.date = date
    }
}

/// One workout (HKWorkout): an interval the user marked, its activity, the devices whose samples
/// count in it and its pauses. Totals are not stored: they are computed from the samples stored
/// in it (module `WorkoutSummary`), so a late sample or a deleted one is reflected, and deleting
/// a workout keeps its samples, as in HealthKit.
public struct Workout: Sendable, Hashable {
    /// Identity, kept across export and import.
    public var uuid: UUID
    /// What kind of exercise.
    public var activity: WorkoutActivityType
    /// When it started.
    public var start: Date
    /// When it ended; nil while it is in progress.
    public var end: Date?
    /// Pauses and resumes, in time order, alternating, the first a pause.
    public var events: [WorkoutEvent]
    /// The devices (name, local identifier or alias) whose samples count, in priority order;
    /// empty: every device, merged across sources by priority.
    public var devices: [String]
    /// What recorded it (`healthgate workout start`, `live --workout`, an import).
    public var source: Source

    /// A workout; `events` alternate pause, resume, in time order (the store refuses others).
    public init(uuid: UUID = UUID(), activity: WorkoutActivityType, start: Date, end: Date? = nil,
                events: [WorkoutEvent] = [], devices: [String] = [], source: Source) {
        self.uuid = uuid
        self.activity = activity
        self.start = start
        self.end = end
        self.events = events
        self.devices = devices
        self.source = source
    }

    /// Whether it is paused now (its last event is a pause).
    public var isPaused: Bool { events.last?.kind == .pause }

    /// Where a workout is: running, paused (both in progress) or ended.
    public enum State: String, Sendable {
        case running, paused, ended
    }

    /// `ended` once it has an end, else `paused` while its last event is a pause, else `running`
    /// (what `watch`, `workouts`, `/v1/live`, the workout JSON and MQTT say as `state`).
    public var state: State { end != nil ? .ended : isPaused ? .paused : .running }

    /// The half-open intervals `[from, to)` in which it was running, up to its end, or up to
    /// `now` while in progress. A pause not yet resumed runs to the end.
    public func activeIntervals(now: Date = Date()) -> [DateInterval] {
        let stop = end ?? max(now, start)
        var out: [DateInterval] = []
        var from: Date? = start
        for e in events {
            switch e.kind {
            case .pause:
                if let f = from, e.date > f { out.append(DateInterval(start: f, end: min(e.date, stop))) }
                from = nil
            case .resume:
                from = e.date
            }
        }
        if let f = from, stop > f { out.append(DateInterval(start: f, end: stop)) }
        return out.filter { $0.duration > 0 }
    }

    /// Seconds it ran, pauses excluded (HKWorkout's `duration`).
    public func activeDuration(now: Date = Date()) -> TimeInterval {
        activeIntervals(now: now).reduce(0) { $0 + $1.duration }
    }

    /// Seconds from start to end (or `now`), pauses included.
    public func elapsed(now: Date = Date()) -> TimeInterval {
        (end ?? max(now, start)).timeIntervalSince(start)
    }
}
