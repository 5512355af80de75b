/// What can go wrong setting up or running the ingest pipeline.
package enum IngestError: Error, Equatable, CustomStringConvertible {
    /// More than 65,535 distinct types, sources or devices were registered.
    case tooManySlots(String)
    /// A setting is out of range (which one, and why).
    case invalidSetting(String)
    /// The pipeline has stopped; no new producers can join.
    case stopped

    package var description: String {
        switch self {
        case .tooManySlots(let kind):
            return "more than 65,535 distinct \(kind) were registered with the ingest pipeline; restart the gateway to reset its slot table"
        case .invalidSetting(let what):
            return "invalid ingest setting: \(what)"
        case .stopped:
            return "the ingest pipeline has stopped and accepts no new sources"
        }
    }
}
