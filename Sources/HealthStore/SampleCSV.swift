import Foundation
import HealthModel

/// Samples as CSV for spreadsheets (`healthgate export --format csv`): RFC 4180 quoting, and a
/// text cell that a spreadsheet would run as a formula made inert. JSON lines (``SampleJSON``)
/// are what moves data between stores; CSV is one way.
package enum SampleCSV {
    /// The header row (without its line break).
    package static let header = "uuid,type,value,unit,start,end,source,source_identifier,device_name,device_manufacturer,device_model,device_local_identifier,sensor_location,sync_identifier,sync_version,metadata"

    /// One row for `sample` with its value in `unit` (without the line break): the fixed
    /// columns, then the free metadata as one JSON object (`metadataJSON` serialises it; an
    /// empty cell when there is none).
    package static func row(_ s: QuantitySample, unit u: HealthUnit,
                            metadataJSON: ([String: Any]) throws -> String) throws -> String {
        var meta = SampleJSON.metadataObject(s.metadata)
        for k in ["heartRateSensorLocation", "syncIdentifier", "syncVersion"] { meta[k] = nil }
        let cells: [String] = [
            s.uuid.uuidString.lowercased(), s.type.identifier, String(try s.quantity.doubleValue(for: u)),
            u.unitString, ISO8601.string(s.startDate), ISO8601.string(s.endDate)]
            .map(cell)
        let text: [String] = [
            s.source.name, s.source.identifier, s.device?.name ?? "", s.device?.manufacturer ?? "",
            s.device?.model ?? "", s.device?.localIdentifier ?? "", s.metadata.heartRateSensorLocation?.name ?? "",
            s.metadata.syncIdentifier ?? "", s.metadata.syncVersion.map(String.init) ?? "",
            try meta.isEmpty ? "" : metadataJSON(meta),
        ]
        return (cells + text.map(textCell)).joined(separator: ",")
    }

    /// A cell of free text (names, identifiers, metadata): a leading `=`, `+`, `-`, `@`, tab or
    /// carriage return would make a spreadsheet run it as a formula (CSV injection), so such a
    /// cell gets a `'` in front, as OWASP advises; then ``cell(_:)``'s quoting.
    package static func textCell(_ s: String) -> String {
        guard let first = s.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return cell(s) }
        return cell("'" + s)
    }

    /// RFC 4180: quote cells holding a comma, quote or line break; double inner quotes.
    package static func cell(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
