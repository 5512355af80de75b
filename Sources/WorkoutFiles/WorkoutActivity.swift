/// How a HealthKit activity name (`HKWorkoutActivityType`, lowerCamel) becomes each format's
/// sport (docs/workout-files.md, "Activities"). FIT's numbers are those of Garmin's FIT profile
/// (its `sport` and `sub_sport` types, checked against profile 21.218); TCX knows only
/// Running, Biking and Other.
public struct WorkoutActivity: Sendable, Equatable {
    /// FIT's `sport` value.
    public var fitSport: UInt8
    /// FIT's `sub_sport` value (0: generic).
    public var fitSubSport: UInt8
    /// TCX's `Activity/@Sport`: `Running`, `Biking` or `Other`.
    public var tcxSport: String

    /// The mapping of `activity`; a name not in the table is FIT's generic sport and TCX's Other.
    public init(_ activity: String) {
        self = Self.table[activity] ?? Self(fitSport: 0, fitSubSport: 0, tcxSport: "Other")
    }

    init(fitSport: UInt8, fitSubSport: UInt8, tcxSport: String) {
        self.fitSport = fitSport
        self.fitSubSport = fitSubSport
        self.tcxSport = tcxSport
    }

    /// The activity names with a sport of their own. FIT sports: 0 generic, 1 running,
    /// 2 cycling, 4 fitness_equipment, 5 swimming, 6 basketball, 7 soccer, 8 tennis,
    /// 9 american_football, 10 training, 11 walking, 12 cross_country_skiing, 13 alpine_skiing,
    /// 14 snowboarding, 15 rowing, 17 hiking, 19 paddling, 25 golf, 31 rock_climbing,
    /// 32 sailing, 38 surfing, 47 boxing, 49 baseball, 62 hiit, 64 racket, 65/66 wheelchair
    /// push walk/run, 71 cricket, 72 rugby, 73 hockey, 74 lacrosse, 75 volleyball,
    /// 79 archery, 80 mixed_martial_arts, 83 dance, 84 jump_rope. Sub-sports: 15 elliptical,
    /// 16 stair_climbing, 19 flexibility_training, 20 strength_training, 26 cardio_training,
    /// 43 yoga, 44 pilates, 84 pickleball, 94 squash, 95 badminton, 96 racquetball,
    /// 97 table_tennis.
    static let table: [String: WorkoutActivity] = {
        func fit(_ sport: UInt8, _ sub: UInt8 = 0, tcx: String = "Other") -> WorkoutActivity {
            WorkoutActivity(fitSport: sport, fitSubSport: sub, tcxSport: tcx)
        }
        return [
            "running": fit(1, tcx: "Running"),
            "wheelchairRunPace": fit(66, tcx: "Running"),
            "cycling": fit(2, tcx: "Biking"),
            "handCycling": fit(2, 12, tcx: "Biking"),
            "walking": fit(11),
            "wheelchairWalkPace": fit(65),
            "hiking": fit(17),
            "swimming": fit(5),
            "rowing": fit(15),
            "paddleSports": fit(19),
            "traditionalStrengthTraining": fit(10, 20),
            "functionalStrengthTraining": fit(10, 20),
            "coreTraining": fit(10, 20),
            "highIntensityIntervalTraining": fit(62),
            "mixedCardio": fit(10, 26),
            "crossTraining": fit(10, 26),
            "flexibility": fit(10, 19),
            "yoga": fit(10, 43),
            "pilates": fit(10, 44),
            "elliptical": fit(4, 15),
            "stairClimbing": fit(4, 16),
            "stairs": fit(4, 16),
            "crossCountrySkiing": fit(12),
            "downhillSkiing": fit(13),
            "snowboarding": fit(14),
            "climbing": fit(31),
            "sailing": fit(32),
            "surfingSports": fit(38),
            "golf": fit(25),
            "tennis": fit(8),
            "basketball": fit(6),
            "soccer": fit(7),
            "americanFootball": fit(9),
            "baseball": fit(49),
            "cricket": fit(71),
            "rugby": fit(72),
            "hockey": fit(73),
            "lacrosse": fit(74),
            "volleyball": fit(75),
            "archery": fit(79),
            "boxing": fit(47),
            "kickboxing": fit(47),
            "martialArts": fit(80),
            "cardioDance": fit(83),
            "socialDance": fit(83),
            "danceInspiredTraining": fit(83),
            "jumpRope": fit(84),
            "pickleball": fit(64, 84),
            "squash": fit(64, 94),
            "badminton": fit(64, 95),
            "racquetball": fit(64, 96),
            "tableTennis": fit(64, 97),
            "other": fit(0),
        ]
    }()
}
