import Foundation
import HealthModel

extension HealthStore {
    /// Calls `body` with the samples `query` selects, in its order (start date, oldest first), a
    /// slice of `seconds` of start dates at a time, so that reading a year (an export) holds one
    /// slice in memory, not the year. Every sample comes exactly once: the first slice answers the
    /// query's own start (a sample that began before it and overlaps it included), each later one
    /// the samples that start inside it. A query sorted otherwise, descending, limited or by UUIDs
    /// is answered in one call.
    public func forEachSlice(of query: SampleQuery, seconds: TimeInterval = 3600,
                             _ body: ([QuantitySample]) throws -> Void) throws {
        guard query.sortBy == .startDate, query.ascending, query.limit == nil, query.uuids == nil, seconds > 0 else {
            return try body(samples(query))
        }
        var bounds = query
        bounds.limit = 1
        guard let earliest = try samples(bounds).first else { return }
        bounds.ascending = false
        guard let latest = try samples(bounds).first?.startDate else { return }
        var start = query.start ?? earliest.startDate
        if let end = query.end, start >= end { return }
        var first = true
        while true {
            let next = start.addingTimeInterval(seconds)
            var q = query
            q.start = start
            q.end = query.end.map { min($0, next) } ?? next
            q.strictStartDate = first ? query.strictStartDate : true
            q.strictEndDate = false   // relative to the query's end, not the slice's: checked below
            var slice = try samples(q)
            if query.strictEndDate, let end = query.end { slice.removeAll { $0.endDate > end } }
            if !slice.isEmpty { try body(slice) }
            if let end = query.end, next >= end { return }
            if next > latest { return }
            start = next
            first = false
        }
    }
}
