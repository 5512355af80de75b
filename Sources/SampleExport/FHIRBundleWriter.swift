import Foundation
import HealthModel
import Sysexits

/// Writes samples as one FHIR R4 `Bundle` (type `collection`) of `Observation`s, followed by a
/// `Device` resource for each device they came from (docs/interop.md, "FHIR R4").
///
/// Each observation: LOINC `code`, `category` (`vital-signs` or `activity`), `status` `final`,
/// the given `subject`, `effectiveDateTime` for an instant or `effectivePeriod` for an interval,
/// `valueQuantity` in UCUM, an `identifier` holding the sample's UUID (`urn:uuid:`), and a
/// `device` reference to the `Device` entry in the same bundle. Heart rate and body mass claim
/// the vital-signs profiles (`heartrate`, `bodyweight`). A type without a LOINC mapping here is
/// skipped and counted.
struct FHIRBundleWriter: SampleWriter {
    /// How one quantity type is written: its LOINC code, category and UCUM unit.
    struct Mapping {
        /// The LOINC code and its display name.
        var loinc: (code: String, display: String)
        /// `vital-signs` or `activity`.
        var category: String
        /// The unit values are written in, its UCUM code and its human-readable name.
        var unit: (unit: HealthUnit, ucum: String, text: String)
        /// The FHIR profile claimed in `meta.profile`, if any.
        var profile: String?
    }

    /// The types a FHIR export holds (LOINC codes as the vital-signs profile and LOINC name them).
    static let mappings: [String: Mapping] = [
        QuantityType.heartRate.identifier: Mapping(
            loinc: ("8867-4", "Heart rate"), category: "vital-signs",
            unit: (.countPerMinute, "/min", "beats/minute"), profile: "http://hl7.org/fhir/StructureDefinition/heartrate"),
        QuantityType.restingHeartRate.identifier: Mapping(
            loinc: ("40443-4", "Heart rate --resting"), category: "vital-signs",
            unit: (.countPerMinute, "/min", "beats/minute"), profile: nil),
        QuantityType.heartRateVariabilitySDNN.identifier: Mapping(
            loinc: ("80404-7", "R-R interval.standard deviation (Heart rate variability)"), category: "vital-signs",
            unit: (.millisecond, "ms", "ms"), profile: nil),
        QuantityType.stepCount.identifier: Mapping(
            loinc: ("55423-8", "Number of steps in unspecified time Pedometer"), category: "activity",
            unit: (.count, "{steps}", "steps"), profile: nil),
        QuantityType.activeEnergyBurned.identifier: Mapping(
            loinc: ("41981-2", "Calories burned"), category: "activity",
            unit: (.kilocalorie, "kcal", "kcal"), profile: nil),
        QuantityType.bodyMass.identifier: Mapping(
            loinc: ("29463-7", "Body weight"), category: "vital-signs",
            unit: (.kilogram, "kg", "kg"), profile: "http://hl7.org/fhir/StructureDefinition/bodyweight"),
    ]

    static let categoryDisplay = ["vital-signs": "Vital Signs", "activity": "Activity"]

    let subject: String
    let timestamp: Date
    private(set) var skipped: [String: Int] = [:]
    /// The devices referenced so far, in first-seen order, with their entry's UUID.
    private var devices: [(device: Device, uuid: UUID)] = []
    private var deviceIndex: [Device: Int] = [:]
    private var entries = 0

    init(subject: String, timestamp: Date) {
        self.subject = subject
        self.timestamp = timestamp
    }

    func begin() throws -> String {
        let open = try JSONOutput.string(["resourceType": "Bundle", "type": "collection", "timestamp": ISO8601.string(timestamp)])
        return String(open.dropLast()) + ",\"entry\":["   // the entries stream after the fixed fields
    }

    mutating func write(_ s: QuantitySample) throws -> String {
        guard let m = Self.mappings[s.type.identifier] else {
            skipped[s.type.identifier, default: 0] += 1
            return ""
        }
        let uuid = NameBasedUUID.of(s.uuid, seriesIndex: s.seriesIndex)
        var o: [String: Any] = [
            "resourceType": "Observation",
            "identifier": [["system": "urn:ietf:rfc:3986", "value": "urn:uuid:\(uuid.uuidString.lowercased())"]],
            "status": "final",
            "category": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/observation-category",
                                      "code": m.category, "display": Self.categoryDisplay[m.category] ?? m.category]]]],
            "code": ["coding": [["system": "http://loinc.org", "code": m.loinc.code, "display": m.loinc.display]], "text": m.loinc.display],
            "subject": ["reference": subject],
            "valueQuantity": ["value": try s.quantity.doubleValue(for: m.unit.unit), "unit": m.unit.text,
                              "system": "http://unitsofmeasure.org", "code": m.unit.ucum],
        ]
        if let p = m.profile { o["meta"] = ["profile": [p]] }
        if s.startDate == s.endDate {
            o["effectiveDateTime"] = ISO8601.string(s.startDate)
        } else {
            o["effectivePeriod"] = ["start": ISO8601.string(s.startDate), "end": ISO8601.string(s.endDate)]
        }
        if let location = s.metadata.heartRateSensorLocation { o["bodySite"] = ["text": location.name] }
        if let d = s.device, !d.isEmpty { o["device"] = ["reference": "urn:uuid:\(deviceUUID(d).uuidString.lowercased())"] }
        return try entry(uuid, o)
    }

    mutating func end() throws -> String {
        var out = ""
        for (d, uuid) in devices { out += try entry(uuid, Self.resource(d)) }
        return out + "]}\n"
    }

    /// One `entry` (a comma before all but the first).
    private mutating func entry(_ uuid: UUID, _ resource: [String: Any]) throws -> String {
        defer { entries += 1 }
        let text = try JSONOutput.string(["fullUrl": "urn:uuid:\(uuid.uuidString.lowercased())", "resource": resource])
        return (entries == 0 ? "\n" : ",\n") + text
    }

    /// The device's entry UUID, named from its fields, so exports agree.
    private mutating func deviceUUID(_ d: Device) -> UUID {
        if let i = deviceIndex[d] { return devices[i].uuid }
        let key = [d.name, d.manufacturer, d.model, d.hardwareVersion, d.firmwareVersion, d.softwareVersion,
                   d.localIdentifier, d.udiDeviceIdentifier].map { $0 ?? "" }.joined(separator: "\u{1F}")
        let uuid = NameBasedUUID.make("healthgate-device:" + key)
        deviceIndex[d] = devices.count
        devices.append((d, uuid))
        return uuid
    }

    /// A `Device` resource: names, manufacturer, model, versions, identifier, UDI.
    static func resource(_ d: Device) -> [String: Any] {
        var o: [String: Any] = ["resourceType": "Device"]
        if let id = d.localIdentifier { o["identifier"] = [["value": id]] }
        if let udi = d.udiDeviceIdentifier { o["udiCarrier"] = [["deviceIdentifier": udi]] }
        if let name = d.name { o["deviceName"] = [["name": name, "type": "user-friendly-name"]] }
        if let m = d.manufacturer { o["manufacturer"] = m }
        if let m = d.model { o["modelNumber"] = m }
        let versions = [("hardware", d.hardwareVersion), ("firmware", d.firmwareVersion), ("software", d.softwareVersion)]
            .compactMap { kind, v in v.map { ["type": ["text": kind], "value": $0] } }
        if !versions.isEmpty { o["version"] = versions }
        return o
    }
}
