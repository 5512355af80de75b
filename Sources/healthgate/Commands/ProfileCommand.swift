import ArgumentParser
import Foundation
import HealthModel
import HealthStore
import WorkoutSummary

/// `healthgate profile`: the characteristics workouts' heart-rate zones come from.
struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Set or show your date of birth and maximum heart rate (HealthKit's characteristics).",
        discussion: """
            Workouts' five heart-rate zones start at 50, 60, 70, 80 and 90 % of a maximum heart rate: the one \
            set with --max-heart-rate, else 208 − 0.7 × age (Tanaka, Monahan & Seals 2001), the age taken on the \
            workout's day from --date-of-birth (docs/workouts.md).

            Examples:
              healthgate profile set --date-of-birth 1990-05-17
              healthgate profile set --max-heart-rate 188
              healthgate profile show --json
            """,
        subcommands: [Set.self, Show.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set (or clear) your date of birth and maximum heart rate.")
        @OptionGroup var store: StoreLocation
        @Option(help: ArgumentHelp("Your date of birth, YYYY-MM-DD.", valueName: "date")) var dateOfBirth: String?
        @Option(help: ArgumentHelp("A maximum heart rate you measured, count/min (100 to 250).", valueName: "bpm")) var maxHeartRate: Double?
        @Flag(help: "Forget the date of birth.") var clearDateOfBirth = false
        @Flag(help: "Forget the maximum heart rate (zones then come from the age).") var clearMaxHeartRate = false

        func run() throws {
            guard dateOfBirth != nil || maxHeartRate != nil || clearDateOfBirth || clearMaxHeartRate else {
                throw CLIFailure("say what to set: --date-of-birth YYYY-MM-DD and/or --max-heart-rate BPM (or a --clear-… flag).", code: .usage)
            }
            let db = try store.open()
            var c = try db.characteristics()
            if let text = dateOfBirth {
                guard let d = Characteristics.parseDate(text) else {
                    throw CLIFailure("--date-of-birth '\(text)' is not a date: write YYYY-MM-DD, such as 1990-05-17.", code: .usage)
                }
                guard Characteristics(dateOfBirth: d).age(on: Date(), timeZone: .current) != nil else {
                    throw CLIFailure("--date-of-birth \(text) is in the future.", code: .usage)
                }
                c.dateOfBirth = d
            }
            if let m = maxHeartRate {
                guard (100...250).contains(m) else {
                    throw CLIFailure("--max-heart-rate \(m) is not a plausible maximum: use 100 to 250 count/min (or leave it unset to estimate it from your age).", code: .usage)
                }
                c.maximumHeartRate = m
            }
            if clearDateOfBirth { c.dateOfBirth = nil }
            if clearMaxHeartRate { c.maximumHeartRate = nil }
            try db.setCharacteristics(c)
            try Show.print(c)
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show your characteristics and today's zone bounds.")
        @OptionGroup var store: StoreLocation
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let c = try store.openForReading().characteristics()
            if json {
                let z = HeartRateZones(c, on: Date())
                return try JSONOutput.emit([
                    "dateOfBirth": c.dateOfBirthText ?? NSNull(), "maximumHeartRate": c.maximumHeartRate ?? NSNull(),
                    "zonesToday": z.map { z in (1...5).map { z.lowerBound(zone: $0) } } ?? NSNull(),
                    "basis": z?.formula ?? NSNull(),
                ] as [String: Any])
            }
            try Self.print(c)
        }

        static func print(_ c: Characteristics) throws {
            Swift.print("date of birth: \(c.dateOfBirthText ?? "not set")")
            Swift.print("maximum heart rate: \(c.maximumHeartRate.map { Table.number($0) } ?? "not set")")
            if let z = HeartRateZones(c, on: Date()) {
                Swift.print("zones today from \(z.formula): " + (1...5).map { "\($0): ≥ \(Table.number((z.lowerBound(zone: $0) * 10).rounded() / 10))" }.joined(separator: ", "))
            } else {
                Swift.print("zones: set --date-of-birth or --max-heart-rate to get them")
            }
        }
    }
}
