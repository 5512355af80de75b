import Foundation
import HealthModel
import HealthStore
import Sysexits

/// One good record of an import file: a sample, or a workout (``WorkoutRecordJSON``).
enum ImportRecord {
    case sample(QuantitySample)
    case workout(Workout)
}

/// The file's good records, one at a time: records read in blocks, each parsed by the fast
/// parser or, when it declines, by the Foundation parser (whose message a bad record gets).
/// Bad records are counted in the progress with their message (``ParsedBatches`` has them said
/// on stderr in order).
struct SampleStream {
    private enum Records {
        case lines(ByteLines)
        case array(ArrayElements)
    }
    private var records: Records
    private var parser: FastSampleParser
    /// Records read and bytes read so far (for the progress line).
    private(set) var position = (records: 0, bytes: 0)
    let path: String, what: String, array: Bool
    let registry: QuantityTypeRegistry

    init(input: ImportInput, path: String, what: String, array: Bool, registry: QuantityTypeRegistry) {
        records = array ? .array(ArrayElements(fd: input.fd)) : .lines(ByteLines(fd: input.fd))
        parser = FastSampleParser(registry: registry)
        self.path = path
        self.what = what
        self.array = array
        self.registry = registry
    }

    mutating func close() {
        switch records {
        case .lines(var r): r.close(); records = .lines(r)
        case .array(var r): r.close(); records = .array(r)
        }
    }

    /// The next record: its number, the line it starts on, its bytes (valid until the next call).
    private mutating func nextRecord() throws -> (number: Int, line: Int, bytes: UnsafeBufferPointer<UInt8>)? {
        switch records {
        case .lines(var r):
            defer { records = .lines(r); position = (r.number, r.bytesRead) }
            guard let b = try r.next() else { return nil }
            return (r.number, r.number, b)
        case .array(var r):
            defer { records = .array(r); position = (r.number, r.bytesRead) }
            guard let e = try r.next() else { return nil }
            return (e.number, e.line, e.bytes)
        }
    }

    private mutating func skip(_ p: inout ImportReport, _ number: Int, _ line: Int, _ why: String) {
        p.bad.append((number, line, why))
    }

    /// The next good record and its number; nil at the end of the file.
    mutating func next(_ p: inout ImportReport) throws -> (ImportRecord, Int)? {
        while true {
            let record: (number: Int, line: Int, bytes: UnsafeBufferPointer<UInt8>)?
            do {
                record = try nextRecord()
            } catch let e as ByteLines.ReadError {
                throw FileAccess.failure(errno: e.errno, .read, path: path, what: what)
            } catch let e as ArrayElements.StructureError {
                // Not an array (any more): a bad record, and nothing after it can be read.
                p.read = e.element
                p.stoppedEarly = true
                skip(&p, e.element, e.line, "\(e.reason); nothing after it was read")
                return nil
            }
            guard let (number, line, bytes) = record else { return nil }
            p.read = number
            if !LineText.isASCII(bytes), String(validating: bytes, as: UTF8.self) == nil {
                let bad = LineText.firstBadByte(bytes) ?? LineText.BadText(byte: bytes.last ?? 0, offset: bytes.count)
                skip(&p, number, line, array ? "\(bad)".replacingOccurrences(of: "of the line", with: "of the element") : "\(bad)")
                continue
            }
            if let s = parser.sample(bytes) { return (.sample(s), number) }
            // Not the fast parser's shape (a workout, or a bad record): the Foundation parser decides, with its messages.
            // A NUL byte first: JSON text cannot hold one, and Foundation would take NULs as the
            // sign of UTF-16 or UTF-32 and read the line in that encoding (a UTF-16 file's lines
            // after its first were imported so).
            if let nul = bytes.firstIndex(of: 0) {
                let what = array ? "element" : "line"
                skip(&p, number, line, "a NUL byte (0x00) at byte \(nul + 1) of the \(what), which JSON text cannot hold (is the file UTF-16?); save the file as UTF-8")
                continue
            }
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if text.isEmpty, !array { continue }
            do {
                if let w = try WorkoutRecordJSON.workout(fromLine: text) { return (.workout(w), number) }
                return (.sample(try SampleJSON.sample(fromLine: text, registry: registry)), number)
            } catch {
                skip(&p, number, line, "\(error)")
            }
        }
    }
}
