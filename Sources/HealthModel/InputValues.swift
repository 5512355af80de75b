import Foundation

/// A value a user typed (a command-line option; a query parameter) that does not fit: one
/// sentence naming the option, what is wrong and what to write instead. A usage error.
package struct InputValueError: Error, CustomStringConvertible, Equatable {
    /// The sentence.
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// The rules for health values given as text (quantity types, units, statistics options,
/// dates, time zones, ranges, durations), with their messages. `option` names the value as
/// the user wrote it (`--tz`), so the message points at it.
package enum InputValues {
    /// The registry names are checked against.
    package static let registry = QuantityTypeRegistry.standard

    /// A quantity type by its identifier (`heartRate`), given as `--type`.
    package static func type(_ name: String) throws(InputValueError) -> QuantityType { try type(name, option: "--type") }

    /// A quantity type by its identifier (`heartRate`).
    package static func type(_ name: String, option: String) throws(InputValueError) -> QuantityType {
        do { return try registry.type(name) } catch {
            throw InputValueError("\(option) '\(name)' is not a known quantity type: use one of \(registry.all.map(\.identifier).joined(separator: ", ")) ('healthgate types' describes them).")
        }
    }

    /// Statistics options (`discreteAverage,mostRecent`), checked against `type`: an unknown name
    /// or one that does not fit the type's aggregation style is refused.
    package static func statisticsOptions(_ list: String, for type: QuantityType, option: String = "--option") throws(InputValueError) -> StatisticsOptions {
        let options: StatisticsOptions
        do { options = try StatisticsOptions(names: list) } catch {
            let bad = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { raw in !raw.isEmpty && !StatisticsOptions.names.contains { $0.0.lowercased() == raw.lowercased() } } ?? list
            throw InputValueError("\(option) '\(bad)' is not a statistics option: use \(StatisticsOptions.names.map(\.0).joined(separator: ", ")).")
        }
        do { try options.validate(for: type) } catch { throw InputValueError("\(option): \(error)") }
        return options
    }

    /// A date, parsed strictly by ``ISO8601/parse(_:localTimeZone:)``: with `Z` or an offset it
    /// is that instant; without one (and a bare date, meaning midnight) it is wall-clock time in
    /// `timeZone`, else in the system's zone (`TZ`).
    package static func date(_ text: String, option: String, timeZone: TimeZone? = nil) throws(InputValueError) -> Date {
        do {
            return try ISO8601.parse(text, localTimeZone: timeZone ?? .current)
        } catch {
            throw InputValueError("\(option): \(error.reason); use ISO 8601 such as 2026-11-02T08:00:00Z, 2026-11-02T09:00:00+01:00 or 2026-11-02 (docs/input-rules.md).")
        }
    }

    /// A time zone: an IANA name from the system's database (`Europe/Berlin`), matched without
    /// regard to case (`utc`, `europe/berlin`); `UTC` and `GMT` too. Offset forms that Foundation
    /// accepts loosely (`UTC+2`, `GMT-0130`, `+02:00`) are refused: they are not IANA names and
    /// mean no DST rules, so they are a mistake more often than not. Nil stays nil.
    package static func timeZone(_ name: String?, option: String = "--tz") throws(InputValueError) -> TimeZone? {
        guard let name else { return nil }
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        let known = TimeZone.knownTimeZoneIdentifiers + ["UTC", "GMT"]
        // Any case for the usual names; exact case for the other names of the tz database
        // (CET, Etc/UTC), which are files under /usr/share/zoneinfo. An offset such as
        // GMT+0200 is no file there.
        let id = known.first { $0.lowercased() == trimmed.lowercased() }
            ?? (!trimmed.contains("..") && FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/" + trimmed) ? trimmed : nil)
        guard let id, let tz = TimeZone(identifier: id) else {
            throw InputValueError("\(option) '\(name)' is not an IANA time zone name: use one such as Europe/Berlin, America/New_York or UTC (fixed offsets like UTC+2 are not accepted).")
        }
        return tz
    }

    /// The unit for `type`: parsed and checked against the type, or the canonical unit when
    /// none is given.
    package static func unit(_ text: String?, for type: QuantityType, option: String = "--unit") throws(InputValueError) -> HealthUnit {
        guard let text else { return type.canonicalUnit }
        let u: HealthUnit
        do { u = try HealthUnit(text) } catch { throw InputValueError("\(option): \(error)") }
        guard u.isCompatible(with: type.canonicalUnit) else {
            throw InputValueError("\(option): \(HealthModelError.incompatibleUnits(u, type.canonicalUnit))")
        }
        return u
    }

    /// The unit `text` for the type a query names, nil when no unit is given; a unit without a
    /// type is refused (units differ between types).
    package static func unit(_ text: String?, forQueryType type: QuantityType?, option: String = "--unit",
                             typeOption: String = "--type") throws(InputValueError) -> HealthUnit? {
        guard let text else { return nil }
        guard let type else { throw InputValueError("\(option) needs \(typeOption) (units differ between types).") }
        return try unit(text, for: type, option: option)
    }

    /// `[from, to)` must not be empty or reversed.
    package static func checkRange(from: Date?, to: Date?, options: (from: String, to: String) = ("--from", "--to")) throws(InputValueError) {
        if let from, let to, to <= from {
            throw InputValueError("\(options.to) (\(ISO8601.string(to))) must be after \(options.from) (\(ISO8601.string(from))): the range [\(options.from), \(options.to)) would be empty.")
        }
    }

    /// A decimal number's text (`-5`, `0.0123`, `1e3`) as the nearest double; nil for anything
    /// else — hexadecimal (`0x10`), `nan`, `inf` and spellings the standard library takes but a
    /// decimal number is not — and for a value too large or too small to keep (`1e400`, or
    /// `1e-400`, which would become 0: a refused value never becomes a silently different one).
    /// Minus zero is zero.
    package static func decimal(_ text: String) -> Double? {
        var sawDigit = false, nonzero = false, exponent = false
        var previous: UInt8 = 0
        for c in text.utf8 {
            let isExponent = c == 0x65 || c == 0x45, isSign = c == 0x2B || c == 0x2D
            if (0x30...0x39).contains(c) {
                sawDigit = true
                if c != 0x30, !exponent { nonzero = true }
            } else if c == 0x2E, !exponent {
            } else if isExponent, sawDigit, !exponent {
                exponent = true
            } else if isSign, previous == 0 || previous == 0x65 || previous == 0x45 {
            } else {
                return nil
            }
            previous = c
        }
        guard sawDigit, let v = Double(text), v.isFinite, !(v == 0 && nonzero) else { return nil }
        return v == 0 ? 0 : v
    }

    /// A heart-rate sensor location by name (`chest`); nil stays nil.
    package static func sensorLocation(_ text: String?, option: String = "--sensor-location") throws(InputValueError) -> HeartRateSensorLocation? {
        guard let text else { return nil }
        guard let l = HeartRateSensorLocation(name: text) else {
            throw InputValueError("\(option) '\(text)' is not one of \(HeartRateSensorLocation.allCases.map(\.name).joined(separator: ", ")).")
        }
        return l
    }

    /// The longest duration ``seconds(_:option:)`` accepts: 100 years (36500d). Longer is a
    /// typo, and would not fit the whole-unit display.
    package static let maximumDurationSeconds: TimeInterval = 36_500 * 86_400

    /// A duration such as `30d`, `12h`, `90m`, `45s`, `2w`, in seconds: more than 0, at most
    /// ``maximumDurationSeconds``.
    package static func seconds(_ text: String, option: String) throws(InputValueError) -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        if let last = text.last, let mult = units[last], let n = Double(text.dropLast()), n > 0, n.isFinite {
            guard n * mult <= maximumDurationSeconds else {
                throw InputValueError("\(option) '\(text)' is longer than 100 years: use at most 36500d.")
            }
            return n * mult
        }
        throw InputValueError("\(option) '\(text)' is not a duration: use a number with s, m, h, d or w, such as 30d.")
    }

    /// A heart-rate motion context by name (`sedentary`); nil stays nil.
    package static func motionContext(_ text: String?, option: String = "--motion-context") throws(InputValueError) -> HeartRateMotionContext? {
        guard let text else { return nil }
        guard let c = HeartRateMotionContext(name: text) else {
            throw InputValueError("\(option) '\(text)' is not notSet, sedentary or active.")
        }
        return c
    }

    /// Free metadata from `key=value` pairs: a finite number is a number, an ISO 8601
    /// date-time a date, anything else a string. A reserved key (a typed field's, such as
    /// `syncIdentifier`) is refused with what to use instead.
    package static func userMetadata(_ pairs: [String], option: String = "--metadata") throws(InputValueError) -> [String: MetadataValue] {
        var user: [String: MetadataValue] = [:]
        for pair in pairs {
            guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
                throw InputValueError("\(option) '\(pair)' is not key=value.")
            }
            let key = String(pair[..<eq]), text = String(pair[pair.index(after: eq)...])
            if let field = Metadata.reservedKeys[key] {
                let advice = switch field {
                case "heartRateSensorLocation": "use --sensor-location instead"
                case "heartRateMotionContext": "use --motion-context instead"
                case "syncIdentifier", "syncVersion": "use --sync-identifier with --sync-version instead"
                case "wasUserEntered": "add sets it to true by itself"
                default: "only a strap sets it"
                }
                throw InputValueError("\(option) '\(key)' is a reserved key (the typed field \(field)), not a free one: \(advice).")
            }
            if let n = Double(text), n.isFinite { user[key] = .number(n) } else { user[key] = MetadataValue(userText: text) }
        }
        return user
    }
}
