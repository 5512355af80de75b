/// Why an Apple Health export could not be read. Every case's ``description`` is one sentence
/// saying what went wrong, why, and what to do. A bad *record* is not an error: it is skipped and
/// reported (``AppleHealthBadRecord``); these stop the reading.
public enum AppleHealthExportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing exists at the path.
    case fileMissing(path: String)
    /// The file exists but cannot be read (permissions, a directory, an I/O error).
    case unreadable(path: String, reason: String)
    /// The file is neither a zip archive nor an XML document of Apple Health's (`<HealthData>`).
    case notAnExport(path: String, reason: String)
    /// The zip holds no `…/export.xml` (its first entries are listed).
    case noExportXML(path: String, entries: [String])
    /// The XML breaks the rules at `line` (a tag cut short, an end tag that closes another element).
    case malformedXML(path: String, line: Int, reason: String)
    /// The zip's export.xml cannot be decompressed: damaged or cut-short data, a CRC-32 that
    /// does not match, encryption or a compression method other than deflate.
    case zipUnreadable(path: String, reason: String)
    /// The store records a sample identity (``AppleHealthExportReader/SampleIdentity``) this
    /// version does not know: a newer version imported into it.
    case unknownSampleIdentity(recorded: String)

    public var description: String {
        switch self {
        case .fileMissing(let path):
            return "\(path) does not exist: give the path of the export.zip the Health app wrote (Profile → Export All Health Data), or of the export.xml inside it."
        case .unreadable(let path, let reason):
            return "\(path) cannot be read: \(reason); check the path and its permissions."
        case .notAnExport(let path, let reason):
            return "\(path) is not an Apple Health export: \(reason); give the export.zip the Health app wrote, or the apple_health_export/export.xml inside it."
        case .noExportXML(let path, let entries):
            let shown = entries.prefix(5).joined(separator: ", ") + (entries.count > 5 ? ", …" : "")
            return "\(path) holds no apple_health_export/export.xml (it has \(entries.isEmpty ? "no entries" : shown)): it is not the Health app's export, or only part of it; export again from the Health app."
        case .malformedXML(let path, let line, let reason):
            return "\(path): line \(line): the XML is malformed: \(reason); the export is damaged or cut short (a partial copy?): export again from the Health app. Records before this line were read."
        case .zipUnreadable(let path, let reason):
            return "\(path) cannot be decompressed: \(reason); export again from the Health app, or unzip it with another tool and give the path of apple_health_export/export.xml."
        case .unknownSampleIdentity(let recorded):
            return "this store's Apple Health imports derive sample UUIDs by scheme \"\(recorded)\", which this version of healthgate does not know (a newer version imported into the store): import with that version, or a re-import would add every record again."
        }
    }
}
