import ChildProcess
import Foundation
import HealthGateTesting
import Testing
@testable import TOML

/// The TOML reader: values, the table rules, errors with their place, and agreement with
/// CPython's `tomllib` (a real peer, run as a child) over edge documents and the fuzz corpus.
@Suite("TOML reader: TOML 1.0 as tomllib reads it, errors with line and column, never a trap")
struct TOMLReaderTests {
    @Test func valuesOfEveryKind() throws {
        let t = try TOMLTable(parsing: """
            s = "a\\tb\\u00E9\\U0001F600"
            lit = 'C:\\path'
            ml = \"\"\"
            one \\
              two\"\"\"
            mll = '''
            x''\'''
            i = -1_000
            h = 0xDEAD_beef
            o = 0o17
            b = 0b101
            max = 9223372036854775807
            min = -9223372036854775808
            f = 6.626e-34
            inf = -inf
            yes = true
            odt = 1979-05-27 07:32:00.999999-07:00
            ldt = 1979-05-27T07:32:00
            ld = 2024-02-29
            lt = 00:32:00.5
            arr = [ 1, "two", [3.0], {x = 1}, ]
            """)
        #expect(t["s"] == .string("a\tb\u{E9}\u{1F600}"))
        #expect(t["lit"] == .string("C:\\path"))
        #expect(t["ml"] == .string("one two"))
        #expect(t["mll"] == .string("x''"), "a closing quote run of five: the string ends with two of them")
        #expect(t["i"] == .integer(-1000))
        #expect(t["h"] == .integer(0xDEAD_BEEF))
        #expect(t["o"] == .integer(15))
        #expect(t["b"] == .integer(5))
        #expect(t["max"] == .integer(.max))
        #expect(t["min"] == .integer(.min))
        #expect(t["f"] == .float(6.626e-34))
        #expect(t["inf"] == .float(-.infinity))
        #expect(t["yes"] == .boolean(true))
        #expect(t["odt"] == .offsetDateTime("1979-05-27 07:32:00.999999-07:00"))
        #expect(t["ldt"] == .localDateTime("1979-05-27T07:32:00"))
        #expect(t["ld"] == .localDate("2024-02-29"))
        #expect(t["lt"] == .localTime("00:32:00.5"))
        var x = TOMLTable()
        x.append("x", .integer(1))
        #expect(t["arr"] == .array([.integer(1), .string("two"), .array([.float(3)]), .table(x)]))
        #expect(t.keys.first == "s" && t.keys.last == "arr", "keys keep the document's order")
    }

    @Test func tablesArraysOfTablesAndDottedKeys() throws {
        let t = try TOMLTable(parsing: """
            a.b = 1
            a.c = 2
            [x.y]
            z = 3
            [x]
            w = 4
            [[p]]
            n = 1
            [p.q]
            m = 2
            [[p]]
            n = 2
            """)
        #expect(t["a"]?.table?["c"] == .integer(2))
        #expect(t["x"]?.table?["y"]?.table?["z"] == .integer(3))
        #expect(t["x"]?.table?["w"] == .integer(4))
        let p = try #require(t["p"]?.array)
        #expect(p.count == 2)
        #expect(p[0].table?["q"]?.table?["m"] == .integer(2))
        #expect(p[1].table?["n"] == .integer(2))
    }

    struct Refused: CustomTestStringConvertible, Sendable {
        var text: String
        var line: Int
        var column: Int
        var says: String
        var testDescription: String { text.debugDescription }
    }

    @Test(arguments: [
        // Found by fuzzing toml++ (TOMLKit's core), which aborted the process on each.
        Refused(text: "a = [}]\n", line: 1, column: 6, says: "expected a value"),
        Refused(text: "a = [1,\u{2028}]\n", line: 1, column: 8, says: "U+2028"),
        Refused(text: "[?tore]\n", line: 1, column: 2, says: "expected a key"),
        Refused(text: "[\u{1B}strap]]\n", line: 1, column: 2, says: "U+001B"),
        Refused(text: "a = \u{A0}1\n", line: 1, column: 5, says: "U+00A0"),
        // The table rules.
        Refused(text: "[a]\nb = 1\n[a]\n", line: 3, column: 1, says: "[a] is defined twice"),
        Refused(text: "a.b = 1\n[a]\n", line: 2, column: 1, says: "defined twice"),
        Refused(text: "[a.b]\n[a]\nb.c = 1\n", line: 3, column: 1, says: "already defined"),
        Refused(text: "a = 1\na = 2\n", line: 2, column: 1, says: "'a' is defined twice"),
        Refused(text: "a = {}\n[a.b]\n", line: 2, column: 1, says: "already a table"),
        Refused(text: "a = [1]\n[[a]]\n", line: 2, column: 1, says: "already an array"),
        Refused(text: "[a]\n[[a]]\n", line: 2, column: 1, says: "not an array of tables"),
        Refused(text: "[[a]]\n[a]\n", line: 2, column: 1, says: "write [[a]]"),
        Refused(text: "a = {b = 1, b = 2}\n", line: 1, column: 13, says: "twice in an inline table"),
        Refused(text: "a = {b = 1,}\n", line: 1, column: 12, says: "expected a key"),
        Refused(text: "a = {b = 1\n}\n", line: 1, column: 11, says: "one line"),
        // Values and what may follow them.
        Refused(text: "n = 01\n", line: 1, column: 6, says: "expected the end of the line"),
        Refused(text: "n = 1__0\n", line: 1, column: 6, says: "found '_'"),
        Refused(text: "n = 9223372036854775808\n", line: 1, column: 5, says: "too large for a 64-bit integer"),
        Refused(text: "n = 0x8000000000000000\n", line: 1, column: 5, says: "too large"),
        Refused(text: "f = 1.\n", line: 1, column: 6, says: "found '.'"),
        Refused(text: "d = 2023-02-29\n", line: 1, column: 5, says: "not a day of the calendar"),
        Refused(text: "s = \"a\\qb\"\n", line: 1, column: 7, says: "\\q is not an escape"),
        Refused(text: "s = \"\\uD800\"\n", line: 1, column: 8, says: "not a Unicode scalar value"),
        Refused(text: "s = \"open\n", line: 1, column: 10, says: "not closed on its line"),
        Refused(text: "s = '''never closed\n", line: 2, column: 1, says: "not closed"),
        Refused(text: "k = truee\n", line: 1, column: 9, says: "found 'e'"),
        Refused(text: "k = \n", line: 1, column: 5, says: "expected a value"),
        Refused(text: "x\r= 1\n", line: 1, column: 2, says: "U+000D"),
        Refused(text: "# comment \u{7F}\n", line: 1, column: 11, says: "not allowed in a comment"),
    ])
    func refusedWithTheirPlace(_ c: Refused) {
        do {
            _ = try TOMLTable(parsing: c.text)
            Issue.record("accepted \(c.text.debugDescription)")
        } catch {
            #expect(error.message.contains(c.says), "\(error)")
            #expect(error.line == c.line && error.column == c.column, "\(error)")
        }
    }

    @Test func nestingIsBoundedNotAStackOverflow() throws {
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: TOMLError.self) { try TOMLTable(parsing: "a = " + deep) }
        let ok = "a = " + String(repeating: "[", count: TOMLParser.maximumDepth) + String(repeating: "]", count: TOMLParser.maximumDepth)
        #expect(try TOMLTable(parsing: ok)["a"] != nil)
    }

    @Test func crlfIsOneLineEnd() throws {
        let t = try TOMLTable(parsing: "a = 1\r\nb = \"\"\"\r\nx\r\ny\"\"\"\r\n")
        #expect(t["b"] == .string("x\ny"))
        #expect(throws: TOMLError.self) { try TOMLTable(parsing: "a = \"x\ry\"\n") }
    }

    /// Edge documents, each read by both parsers: the accepted ones must give the same values,
    /// the refused ones must be refused by both.
    static let edgeDocuments: [String] = [
        "", "\n\n", "# only a comment", "a=1", "a = 1 # c", "a = 1 b = 2", " \t a = 1",
        "\"\" = 1", "'' = 1", "a.\"b.c\".d = 1", "a . b = 1", "1 = 1", "1.2 = 3", "-_- = 1", "a = 1\n a.b = 2",
        "[a]\n[a.b]\n[a]", "[a.b]\n[a]\n[a.b]", "[a]\nb.c = 1\n[a.b]", "[a]\nb.c = 1\n[a.b.d]", "a.b = 1\n[a.c]",
        "a.b = 1\na.b.c = 2", "[[a]]\n[a.b]\n[[a]]\n[a.b]", "[[a.b]]\n[a]\n", "[[a.b]]\n[[a]]", "a = [{}]\n[a.b]",
        "a = {b.c = 1, b.d = 2}", "a = {b = {}, b.c = 1}", "a = {b.c = 1, b = 2}", "a = { }", "a = {,}", "a = {b=1 c=2}",
        "a = []", "a = [,]", "a = [1,,2]", "a = [\n1,\n# c\n2,\n]", "a = [1 2]", "a = [[[[]]]]", "a = [1, 'x', 2.0, true, {}]",
        "a = \"\"", "a = \"\"\"\"\"\"", "a = \"\"\"\"\"\"\"", "a = \"\"\"\"\"\"\"\"", "a = \"\"\"x\"\"\"\"\"", "a = '''''''", "a = ''''''''",
        "a = \"\"\"\n\\\n  \n  x\"\"\"", "a = \"\"\"x\\  \n  y\"\"\"", "a = \"\"\"x\\  y\"\"\"", "a = \"\\U0010FFFF\"", "a = \"\\U00110000\"",
        "a = \"\\u00\"", "a = \"\\x41\"", "a = \"\\e\"", "a = 'a\tb'", "a = \"tab\there\"", "a = '''\n'''", "a = \"a\\\nb\"",
        "a = +0", "a = -0", "a = 0_0", "a = 00", "a = +01", "a = 1_000_000", "a = _1", "a = 1_", "a = 0x", "a = 0xg", "a = +0x1",
        "a = 0X1", "a = 0o8", "a = 0b2", "a = 0b1_0", "a = 0x_1", "a = 1e1", "a = 1E+1", "a = 1e-1_0", "a = 1.e1", "a = .1",
        "a = 1.0e", "a = -0.0", "a = +inf", "a = nan", "a = -nan", "a = Inf", "a = NaN", "a = 1.7976931348623157e309", "a = 5e-324",
        "a = 0.1", "a = 3.14159_26535", "a = 1__2.0", "a = 9223372036854775807", "a = -9223372036854775808",
        "a = 1979-05-27", "a = 1979-05-27T07:32:00Z", "a = 1979-05-27t07:32:00z", "a = 1979-05-27 07:32:00+23:59",
        "a = 1979-05-27 07:32:00+24:00", "a = 1979-05-27T07:32", "a = 1979-05-27T24:00:00", "a = 1979-05-27T07:60:00",
        "a = 1979-05-27T07:32:60", "a = 1979-13-01", "a = 1979-00-01", "a = 1979-04-31", "a = 2000-02-29", "a = 1900-02-29",
        "a = 1979-05-27 # date then comment", "a = 1979-05-27T", "a = 07:32:00", "a = 7:32:00", "a = 07:32", "a = 07:32:00.",
        "a = 07:32:00.1234567891", "a = 1979-05-27T07:32:00.5-07:00", "a = 1979-05-27 07:32:00Zz",
        "a = true", "a = TRUE", "a = tru", "a = false#c", "a = true false",
        "[a]b = 1", "[ a . b ]", "[a]]", "[[a]", "[[a]]]", "[ [a]]", "[]", "[[]]", "[a.]", "[.a]", "[a..b]", "[\"\"]", "['a'.\"b\"]",
        "a = 1\n[b]\na = 2", "[a]\nb = 1\n[b]\n[a.c]", "a = '''\ttab\n'''", "a = \"\"\"\u{7F}\"\"\"", "a\n= 1", "a =\n1", "=1",
        "a = \"\\\"\"", "a = 'it''s'", "a = \"é\"", "é = 1", "\"é\" = 1", "a = \"\u{0}\"",
        "[x]\n[x.y]\ny.z = 1\n[x.y.y]", "a.b.c = 1\na.b.d = 2\n[a.b.e]", "a = {b = [1]}\n[[a.b]]", "[[a]]\na.b = 1\n[[a]]\na.b = 2",
    ]

    @Test func agreesWithTomllibOnEdgeDocumentsAndTheFuzzCorpus() async throws {
        var documents = Self.edgeDocuments
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FuzzTargetsTests/Corpus/configuration")
        for file in try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted() {
            let data = try Data(contentsOf: corpus.appendingPathComponent(file))
            if let text = String(data: data, encoding: .utf8) { documents.append(text) }
        }
        let report = try await Self.compareWithTomllib(documents)
        #expect(report.compared + report.skipped == documents.count)
        #expect(report.compared >= Self.edgeDocuments.count - 4, "only the 64-bit and depth differences may be skipped")
        for d in report.disagree { Issue.record("tomllib disagrees: \(d)") }
    }

    /// Runs `tomllib_compare.py` over `documents`; returns what it found.
    static func compareWithTomllib(_ documents: [String]) async throws -> (compared: Int, skipped: Int, disagree: [String]) {
        let cases: [[String: Any]] = documents.map { doc in
            let ours: Any
            do throws(TOMLError) { ours = tagged(.table(try TOMLTable(parsing: doc))) } catch { ours = ["error": error.description] }
            return ["doc": doc, "ours": ours]
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("toml-compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.json"), output = dir.appendingPathComponent("out.json")
        try JSONSerialization.data(withJSONObject: cases).write(to: input)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("tomllib_compare.py").path
        let outcome = try await offThread { try WatchedChild.run(["python3", script, input.path, output.path], stderr: .descriptor(2), timeout: 120) }
        #expect(outcome.status == 0, "tomllib_compare.py exited \(outcome.status)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])
        let disagree = (report["disagree"] as? [Any] ?? []).map { entry in
            String(data: (try? JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys])) ?? Data(), encoding: .utf8) ?? "?"
        }
        return (report["compared"] as? Int ?? 0, report["skipped"] as? Int ?? 0, disagree)
    }

    /// The tagged form `tomllib_compare.py` builds from tomllib's result.
    static func tagged(_ v: TOMLValue) -> Any {
        switch v {
        case .string(let s): ["string": s]
        case .integer(let i): ["integer": String(i)]
        case .float(let d):
            ["float": d.isNaN ? "nan" : { let h = String(d.bitPattern, radix: 16); return String(repeating: "0", count: 16 - h.count) + h }()]
        case .boolean(let b): ["boolean": b]
        case .offsetDateTime: ["offsetDateTime": ""]
        case .localDateTime: ["localDateTime": ""]
        case .localDate: ["localDate": ""]
        case .localTime: ["localTime": ""]
        case .array(let a): ["array": a.map(tagged)]
        case .table(let t): ["table": Dictionary(uniqueKeysWithValues: t.keys.map { ($0, tagged(t[$0]!)) })]
        }
    }
}
