/// A unit of measure written in HealthKit's `HKUnit` string grammar, such as `count/min`, `kJ`,
/// `ms` or `kg.m^-1.s^-2`.
///
/// A unit is a scale factor (and, for temperatures, an offset) onto SI base units plus the
/// dimension it measures. Two units can be converted into each other exactly when their
/// dimensions are equal; ``convert(_:to:)`` throws ``HealthModelError/incompatibleUnits(_:_:)``
/// otherwise.
///
/// ```swift
/// let bpm = try HealthUnit("count/min")
/// let hz  = try HealthUnit("count/s")
/// try bpm.convert(72, to: hz)   // 1.2
/// ```
///
/// Grammar (HKUnit.h): factors joined by `.` or `*`, each factor an optionally prefixed unit
/// raised to an integral power with `^`; at most one `/`, and multiplication binds first, so
/// `kg/m.s^2` is `kg/(m.s^2)`. Parentheses around the denominator are accepted. Prefixes (`k`,
/// `m`, `mc`, …) apply to SI units only (`g`, `m`, `L`/`l`, `Pa`, `s`, `J`, `K`, `Hz`).
public struct HealthUnit: Sendable, Hashable, CustomStringConvertible {
    /// The unit string as written, normalized (no spaces).
    public let unitString: String
    /// Multiply a value in this unit by `factor` (then add `offset`) to get SI base units.
    public let factor: Double
    /// Additive offset onto the SI base unit (only temperatures in degC/degF have one).
    public let offset: Double
    /// What the unit measures.
    public let dimension: Dimension

    public var description: String { unitString }

    /// Parses a unit string; throws ``HealthModelError/invalidUnit(_:reason:)`` when it is not one.
    public init(_ string: String) throws {
        let trimmed = string.filter { !$0.isWhitespace }
        guard !trimmed.isEmpty else { throw HealthModelError.invalidUnit(string, reason: "the unit string is empty") }
        let parsed = try UnitParser.parse(trimmed, original: string)
        self.unitString = trimmed
        self.factor = parsed.factor
        self.offset = parsed.offset
        self.dimension = parsed.dimension
    }

    /// Whether values in `self` can be converted to `other`.
    public func isCompatible(with other: HealthUnit) -> Bool { dimension == other.dimension }

    /// Converts `value` from this unit into `other`.
    /// - Throws: ``HealthModelError/incompatibleUnits(_:_:)`` naming both units when their
    ///   dimensions differ (storing `kg` as a heart rate, for example).
    public func convert(_ value: Double, to other: HealthUnit) throws -> Double {
        guard isCompatible(with: other) else { throw HealthModelError.incompatibleUnits(self, other) }
        if self == other { return value }
        return ((value * factor + offset) - other.offset) / other.factor
    }

    public static func == (lhs: HealthUnit, rhs: HealthUnit) -> Bool {
        lhs.unitString == rhs.unitString
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(unitString) }

    // Units HealthGate's built-in types use; the strings are valid, so parsing cannot fail.
    // swiftlint:disable force_try
    /// `count`, a dimensionless number of things (steps, beats).
    public static let count = try! HealthUnit("count")
    /// `count/min`, beats (or steps) per minute.
    public static let countPerMinute = try! HealthUnit("count/min")
    /// `count/s`.
    public static let countPerSecond = try! HealthUnit("count/s")
    /// `kJ`, kilojoules.
    public static let kilojoule = try! HealthUnit("kJ")
    /// `kcal`, kilocalories (4.184 kJ).
    public static let kilocalorie = try! HealthUnit("kcal")
    /// `ms`, milliseconds.
    public static let millisecond = try! HealthUnit("ms")
    /// `s`, seconds.
    public static let second = try! HealthUnit("s")
    /// `m`, metres.
    public static let meter = try! HealthUnit("m")
    /// `kg`, kilograms.
    public static let kilogram = try! HealthUnit("kg")
    /// `%`, a fraction from 0.0 to 1.0.
    public static let percent = try! HealthUnit("%")
    // swiftlint:enable force_try
}

/// What a unit measures, as integral exponents of base quantities.
///
/// Energy is mass·length²·time⁻²; `count` is its own base quantity so a heart rate
/// (`count/min`) is not mistaken for a frequency of anything else. Volume is length³.
public struct Dimension: Sendable, Hashable, CustomStringConvertible {
    public var mass: Int8 = 0
    public var length: Int8 = 0
    public var time: Int8 = 0
    public var count: Int8 = 0
    public var temperature: Int8 = 0
    public var internationalUnit: Int8 = 0

    public init(mass: Int8 = 0, length: Int8 = 0, time: Int8 = 0, count: Int8 = 0,
                temperature: Int8 = 0, internationalUnit: Int8 = 0) {
        self.mass = mass; self.length = length; self.time = time; self.count = count
        self.temperature = temperature; self.internationalUnit = internationalUnit
    }

    /// The dimension of a plain number (`%`).
    public static let dimensionless = Dimension()

    func raised(to power: Int) -> Dimension {
        let p = Int8(clamping: power)
        return Dimension(mass: mass &* p, length: length &* p, time: time &* p, count: count &* p,
                         temperature: temperature &* p, internationalUnit: internationalUnit &* p)
    }

    static func + (a: Dimension, b: Dimension) -> Dimension {
        Dimension(mass: a.mass + b.mass, length: a.length + b.length, time: a.time + b.time,
                  count: a.count + b.count, temperature: a.temperature + b.temperature,
                  internationalUnit: a.internationalUnit + b.internationalUnit)
    }

    public var description: String {
        let parts: [(String, Int8)] = [("mass", mass), ("length", length), ("time", time),
                                       ("count", count), ("temperature", temperature), ("IU", internationalUnit)]
        let nonzero = parts.filter { $0.1 != 0 }.map { $0.1 == 1 ? $0.0 : "\($0.0)^\($0.1)" }
        return nonzero.isEmpty ? "dimensionless" : nonzero.joined(separator: "·")
    }
}

/// The unit-string parser. Kept apart from ``HealthUnit`` so the grammar reads in one place.
enum UnitParser {
    struct Atom { var factor: Double; var offset: Double = 0; var dimension: Dimension; var prefixable: Bool }

    /// Base units by symbol. Factors are onto SI (kg is 1, so `g` is 1e-3).
    static let atoms: [String: Atom] = {
        let mass = Dimension(mass: 1), length = Dimension(length: 1), time = Dimension(time: 1)
        let energy = Dimension(mass: 1, length: 2, time: -2)
        let pressure = Dimension(mass: 1, length: -1, time: -2)
        let volume = Dimension(length: 3)
        var a: [String: Atom] = [
            // SI, prefixable
            "g": Atom(factor: 1e-3, dimension: mass, prefixable: true),
            "m": Atom(factor: 1, dimension: length, prefixable: true),
            "L": Atom(factor: 1e-3, dimension: volume, prefixable: true),
            "l": Atom(factor: 1e-3, dimension: volume, prefixable: true),
            "Pa": Atom(factor: 1, dimension: pressure, prefixable: true),
            "s": Atom(factor: 1, dimension: time, prefixable: true),
            "J": Atom(factor: 1, dimension: energy, prefixable: true),
            "K": Atom(factor: 1, dimension: Dimension(temperature: 1), prefixable: true),
            "Hz": Atom(factor: 1, dimension: Dimension(time: -1), prefixable: true),
            // non-SI
            "count": Atom(factor: 1, dimension: Dimension(count: 1), prefixable: false),
            "%": Atom(factor: 0.01, dimension: .dimensionless, prefixable: false),
            "IU": Atom(factor: 1, dimension: Dimension(internationalUnit: 1), prefixable: false),
            "min": Atom(factor: 60, dimension: time, prefixable: false),
            "h": Atom(factor: 3600, dimension: time, prefixable: false),
            "hr": Atom(factor: 3600, dimension: time, prefixable: false),
            "d": Atom(factor: 86400, dimension: time, prefixable: false),
            "oz": Atom(factor: 0.028349523125, dimension: mass, prefixable: false),
            "lb": Atom(factor: 0.45359237, dimension: mass, prefixable: false),
            "st": Atom(factor: 6.35029318, dimension: mass, prefixable: false),
            "in": Atom(factor: 0.0254, dimension: length, prefixable: false),
            "ft": Atom(factor: 0.3048, dimension: length, prefixable: false),
            "yd": Atom(factor: 0.9144, dimension: length, prefixable: false),
            "mi": Atom(factor: 1609.344, dimension: length, prefixable: false),
            "mmHg": Atom(factor: 133.322387415, dimension: pressure, prefixable: false),
            "cmAq": Atom(factor: 98.0665, dimension: pressure, prefixable: false),
            "atm": Atom(factor: 101_325, dimension: pressure, prefixable: false),
            "inHg": Atom(factor: 3386.389, dimension: pressure, prefixable: false),
            "cal": Atom(factor: 4.184, dimension: energy, prefixable: false),
            "kcal": Atom(factor: 4184, dimension: energy, prefixable: false),
            "Cal": Atom(factor: 4184, dimension: energy, prefixable: false),
            "fl_oz_us": Atom(factor: 29.5735295625e-6, dimension: volume, prefixable: false),
            "fl_oz_imp": Atom(factor: 28.4130625e-6, dimension: volume, prefixable: false),
            "pt_us": Atom(factor: 473.176473e-6, dimension: volume, prefixable: false),
            "pt_imp": Atom(factor: 568.26125e-6, dimension: volume, prefixable: false),
            "cup_us": Atom(factor: 236.5882365e-6, dimension: volume, prefixable: false),
            "cup_imp": Atom(factor: 284.130625e-6, dimension: volume, prefixable: false),
        ]
        // Temperatures with an offset: only valid on their own (see parse).
        a["degC"] = Atom(factor: 1, offset: 273.15, dimension: Dimension(temperature: 1), prefixable: false)
        a["degF"] = Atom(factor: 5.0 / 9.0, offset: 273.15 - 32 * 5.0 / 9.0,
                         dimension: Dimension(temperature: 1), prefixable: false)
        return a
    }()

    /// SI prefixes, longest first so `mc` (micro) and `da` (deca) win over `m` and `d`.
    static let prefixes: [(String, Double)] = [
        ("da", 1e1), ("mc", 1e-6), ("h", 1e2), ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12),
        ("d", 1e-1), ("c", 1e-2), ("m", 1e-3), ("u", 1e-6), ("µ", 1e-6), ("n", 1e-9), ("p", 1e-12), ("f", 1e-15),
    ]

    static func parse(_ s: String, original: String) throws -> (factor: Double, offset: Double, dimension: Dimension) {
        let halves = s.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count <= 2 else {
            throw HealthModelError.invalidUnit(original, reason: "only one '/' is allowed (write kg/m.s^2 for kg/(m.s^2))")
        }
        var numerator = String(halves[0])
        var denominator = halves.count == 2 ? String(halves[1]) : nil
        if let d = denominator, d.hasPrefix("("), d.hasSuffix(")") { denominator = String(d.dropFirst().dropLast()) }
        if numerator.hasPrefix("("), numerator.hasSuffix(")") { numerator = String(numerator.dropFirst().dropLast()) }
        if numerator == "1" || (numerator.isEmpty && denominator != nil) { numerator = "" }

        var factor = 1.0, dim = Dimension.dimensionless
        var offset = 0.0
        var atomCount = 0
        for (side, sign) in [(numerator, 1), (denominator ?? "", -1)] where !side.isEmpty {
            for piece in side.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "." || $0 == "*" }) {
                guard !piece.isEmpty else {
                    throw HealthModelError.invalidUnit(original, reason: "an empty factor between '.' or '*'")
                }
                let (f, o, d) = try parseFactor(String(piece), original: original)
                atomCount += 1
                // With exponents within ±9, eight factors keep every dimension inside Int8.
                guard atomCount <= 8 else {
                    throw HealthModelError.invalidUnit(original, reason: "more than 8 factors")
                }
                if o != 0 { offset = o }
                let power = sign
                factor *= pow(f, Double(power))
                dim = dim + d.raised(to: power)
            }
        }
        guard atomCount > 0 else { throw HealthModelError.invalidUnit(original, reason: "no unit in it") }
        if offset != 0, atomCount != 1 || denominator != nil {
            throw HealthModelError.invalidUnit(original, reason: "degC and degF cannot be combined with other units")
        }
        return (factor, atomCount == 1 ? offset : 0, dim)
    }

    /// One factor: `prefix? symbol ('^' integer)?`.
    static func parseFactor(_ piece: String, original: String) throws -> (Double, Double, Dimension) {
        var symbol = piece, power = 1
        if let caret = piece.firstIndex(of: "^") {
            symbol = String(piece[..<caret])
            let exp = piece[piece.index(after: caret)...]
            // Bounded: dimensions are Int8 exponents, and `m^-9223372036854775808` must not trap.
            guard let p = Int(exp), p != 0, (-9...9).contains(p) else {
                throw HealthModelError.invalidUnit(original, reason: "'\(exp)' after '^' is not a non-zero integer from -9 to 9")
            }
            power = p
        }
        let atom: Atom
        if let exact = atoms[symbol] {
            atom = exact
        } else if let (scale, base) = prefixes.lazy.compactMap({ (p, f) -> (Double, Atom)? in
            guard symbol.hasPrefix(p), let base = atoms[String(symbol.dropFirst(p.count))], base.prefixable else { return nil }
            return (f, base)
        }).first {
            atom = Atom(factor: scale * base.factor, dimension: base.dimension, prefixable: false)
        } else {
            throw HealthModelError.invalidUnit(original, reason: "'\(symbol)' is not a unit HealthGate knows (try count, count/min, kJ, kcal, ms, s, min, h, m, km, kg, g)")
        }
        if atom.offset != 0, power != 1 {
            throw HealthModelError.invalidUnit(original, reason: "degC and degF cannot be raised to a power")
        }
        return (pow(atom.factor, Double(power)), atom.offset, atom.dimension.raised(to: power))
    }

    private static func pow(_ x: Double, _ n: Double) -> Double {
        var result = 1.0
        let k = Int(n)
        for _ in 0..<abs(k) { result *= x }
        return k < 0 ? 1 / result : result
    }
}
