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
        _ = try slices(of: query, seconds: seconds, body)
    }

    /// ``forEachSlice(of:seconds:_:)``, returning how many queries it ran (the tests' measure
    /// that the work follows the samples, not the span between them).
    ///
    /// An empty slice is followed by a look-up of the next start date, and the next slice starts
    /// there: a stray sample decades before the rest (a typo, a device with its clock unset)
    /// costs one query, where one query an empty hour made an export of two such samples take
    /// half an hour. A start date so large that adding `seconds` no longer changes it ends the
    /// walk with one query for the rest.
    func slices(of query: SampleQuery, seconds: TimeInterval, _ body: ([QuantitySample]) throws -> Void) throws -> Int {
        guard query.sortBy == .startDate, query.ascending, query.limit == nil, query.uuids == nil, seconds > 0 else {
            try body(samples(query))
            return 1
        }
        var bounds = query
        bounds.limit = 1
        guard let earliest = try samples(bounds).first else { return 1 }
        bounds.ascending = false
        guard let latest = try samples(bounds).first?.startDate else { return 2 }
        var queries = 2
        var start = query.start ?? earliest.startDate
        if let end = query.end, start >= end { return queries }
        var first = true
        while true {
            let next = start.addingTimeInterval(seconds)
            // Seconds below the date's resolution there: the rest in one slice.
            let last = next <= start
            var q = query
            q.start = start
            q.end = last ? query.end : query.end.map { min($0, next) } ?? next
            q.strictStartDate = first ? query.strictStartDate : true
            q.strictEndDate = false   // relative to the query's end, not the slice's: checked below
            var slice = try samples(q)
            queries += 1
            if query.strictEndDate, let end = query.end { slice.removeAll { $0.endDate > end } }
            if !slice.isEmpty { try body(slice) }
            if let end = query.end, next >= end { return queries }
            if last || next > latest { return queries }
            start = next
            first = false
            if slice.isEmpty {
                // Skip the empty span: the next slice starts at the next start date.
                var ahead = query
                ahead.start = next
                ahead.strictStartDate = true
                ahead.limit = 1
                guard let found = try samples(ahead).first?.startDate else { return queries + 1 }
                queries += 1
                if found > next { start = found }
            }
        }
    }
}
