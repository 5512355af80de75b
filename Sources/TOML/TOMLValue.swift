/// A value in a TOML 1.0 document (<https://toml.io/en/v1.0.0>).
///
/// Dates and times keep the text they were written as (validated: a real calendar day, hours
/// 00–23, …); HealthGate's configuration has none, and a caller that wants one parses the text.
package enum TOMLValue: Sendable, Equatable {
    /// A basic or literal string, single- or multi-line, with its escapes resolved.
    case string(String)
    /// A decimal, hexadecimal, octal or binary integer (64-bit, as TOML requires).
    case integer(Int64)
    /// A float, including `inf` and `nan`.
    case float(Double)
    /// `true` or `false`.
    case boolean(Bool)
    /// `1979-05-27T07:32:00Z`, `1979-05-27 07:32:00-07:00`.
    case offsetDateTime(String)
    /// `1979-05-27T07:32:00`.
    case localDateTime(String)
    /// `1979-05-27`.
    case localDate(String)
    /// `07:32:00`.
    case localTime(String)
    /// An array (`[…]`, or the tables of an array of tables `[[…]]`).
    case array([TOMLValue])
    /// A table (a `[header]`, an inline table `{…}`, the parents of dotted keys).
    case table(TOMLTable)

    /// The string, if this is one.
    package var string: String? { if case .string(let s) = self { s } else { nil } }
    /// The integer as an `Int`, if this is an integer.
    package var int: Int? { if case .integer(let i) = self { Int(i) } else { nil } }
    /// The float, if this is one (an integer is not: TOML keeps the two apart).
    package var double: Double? { if case .float(let d) = self { d } else { nil } }
    /// The boolean, if this is one.
    package var bool: Bool? { if case .boolean(let b) = self { b } else { nil } }
    /// The elements, if this is an array.
    package var array: [TOMLValue]? { if case .array(let a) = self { a } else { nil } }
    /// The table, if this is one.
    package var table: TOMLTable? { if case .table(let t) = self { t } else { nil } }

    /// The kind of value in words, for messages ("expected a whole number, found string").
    package var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .float: "float"
        case .boolean: "boolean"
        case .offsetDateTime: "date-time"
        case .localDateTime: "local date-time"
        case .localDate: "local date"
        case .localTime: "local time"
        case .array: "array"
        case .table: "table"
        }
    }
}

/// A TOML table: keys in the order the document gave them, each with its value.
package struct TOMLTable: Sendable, Equatable {
    /// The keys, in document order.
    package private(set) var keys: [String]
    private var values: [String: TOMLValue]

    /// An empty table.
    package init() {
        keys = []
        values = [:]
    }

    /// Parses a whole TOML 1.0 document.
    ///
    /// Never traps, whatever `text` holds: every mistake is a ``TOMLError`` with its line and
    /// column. A leading byte-order mark is the caller's to strip; CRLF line ends are read as LF.
    /// - Throws: ``TOMLError``.
    package init(parsing text: String) throws(TOMLError) {
        var parser = TOMLParser(text)
        self = try parser.document()
    }

    /// The value under `key`, or nil.
    package subscript(key: String) -> TOMLValue? { values[key] }

    /// The number of keys.
    package var count: Int { keys.count }

    mutating func append(_ key: String, _ value: TOMLValue) {
        if values.updateValue(value, forKey: key) == nil { keys.append(key) }
    }
}

/// A mistake in a TOML document: where (1-based line and column, in Unicode scalars) and what.
package struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line.
    package var line: Int
    /// The 1-based column, counted in Unicode scalars.
    package var column: Int
    /// What is wrong, in a sentence without the position.
    package var message: String

    /// Creates an error at `line`:`column`.
    package init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    package var description: String { "line \(line), column \(column): \(message)" }
}
