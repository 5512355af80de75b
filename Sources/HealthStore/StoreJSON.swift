import Foundation
import HealthModel

// The JSON shapes of the store's answers besides samples (``SampleJSON``): what `healthgate
// … --json` prints, defined once here so every front-end (the CLI; an HTTP API) serves the
// same objects. Absent values are JSON null; times are ISO 8601 in UTC.

extension DeviceRecord {
    /// `{"name", "alias", "kind", "address", "addressType", "localIdentifier", "lastSeen",
    /// "battery", "sensorLocation", "manufacturer", "model", "hardwareVersion",
    /// "firmwareVersion", "softwareVersion"}` (`healthgate devices --json`).
    package var jsonObject: [String: Any] {
        func v(_ x: Any?) -> Any { x ?? NSNull() }
        return [
            "name": v(device.name), "alias": v(alias), "kind": kind.rawValue, "address": v(address),
            "addressType": v(addressType), "localIdentifier": v(device.localIdentifier),
            "lastSeen": v(lastSeen.map(ISO8601.string)), "battery": v(battery),
            "sensorLocation": v(sensorLocation?.name), "manufacturer": v(device.manufacturer),
            "model": v(device.model), "hardwareVersion": v(device.hardwareVersion),
            "firmwareVersion": v(device.firmwareVersion), "softwareVersion": v(device.softwareVersion),
        ]
    }
}

extension SourceInfo {
    /// `{"name", "identifier", "rank", "samples", "version"?, "first"?, "last"?, "devices"}`
    /// (`healthgate sources --json`), with the source's `devices` (``SourceDevice/jsonObject``).
    package func jsonObject(devices: [SourceDevice]) -> [String: Any] {
        var o: [String: Any] = ["name": source.name, "identifier": source.identifier, "rank": rank, "samples": sampleCount]
        o["version"] = source.version
        o["first"] = firstSample.map(ISO8601.string)
        o["last"] = lastSample.map(ISO8601.string)
        o["devices"] = devices.map(\.jsonObject)
        return o
    }
}

extension SourceDevice {
    /// The HKDevice fields that are set, plus the registry's `kind` and `alias` and the
    /// `samples` count.
    package var jsonObject: [String: Any] {
        var o = SampleJSON.deviceObject(device)
        o["kind"] = kind.rawValue
        o["alias"] = alias ?? NSNull()
        o["samples"] = sampleCount
        return o
    }
}

extension ChangeSet {
    /// `{"samples": [<SampleJSON objects>], "deleted": [uuid…], "anchor": "…", "hasMore": bool}`
    /// (`healthgate changes --json`, one `watch --json` line).
    package func jsonObject() throws -> [String: Any] {
        [
            "samples": try samples.map { try SampleJSON.object($0) },
            "deleted": deleted.map { $0.uuid.uuidString.lowercased() },
            "anchor": anchor.description,
            "hasMore": hasMore,
        ]
    }
}

extension ChangeFeedStatus {
    /// `{"count", "retentionSeconds", "prunedThrough", "oldest", "anchor"}` (`healthgate
    /// tombstones --json`).
    package var jsonObject: [String: Any] {
        ["count": tombstoneCount, "retentionSeconds": retention, "prunedThrough": prunedThrough,
         "oldest": oldestTombstone.map(ISO8601.string) ?? NSNull(), "anchor": currentAnchor.description]
    }
}

extension QuantityType {
    /// `{"identifier", "unit", "aggregationStyle", "summary", "plausibleRange"?: [min, max]}`
    /// (`healthgate types --json`): the values one sample may have (docs/input-rules.md).
    package var jsonObject: [String: Any] {
        var o: [String: Any] = ["identifier": identifier, "unit": canonicalUnitString,
                                "aggregationStyle": aggregationStyle.rawValue, "summary": summary]
        if let r = plausibleRange { o["plausibleRange"] = [r.lowerBound, r.upperBound] }
        return o
    }
}
