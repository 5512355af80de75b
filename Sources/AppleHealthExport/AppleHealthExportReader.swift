import Foundation
import HealthModel
#if canImport(Glibc)
import Glibc
#endif

/// Reads Apple Health's export (`export.zip`, or the `export.xml` inside it) as a stream:
/// quantity records of the mapped types become ``QuantitySample``s, `<Workout>`s become
/// ``AppleHealthWorkout``s, both delivered in batches to a closure, with a report of everything
/// else (docs/apple-health.md).
///
/// Memory stays bounded whatever the export's size: the XML is read in 1 MiB chunks (a zip
/// by zlib on a thread of its own), one record is assembled at a time, and at most one batch is held.
/// Every sample and workout gets a UUID derived from its content, so importing the same export
/// twice, or a newer one, adds only what is new to a store that drops known UUIDs.
///
/// ```swift
/// let reader = try AppleHealthExportReader(path: "export.zip")
/// var report = AppleHealthExportReport()
/// try reader.read(into: &report) { batch in
///     try writer.save(batch.samples)        // the integrator's store
///     progress(batch.bytesRead, batch.totalBytes)
/// }
/// ```
public struct AppleHealthExportReader: Sendable {
    /// How to read.
    public struct Options: Sendable {
        /// Samples per batch (1 or more). Workouts ride with the batch being filled.
        public var batchSize: Int
        /// Whether the heartbeat lists of SDNN records become heart-rate samples with RR intervals.
        public var heartbeatSamples: Bool
        /// How many bad records the report lists (all are counted).
        public var maxBadRecordsKept: Int
        /// Apple's type identifiers and the HealthGate types they become; others are counted as unknown.
        public var types: [String: QuantityType]
        /// A batch without samples is delivered after this many bytes without one, so a progress
        /// bar moves through long stretches of types that are not imported.
        public var progressBytes: Int64
        /// How samples' UUIDs are derived from their content (workouts' are the same under both).
        public var sampleIdentity: SampleIdentity

        public init(batchSize: Int = 5000, heartbeatSamples: Bool = true, maxBadRecordsKept: Int = 1000,
                    types: [String: QuantityType] = AppleHealthExportReader.standardTypes, progressBytes: Int64 = 16 << 20,
                    sampleIdentity: SampleIdentity = .timeOrdered) {
            precondition(batchSize >= 1, "a batch holds at least one sample")
            self.batchSize = batchSize
            self.heartbeatSamples = heartbeatSamples
            self.maxBadRecordsKept = maxBadRecordsKept
            self.types = types
            self.progressBytes = progressBytes
            self.sampleIdentity = sampleIdentity
        }
    }

    /// How a sample's UUID is derived from its content (docs/apple-health.md, "Identity"). Both
    /// give the same sample the same UUID in every reading of every export; a store must keep
    /// to one of them, or a re-import would add every sample again.
    public enum SampleIdentity: String, Sendable, CaseIterable {
        /// The first 16 bytes of the SHA-256 of the sample's fields (imports before 2026-11-29).
        /// Random order: a batch's inserts touch most leaves of the store's UUID index.
        case contentHash = "1"
        /// The same hash with its first 48 bits replaced by the start in milliseconds: UUIDs in
        /// time order, as an export lists a type's records, so a batch's inserts land on a few
        /// leaves of the UUID index (an import about twice as fast on a large export).
        case timeOrdered = "2"
    }

    /// The record types read by default and the types they become.
    public static let standardTypes: [String: QuantityType] = [
        "HKQuantityTypeIdentifierHeartRate": .heartRate,
        "HKQuantityTypeIdentifierRestingHeartRate": .restingHeartRate,
        "HKQuantityTypeIdentifierHeartRateVariabilitySDNN": .heartRateVariabilitySDNN,
        "HKQuantityTypeIdentifierStepCount": .stepCount,
        "HKQuantityTypeIdentifierActiveEnergyBurned": .activeEnergyBurned,
        "HKQuantityTypeIdentifierDistanceWalkingRunning": .distanceWalkingRunning,
        "HKQuantityTypeIdentifierBodyMass": .bodyMass,
    ]

    /// The source identifier of samples an export says `sourceName` wrote. The export has no
    /// bundle identifiers, so HealthGate names the source in a namespace of its own.
    public static func sourceIdentifier(name: String) -> String { "apple-health:" + name }

    /// The path given.
    public let path: String
    /// What it is: the XML itself, or a zip and its entry.
    public let input: AppleHealthExportInput
    /// The XML's size in bytes (for a zip, the entry's uncompressed size).
    public let totalBytes: Int64?
    /// How it reads (set before ``read(into:_:)``).
    public var options: Options
    /// For ``AppleHealthExportInput/stream``: the pipe, with the bytes already read from it.
    private let pipe: PipeInput?

    /// Opens `path` far enough to know what it is: a zip (its directory read, the export entry
    /// found) or an XML file. `-` is standard input, which, like a pipe (`/dev/stdin`, `<(…)`),
    /// can hold the XML only — a zip's directory is at its end — and can be read once.
    /// - Throws: ``AppleHealthExportError`` when the file is missing, unreadable, not an export,
    ///   a zip without `export.xml`, or a zip through a pipe.
    public init(path: String, options: Options = Options()) throws(AppleHealthExportError) {
        self.path = path
        self.options = options
        if path == "-" {
            (input, totalBytes, pipe) = try Self.pipe(fd: 0, owned: false, path: path)
            return
        }
        var st = stat()
        guard stat(path, &st) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw AppleHealthExportError.fileMissing(path: path) }
            throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard (st.st_mode & S_IFMT) != S_IFDIR else {
            throw AppleHealthExportError.unreadable(path: path, reason: "it is a directory (give the export.xml inside it)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            // A pipe, a FIFO or a device: what is read to tell the format must not be lost.
            (input, totalBytes, pipe) = try Self.pipe(fd: fd, owned: true, path: path)
            return
        }
        pipe = nil
        defer { close(fd) }
        let head = try Self.readHead(fd: fd, path: path)
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            let entries = try ZipDirectory.entries(fd: fd, size: Int64(st.st_size), path: path)
            guard let entry = ZipDirectory.exportEntry(entries) else {
                throw AppleHealthExportError.noExportXML(path: path, entries: entries.map(\.name))
            }
            input = .zip(entry: entry.name)
            totalBytes = entry.uncompressedSize
        } else {
            guard Self.startsLikeXML(head) else {
                throw AppleHealthExportError.notAnExport(path: path, reason: head.isEmpty ? "it is empty" : "it is neither a zip archive nor XML")
            }
            input = .xml
            totalBytes = Int64(st.st_size)
        }
    }

    /// A pipe's first bytes read (up to 64, or its end) and checked: XML, which is then read
    /// from them on; a zip or anything else is refused with what to do.
    private static func pipe(fd: Int32, owned: Bool, path: String) throws(AppleHealthExportError)
        -> (AppleHealthExportInput, Int64?, PipeInput) {
        let handle = PipeInput(fd: fd, head: try readHead(fd: fd, path: path), owned: owned)
        let head = handle.head
        if head.starts(with: [0x50, 0x4B]) {
            throw AppleHealthExportError.notAnExport(path: path, reason: "it is a zip arriving through a pipe, and a zip's directory is at its end: give the zip's path, or pipe the export.xml inside it (unzip -p export.zip apple_health_export/export.xml | healthgate import --apple-health -)")
        }
        guard startsLikeXML(head) else {
            throw AppleHealthExportError.notAnExport(path: path, reason: head.isEmpty ? "it is empty" : "it is not XML (a zip must be given by its path)")
        }
        return (.stream, nil, handle)
    }

    /// Whether a file's first bytes start an XML document: a `<` after an optional UTF-8
    /// byte-order mark and whitespace.
    private static func startsLikeXML(_ head: [UInt8]) -> Bool {
        var body = head[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        return body.first { ![0x20, 0x0A, 0x0D, 0x09].contains($0) } == 0x3C
    }

    /// Up to 64 bytes from `fd`, fewer only at its end (a pipe may hand them over in pieces).
    private static func readHead(fd: Int32, path: String) throws(AppleHealthExportError) -> [UInt8] {
        var head = [UInt8](repeating: 0, count: 64)
        var got = 0
        while got < head.count {
            let n = head.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, 64 - got) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw AppleHealthExportError.unreadable(path: path, reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            got += n
        }
        return Array(head.prefix(got))
    }

    /// Reads the export, handing `body` batches of samples and workouts, and fills in `report`
    /// as it goes (so it says how far the reading got when it stops early).
    /// - Throws: ``AppleHealthExportError`` when the XML is malformed (samples before the line
    ///   named were delivered) or the zip entry is damaged (also when its damage broke the XML
    ///   first); whatever `body` throws, which stops the reading.
    public func read(into report: inout AppleHealthExportReport, _ body: (AppleHealthExportBatch) throws -> Void) throws {
        let stream = try XMLByteStream(path: path, input: input, pipe: pipe)
        defer { stream.close() }
        let parser = ExportParser(scanner: XMLScanner(source: stream, path: path), path: path, options: options, totalBytes: totalBytes)
        parser.report = report
        parser.report.totalBytes = totalBytes
        defer { report = parser.report }
        do {
            try parser.run(body)
        } catch AppleHealthExportError.malformedXML(let p, let line, let reason) where input != .xml {
            // Damaged compressed data often decompresses to bytes that break the XML before the
            // entry's end, where its CRC-32 would tell: the zip's damage is the cause to report.
            try stream.finish()
            throw AppleHealthExportError.malformedXML(path: p, line: line, reason: reason)
        }
        try stream.finish()
        parser.report.complete = true
    }

    /// Reads the export (see ``read(into:_:)``) and returns the report.
    public func read(_ body: (AppleHealthExportBatch) throws -> Void) throws -> AppleHealthExportReport {
        var report = AppleHealthExportReport()
        try read(into: &report, body)
        return report
    }
}

/// A few recent values by the raw bytes they were made from: records of one type from one
/// source and device come in runs, so their strings are decoded once per run, not per record.
struct ByteCache<Value> {
    private var keys: [[UInt8]] = []
    private var values: [Value] = []
    private var next = 0
    private let size: Int

    init(size: Int = 4) { self.size = size }

    mutating func value(for raw: UnsafeBufferPointer<UInt8>, make: () -> Value) -> Value {
        for k in keys.indices where keys[k].count == raw.count {
            if raw.isEmpty || keys[k].withUnsafeBufferPointer({ memcmp($0.baseAddress!, raw.baseAddress!, raw.count) == 0 }) {
                return values[k]
            }
        }
        let v = make()
        if keys.count < size {
            keys.append(Array(raw))
            values.append(v)
        } else {
            keys[next] = Array(raw)
            values[next] = v
            next = (next + 1) % size
        }
        return v
    }
}
