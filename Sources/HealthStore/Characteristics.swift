import Foundation

/// What the user says about themselves once, rather than measures (HealthKit's characteristics):
/// a date of birth and, if known, a measured maximum heart rate. Workouts' heart-rate zones come
/// from them (docs/workouts.md). Kept in the store's `state` table under `characteristic.*`.
public struct Characteristics: Sendable, Hashable {
    /// Year, month and day of birth (HKHealthStore's `dateOfBirthComponents`), no time or zone.
    public var dateOfBirth: DateComponents?
    /// A maximum heart rate the user measured or was given (count/min); preferred over one
    /// estimated from the age.
    public var maximumHeartRate: Double?

    /// Characteristics with the given values.
    public init(dateOfBirth: DateComponents? = nil, maximumHeartRate: Double? = nil) {
        self.dateOfBirth = dateOfBirth
        self.maximumHeartRate = maximumHeartRate
    }

    static let dateOfBirthKey = "characteristic.dateOfBirth"
    static let maximumHeartRateKey = "characteristic.maximumHeartRate"

    /// `YYYY-MM-DD` for ``dateOfBirth``.
    public var dateOfBirthText: String? {
        guard let d = dateOfBirth, let y = d.year, let m = d.month, let day = d.day else { return nil }
        return String(format: "%04d-%02d-%02d", y, m, day)
    }

    /// Parses `YYYY-MM-DD` into year, month and day; nil when it is not a real calendar date
    /// (`2023-02-29`).
    public static func parseDate(_ text: String) -> DateComponents? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = DateComponents(year: y, month: m, day: d)
        guard let date = calendar.date(from: c),
              calendar.dateComponents([.year, .month, .day], from: date) == c else { return nil }
        return c
    }

    /// Whole years of age on `date` in `timeZone`'s calendar: one more on each birthday from
    /// its first moment. Born on 29 February, a year without one counts from 1 March. Nil
    /// without a date of birth, or before it.
    public func age(on date: Date, timeZone: TimeZone = .current) -> Int? {
        guard let b = dateOfBirth, let by = b.year, let bm = b.month, let bd = b.day else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let now = calendar.dateComponents([.year, .month, .day], from: date)
        guard let y = now.year, let m = now.month, let d = now.day else { return nil }
        // (month, day) compared as numbers: 29 Feb is after 28 Feb and before 1 March.
        let age = y - by - ((m, d) < (bm, bd) ? 1 : 0)
        return age >= 0 ? age : nil
    }
}

extension HealthStore {
    /// The stored characteristics (nil fields when never set).
    public func characteristics() throws -> Characteristics {
        var c = Characteristics()
        if let text = try stateString(Characteristics.dateOfBirthKey) { c.dateOfBirth = Characteristics.parseDate(text) }
        if let text = try stateString(Characteristics.maximumHeartRateKey) { c.maximumHeartRate = Double(text) }
        return c
    }

    /// Stores `c` whole: a nil field removes what was stored.
    public func setCharacteristics(_ c: Characteristics) throws {
        try write { w in
            try w.setState(Characteristics.dateOfBirthKey, c.dateOfBirthText.map { Data($0.utf8) })
            try w.setState(Characteristics.maximumHeartRateKey, c.maximumHeartRate.map { Data("\($0)".utf8) })
        }
    }
}
