import AccessTokens
import Foundation
import HealthModel
import HealthStore
import Hummingbird
import WorkoutSummary

/// `GET /v1/workouts` and `GET /v1/workouts/{uuid}` (docs/http-api.md, docs/workouts.md): the
/// shapes `healthgate workouts --json` and `workout show --json` print.
///
/// Authorization follows the samples' rule: a token without `workout` in its read scope sees an
/// empty list and 404 (never a 403 that would reveal workouts exist), and a total of a type it
/// may not read is null — heart rate, zones and the per-minute series need `heartRate`.
struct WorkoutRoutes: Sendable {
    let store: StoreQueue

    func list(_ request: Request, _ context: APIContext) async throws -> Response {
        let q = try QueryParameters(request, known: ["from", "to"])
        let (from, to) = (try q.date("from", zone: nil), try q.date("to", zone: nil))
        try QueryParameters.checkRange(from: from, to: to)
        let scopes = context.scopes
        let list = try await store.run { db -> Unsafe<[[String: Any]]> in
            guard scopes.mayReadWorkouts else { return Unsafe([]) }
            let profile = try db.characteristics()
            return Unsafe(try db.workouts(from: from, to: to).map {
                Self.visible(try WorkoutSummary($0, store: db, characteristics: profile), to: scopes).json()
            })
        }.value
        return try JSONResponse.make(list)
    }

    func one(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try QueryParameters(request, known: [])
        let text = context.parameters.get("uuid") ?? ""
        guard let uuid = UUID(uuidString: text) else {
            throw APIError(.badRequest, "'\(text)' in the path is not a workout UUID: use the uuid that GET /v1/workouts shows.")
        }
        let scopes = context.scopes
        let object = try await store.run { db -> Unsafe<[String: Any]> in
            guard scopes.mayReadWorkouts, let w = try db.workout(uuid: uuid) else {
                throw APIError(.notFound, "no workout has UUID \(uuid.uuidString.lowercased()): it was never stored or is deleted.")
            }
            let s = try WorkoutSummary(w, store: db, characteristics: try db.characteristics(), perMinute: scopes.mayRead(.heartRate))
            return Unsafe(Self.visible(s, to: scopes).json())
        }.value
        return try JSONResponse.make(object)
    }

    /// `GET /v1/workouts/changes?anchor=&limit=`: the workouts' change feed (`workout changes`);
    /// a token that may not read workouts gets an empty page at the current anchor.
    func changes(_ request: Request, _ context: APIContext) async throws -> Response {
        let q = try QueryParameters(request, known: ["anchor", "limit"])
        let anchor = try q.string("anchor"), limit = try q.limit()
        let scopes = context.scopes
        let object = try await store.run { db -> Unsafe<[String: Any]> in
            do {
                guard scopes.mayReadWorkouts else {
                    // As an empty store answers, at this store's current anchor.
                    let now = "w1:\(try db.currentAnchor().storeID):\(try db.workoutPosition())"
                    return Unsafe(WorkoutRecordJSON.page(WorkoutChanges(workouts: [], deleted: [], position: 0, hasMore: false), anchor: now))
                }
                let (page, next) = try db.workoutChanges(since: anchor, limit: limit)
                return Unsafe(WorkoutRecordJSON.page(page, anchor: next))
            } catch let e as ChangeFeedError {
                throw APIError(e.requiresResync ? .conflict : .badRequest, "\(e)")
            }
        }.value
        return try JSONResponse.make(object)
    }

    /// `s` without the totals of types `scopes` may not read.
    static func visible(_ s: WorkoutSummary, to scopes: TokenScopes) -> WorkoutSummary {
        var s = s
        if !scopes.mayRead(.activeEnergyBurned) { s.activeEnergy = nil }
        if !scopes.mayRead(.stepCount) { s.steps = nil }
        if !scopes.mayRead(.distanceWalkingRunning) { s.distance = nil }
        if !scopes.mayRead(.heartRate) {
            s.heartRate = nil
            s.zones = nil
            s.zonesNote = "this token may not read heartRate"
            s.minutes = []
        }
        return s
    }
}
