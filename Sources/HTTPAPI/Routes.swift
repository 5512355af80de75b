import AccessTokens
import Foundation
import HealthModel
import HealthStore
import Hummingbird
import Prometheus
import NIOCore

/// The `/v1` endpoints (docs/http-api.md). Every answer is built by the shapes the CLI's
/// `--json` prints (the store's `jsonObject` shapes: StoreJSON.swift, StatisticsJSON.swift), from
/// the store's query API.
///
/// Reading follows HealthKit: a type the token may not read is answered by an empty store
/// (``StoreQueue/empty``), so the answer is exactly the one an empty store gives, never a 403
/// that would reveal data exists. Writing a type the token may not write is 403 with the reason.
struct Routes: Sendable {
    let store: StoreQueue
    let registry: QuantityTypeRegistry
    let maxBodyBytes: Int
    let metrics: ServerMetrics
    /// `run`'s device states (nil under `serve`).
    let status: (any DaemonStatus)?

    // MARK: Types, sources, devices

    func types(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try QueryParameters(request, known: [])
        return try JSONResponse.make(registry.all.map(\.jsonObject))
    }

    func sources(_ request: Request, _ context: APIContext) async throws -> Response {
        let q = try QueryParameters(request, known: ["type"], registry: registry)
        let type = try q.type()
        let scopes = context.scopes
        let readable = scopes.readable(in: registry)
        let list = try await store.run { real, empty -> Unsafe<[[String: Any]]> in
            if let type {
                let db = scopes.mayRead(type) ? real : empty
                let devices = try db.devicesBySource(type: type)
                return Unsafe(try db.sources(type: type).map { $0.jsonObject(devices: devices[$0.source.identifier] ?? []) })
            }
            if scopes.read == nil {
                let devices = try real.devicesBySource()
                return Unsafe(try real.sources().map { $0.jsonObject(devices: devices[$0.source.identifier] ?? []) })
            }
            return try Self.mergedSources(real, types: readable)
        }.value
        return try JSONResponse.make(list)
    }

    /// Sources as `sources` lists them, counting only samples of `types`: each source with
    /// samples of them, its counts and dates over those types, its devices likewise.
    static func mergedSources(_ db: HealthStore, types: [QuantityType]) throws -> Unsafe<[[String: Any]]> {
        var infos: [String: SourceInfo] = [:]
        var devices: [String: [Device: SourceDevice]] = [:]
        for t in types {
            for s in try db.sources(type: t) {
                if var known = infos[s.source.identifier] {
                    known.sampleCount += s.sampleCount
                    known.firstSample = [known.firstSample, s.firstSample].compactMap { $0 }.min()
                    known.lastSample = [known.lastSample, s.lastSample].compactMap { $0 }.max()
                    infos[s.source.identifier] = known
                } else {
                    infos[s.source.identifier] = s
                }
            }
            for (source, list) in try db.devicesBySource(type: t) {
                for d in list {
                    if var known = devices[source]?[d.device] {
                        known.sampleCount += d.sampleCount
                        devices[source]?[d.device] = known
                    } else {
                        devices[source, default: [:]][d.device] = d
                    }
                }
            }
        }
        return Unsafe(infos.values.sorted { $0.rank < $1.rank }.map { s in
            let list = (devices[s.source.identifier] ?? [:]).values.sorted {
                ($0.sampleCount, $1.device.name ?? "") > ($1.sampleCount, $0.device.name ?? "")
            }
            return s.jsonObject(devices: list)
        })
    }

    func devices(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try QueryParameters(request, known: [])
        var list = try await store.run { db in Unsafe(try db.devices().filter { $0.kind != .other }.map(\.jsonObject)) }.value
        if let status {
            // Served by `run`: each device it manages gets its live state as "connection".
            let states = Dictionary(status.devices().map { ($0.localIdentifier, $0) }, uniquingKeysWith: { a, _ in a })
            let scopes = context.scopes
            list = list.map { d in
                var d = d
                if let id = d["localIdentifier"] as? String, let state = states[id] {
                    d["connection"] = state.jsonObject(mayRead: scopes.mayRead)
                }
                return d
            }
        }
        return try JSONResponse.make(list)
    }

    // MARK: Samples

    func samples(_ request: Request, _ context: APIContext) async throws -> Response {
        let q = try QueryParameters(request, known: ["type", "from", "to", "device", "source", "limit", "sort", "order", "unit"], registry: registry)
        let type = try q.type()
        var query = SampleQuery(type: type, start: try q.date("from", zone: nil), end: try q.date("to", zone: nil))
        try QueryParameters.checkRange(from: query.start, to: query.end)
        query.device = try q.string("device")
        query.source = try q.string("source")
        query.limit = try q.limit()
        switch try q.string("sort")?.lowercased() {
        case nil, "start": query.sortBy = .startDate
        case "end": query.sortBy = .endDate
        case let other?: throw APIError.parameter("sort", "'\(other)' is not a sort key: use start or end.")
        }
        switch try q.string("order")?.lowercased() {
        case nil, "asc": query.ascending = true
        case "desc": query.ascending = false
        case let other?: throw APIError.parameter("order", "'\(other)' is not an order: use asc or desc.")
        }
        var unit: HealthUnit?
        if let text = try q.string("unit") {
            guard let type else { throw APIError.parameter("unit", "needs 'type' (units differ between types).") }
            unit = try Self.unit(text, for: type)
        }
        let scopes = context.scopes
        let readable = scopes.readable(in: registry)
        let (fixedQuery, outUnit) = (query, unit)
        let list = try await store.run { real, empty -> Unsafe<[[String: Any]]> in
            let found: [QuantitySample]
            let query = fixedQuery
            if let type {
                found = try (scopes.mayRead(type) ? real : empty).samples(query)
            } else if scopes.read == nil {
                found = try real.samples(query)
            } else {
                // Only readable types: each type's own answer (sorted and limited), merged in the
                // query's order and limited again.
                var all: [QuantitySample] = []
                for t in readable {
                    var one = query
                    one.type = t
                    all += try real.samples(one)
                }
                let key: (QuantitySample) -> Date = query.sortBy == .endDate ? { $0.endDate } : { $0.startDate }
                all.sort { query.ascending ? key($0) < key($1) : key($0) > key($1) }
                found = query.limit.map { Array(all.prefix($0)) } ?? all
            }
            return Unsafe(try found.map { try SampleJSON.object($0, unit: outUnit) })
        }.value
        return try JSONResponse.make(list)
    }

    func saveSamples(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try QueryParameters(request, known: [])
        let body = try await Self.body(of: request, limit: maxBodyBytes)
        let samples = try Self.parseSamples(body, registry: registry)
        let scopes = context.scopes
        if let denied = samples.first(where: { !scopes.mayWrite($0.type) }) {
            throw APIError(.forbidden, "this token may not write \(denied.type.identifier) samples: ask for a token with --write \(denied.type.identifier); nothing was saved.")
        }
        let summary = try await store.run { db in try db.write { w in try w.insertImported(samples) } }
        metrics.samplesSaved.increment(by: Int64(summary.inserted + summary.replaced))
        return try JSONResponse.make([
            "inserted": summary.inserted, "replaced": summary.replaced, "ignored": summary.ignored,
            "duplicates": summary.duplicates, "uuids": samples.map { $0.uuid.uuidString.lowercased() },
        ] as [String: Any])
    }

    /// The body: one sample object or an array of them, in the import shape (`samples --json`).
    /// All or nothing: a bad element is a 400 naming it, and nothing is saved.
    static func parseSamples(_ data: Data, registry: QuantityTypeRegistry) throws -> [QuantitySample] {
        let top: Any
        do { top = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) } catch {
            throw APIError(.badRequest, "the request body is not JSON: send one sample object or an array of them, as 'healthgate samples --json' prints.")
        }
        let elements: [Any]
        if let a = top as? [Any] { elements = a } else if top is [String: Any] { elements = [top] } else {
            throw APIError(.badRequest, "the request body is neither a sample object nor an array of them: send what 'healthgate samples --json' prints.")
        }
        if elements.isEmpty { throw APIError(.badRequest, "the request body is an empty array: send at least one sample.") }
        var out: [QuantitySample] = []
        out.reserveCapacity(elements.count)
        for (i, e) in elements.enumerated() {
            // Each element through the import parser, as its own line would be (`import --jsonl`):
            // the same checks, and without "uuid" the same content-derived UUID, so a resend is a duplicate.
            guard e is [String: Any] else { throw APIError(.badRequest, "element \(i + 1) of the body is not a JSON object: each sample is an object; nothing was saved.") }
            do { out.append(try SampleJSON.sample(fromLine: JSONResponse.string(e), registry: registry)) } catch {
                throw APIError(.badRequest, "element \(i + 1) of the body: \(error); nothing was saved.")
            }
        }
        return out
    }

    func deleteSample(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try QueryParameters(request, known: [])
        let text = context.parameters.get("uuid") ?? ""
        guard let uuid = UUID(uuidString: text) else {
            throw APIError(.badRequest, "'\(text)' in the path is not a sample UUID: use the uuid that GET /v1/samples shows.")
        }
        let scopes = context.scopes
        let n = try await store.run { db -> Int in
            guard let type = try db.samples(SampleQuery(uuids: [uuid], limit: 1)).first?.type,
                  scopes.mayRead(type) || scopes.mayWrite(type) else {
                // Absent, or of a type this token may neither read nor write: one answer for both.
                throw APIError(.notFound, "no sample has UUID \(uuid.uuidString.lowercased()): it was never stored or is deleted already.")
            }
            guard scopes.mayWrite(type) else {
                throw APIError(.forbidden, "this token may not delete \(type.identifier) samples: deleting needs write permission for the type (--write \(type.identifier)).")
            }
            return try db.delete(uuids: [uuid])
        }
        metrics.samplesDeleted.increment(by: Int64(n))
        return try JSONResponse.make(["deleted": n])
    }

    // MARK: Statistics

    func statistics(_ request: Request, _ context: APIContext) async throws -> Response {
        let q = try QueryParameters(request, known: ["type", "options", "from", "to", "interval", "anchor", "tz", "separateBySource",
                                                     "device", "source", "unit"], registry: registry)
        guard let type = try q.type() else { throw APIError.parameter("type", "is required: name the quantity type (GET /v1/types).") }
        let request = StatisticsRequest(type: type, options: q.list("options").joined(separator: ","), from: try q.string("from"),
                                        to: try q.string("to"), interval: try q.string("interval"), anchor: try q.string("anchor"),
                                        timeZone: try q.string("tz"), unit: try q.string("unit"), separateBySource: try q.bool("separateBySource"),
                                        device: try q.string("device"), source: try q.string("source"))
        let plan: StatisticsRequest.Plan
        do { plan = try request.plan(names: .queryParameters, defaultZone: TimeZone(identifier: "UTC")!) } catch {
            throw APIError(.badRequest, error.message)
        }
        let (query, interval, outUnit) = (plan.query, plan.interval, plan.unit)
        let readable = context.scopes.mayRead(type)
        let chosen = query.options
        let value = try await store.run { real, empty -> Unsafe<Any> in
            let db = readable ? real : empty
            if let interval {
                let buckets = try db.statisticsCollection(query, interval: interval, anchor: plan.anchor, timeZone: plan.timeZone)
                    .map { try $0.converted(to: outUnit) }
                return Unsafe(buckets.map { $0.bucketJSONObject(options: chosen, unit: outUnit) })
            }
            return Unsafe(try db.statistics(query).converted(to: outUnit).jsonObject(options: chosen, unit: outUnit))
        }.value
        return try JSONResponse.make(value)
    }

    // MARK: Changes

    func changes(_ request: Request, _ context: APIContext) async throws -> Response {
        let q = try QueryParameters(request, known: ["type", "anchor", "limit"], registry: registry)
        let requested = try q.list("type").map { try q.type(named: $0, parameter: "type") }
        let since: ChangeAnchor?
        do { since = try (try q.string("anchor")).map { try ChangeAnchor(string: $0) } } catch let e as ChangeFeedError {
            throw APIError.parameter("anchor", "\(e)")
        }
        let limit = try q.limit()
        let scopes = context.scopes
        let readable = scopes.readable(in: registry)
        let object = try await store.run { db -> Unsafe<[String: Any]> in
            if scopes.read == nil {
                return Unsafe(try db.changes(types: requested, since: since, limit: limit).jsonObject())
            }
            let types = requested.isEmpty ? readable : requested.filter(scopes.mayRead)
            if types.isEmpty {
                // Nothing it may read: no samples, no deletions, the store's current position.
                if let since { try db.validate(since) }
                return Unsafe(["samples": [Any](), "deleted": [Any](), "anchor": try db.currentAnchor().description, "hasMore": false])
            }
            return Unsafe(try db.changes(types: types, since: since, limit: limit).jsonObject())
        }.value
        return try JSONResponse.make(object)
    }

    // MARK: Helpers

    /// A `unit` parameter, read as the CLI's `--unit` is (HealthModel's `InputValues`).
    static func unit(_ text: String, for type: QuantityType) throws -> HealthUnit {
        do { return try InputValues.unit(text, for: type, option: "query parameter 'unit'") } catch {
            throw APIError(.badRequest, error.message)
        }
    }
}

/// A JSON value (dictionaries and arrays of `Any`) handed from the store's queue to the
/// request's task. Built there and only read afterwards.
struct Unsafe<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

extension Routes {
    /// A request's body, at most `limit` bytes: 413 from a larger `Content-Length` before
    /// reading, or while reading a chunked body.
    static func body(of request: Request, limit: Int) async throws -> Data {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError.tooLarge(limit)
        }
        var request = request
        do { return Data(try await request.collectBody(upTo: limit).readableBytesView) } catch is NIOTooManyBytesError {
            throw APIError.tooLarge(limit)
        }
    }
}

extension APIError {
    static func tooLarge(_ limit: Int) -> APIError {
        APIError(.contentTooLarge, "the request body is larger than \(limit) bytes: split the samples into several requests (or start serve with a larger --max-body-bytes).")
    }
}
