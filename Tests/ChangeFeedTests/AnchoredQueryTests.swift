import Foundation
import HealthModel
import HealthStore
import Testing

@Suite("Anchored queries: additions, deletions and anchors on a real SQLite store")
struct AnchoredQueryTests {
    @Test("no anchor returns every matching sample in save order; the anchor then returns only new ones")
    func adds() throws {
        let db = TempDB()
        let store = try db.open()
        let first = try (0..<3).map { try heartRate(60 + Double($0), at: Double($0)) }
        try store.save(first + [try steps(100, at: 0)])

        let all = try store.changes(types: [.heartRate], since: nil)
        #expect(all.samples.map(\.uuid) == first.map(\.uuid))
        #expect(all.deleted.isEmpty)
        #expect(!all.hasMore)

        let nothing = try store.changes(types: [.heartRate], since: all.anchor)
        #expect(nothing.isEmpty)
        #expect(nothing.anchor == all.anchor)

        let later = try heartRate(90, at: 100)
        try store.save([later, try steps(5, at: 100)])
        let next = try store.changes(types: [.heartRate], since: all.anchor)
        #expect(next.samples.map(\.uuid) == [later.uuid])
        #expect(next.samples.first?.quantity.value == 90)
        #expect(next.anchor.covers(all.anchor) && !all.anchor.covers(next.anchor))

        // Every type when none is given.
        #expect(try store.changes(since: all.anchor).samples.count == 2)
    }

    @Test("a predicate filters additions")
    func predicate() throws {
        let db = TempDB()
        let store = try db.open()
        let early = try heartRate(60, at: 0), late = try heartRate(70, at: 7200)
        try store.save([early, late])
        let c = try store.changes(matching: SampleQuery(type: .heartRate, start: at(3600)), since: nil)
        #expect(c.samples.map(\.uuid) == [late.uuid])
    }

    @Test("deletions come back as UUIDs, filtered by type, then not again")
    func deletes() throws {
        let db = TempDB()
        let store = try db.open()
        let hr = try (0..<4).map { try heartRate(70, at: Double($0)) }
        let st = try steps(10, at: 0)
        try store.save(hr + [st])
        let a = try store.changes(types: [.heartRate], since: nil).anchor

        try store.delete(uuids: [hr[1].uuid, st.uuid])
        try store.delete(matching: SampleQuery(type: .heartRate, uuids: [hr[3].uuid]))
        let c = try store.changes(types: [.heartRate], since: a)
        #expect(c.samples.isEmpty)
        #expect(c.deleted.map(\.uuid) == [hr[1].uuid, hr[3].uuid])
        #expect(c.deleted.allSatisfy { $0.typeIdentifier == "heartRate" })
        #expect(try store.changes(types: [.heartRate], since: c.anchor).isEmpty)
        #expect(try store.changes(types: [.stepCount], since: a).deleted.map(\.uuid) == [st.uuid])
    }

    @Test("a sync-identifier replacement is a deletion of the old sample plus an addition of the new")
    func syncReplacement() throws {
        let db = TempDB()
        let store = try db.open()
        let v1 = try heartRate(70, at: 0, metadata: Metadata(syncIdentifier: "strap-1", syncVersion: 1))
        try store.save([v1])
        let a = try store.changes(types: [.heartRate], since: nil).anchor

        let v2 = try heartRate(71, at: 0, metadata: Metadata(syncIdentifier: "strap-1", syncVersion: 2))
        #expect(try store.save([v2]).replaced == 1)
        let c = try store.changes(types: [.heartRate], since: a)
        #expect(c.deleted.map(\.uuid) == [v1.uuid])
        #expect(c.samples.map(\.uuid) == [v2.uuid])

        // An older version is ignored: no change at all.
        let old = try heartRate(50, at: 0, metadata: Metadata(syncIdentifier: "strap-1", syncVersion: 1))
        #expect(try store.save([old]).ignored == 1)
        #expect(try store.changes(types: [.heartRate], since: c.anchor).isEmpty)
    }

    @Test("pagination with a limit: pages of at most N, anchors monotonic, the replica ends equal to the store",
          arguments: [1, 2, 3, 7, 1000])
    func pagination(limit: Int) throws {
        let db = TempDB()
        let store = try db.open()
        var replica = Replica()
        func sync() throws {
            var pages = 0
            while true {
                let c = try store.changes(types: [.heartRate], since: replica.anchor, limit: limit)
                #expect(c.samples.count + c.deleted.count <= limit)
                if let old = replica.anchor { #expect(c.anchor.covers(old)) }
                replica.apply(c)
                pages += 1
                if !c.hasMore { break }
                #expect(pages < 1000)
            }
            let truth = try store.samples(SampleQuery(type: .heartRate))
            #expect(Set(replica.samples.keys) == Set(truth.map(\.uuid)))
        }
        let batch = try (0..<10).map { try heartRate(60 + Double($0), at: Double($0)) }
        try store.save(batch)
        try sync()
        // Interleave: delete, add, delete one of the new ones, re-add a deleted UUID, replace by sync id.
        try store.delete(uuids: [batch[0].uuid, batch[4].uuid, batch[9].uuid])
        let more = try (0..<5).map { try heartRate(80 + Double($0), at: 100 + Double($0)) }
        try store.save(more)
        try store.delete(uuids: [more[2].uuid])
        try store.save([try heartRate(61, at: 0, uuid: batch[0].uuid)])
        try store.save([try heartRate(90, at: 500, metadata: Metadata(syncIdentifier: "s", syncVersion: 1))])
        try store.save([try heartRate(91, at: 500, metadata: Metadata(syncIdentifier: "s", syncVersion: 2))])
        try sync()
        // Added then deleted between two calls: the client may see the deletion of a UUID it never had.
        let ghost = try heartRate(99, at: 900)
        try store.save([ghost])
        try store.delete(uuids: [ghost.uuid])
        try sync()
        #expect(replica.samples[ghost.uuid] == nil)
        #expect(replica.samples[batch[0].uuid]?.quantity.value == 61)
    }

    @Test("an anchor older than the pruned tombstones is refused with a resync sentence; no anchor still works")
    func expiredAnchor() throws {
        let db = TempDB()
        let store = try db.open()
        let s = try (0..<3).map { try heartRate(70, at: Double($0)) }
        try store.save(s)
        let old = try store.changes(since: nil).anchor
        try store.delete(uuids: [s[0].uuid])
        let afterDelete = try store.currentAnchor()
        #expect(try store.pruneTombstones(olderThan: Date().addingTimeInterval(60)) == 1)

        do {
            _ = try store.changes(since: old)
            Issue.record("an expired anchor was answered")
        } catch let e as ChangeFeedError {
            #expect(e.requiresResync)
            guard case .anchorExpired = e else { Issue.record("wrong error \(e)"); return }
            #expect(e.description.contains("resynchronise from scratch"))
        }
        // An anchor taken after the pruned deletion is still good, and so is starting over.
        #expect(try store.changes(since: afterDelete).isEmpty)
        let fresh = try store.changes(since: nil)
        #expect(Set(fresh.samples.map(\.uuid)) == [s[1].uuid, s[2].uuid])
        #expect(fresh.deleted.isEmpty)

        let status = try store.changeFeedStatus()
        #expect(status.tombstoneCount == 0)
        #expect(status.prunedThrough == 1)
        #expect(status.retention == HealthStore.defaultTombstoneRetention)
    }

    @Test("retention is persisted and pruneExpiredTombstones keeps recent tombstones")
    func retention() throws {
        let db = TempDB()
        let store = try db.open()
        let s = try heartRate(70, at: 0)
        try store.save([s])
        try store.delete(uuids: [s.uuid])
        try store.setTombstoneRetention(3600)
        #expect(try store.pruneExpiredTombstones() == 0)
        #expect(try db.open().changeFeedStatus().retention == 3600)
        #expect(try store.pruneExpiredTombstones(now: Date().addingTimeInterval(7200)) == 1)
        #expect(throws: StoreError.self) { try store.setTombstoneRetention(0) }
    }

    @Test("a hold in state (the uplink's anchor) keeps every tombstone past it from pruning; an unreadable hold keeps all")
    func tombstoneHold() throws {
        let db = TempDB()
        let store = try db.open()
        let s = try (0..<4).map { try heartRate(70, at: Double($0)) }
        try store.save(s)
        try store.delete(uuids: [s[0].uuid])
        let shipped = try store.currentAnchor()   // a consumer has seen the first deletion
        try store.delete(uuids: [s[1].uuid, s[2].uuid])
        try store.setState(HealthStore.tombstoneHoldPrefix + "uplink:test", string: shipped.description)
        let future = Date().addingTimeInterval(3600)
        #expect(try store.pruneTombstones(olderThan: future) == 1)
        #expect(try store.changeFeedStatus().tombstoneCount == 2)
        #expect(try store.changes(since: shipped).deleted.count == 2)   // the holder's anchor still answers
        // A second, older hold wins; one that is not an anchor of this store holds everything.
        try store.setState(HealthStore.tombstoneHoldPrefix + "other", string: "garbage")
        try store.setState(HealthStore.tombstoneHoldPrefix + "uplink:test", string: try store.currentAnchor().description)
        #expect(try store.pruneTombstones(olderThan: future) == 0)
        try store.setState(HealthStore.tombstoneHoldPrefix + "other", nil)
        #expect(try store.pruneTombstones(olderThan: future) == 2)
        #expect(try store.changeFeedStatus().tombstoneCount == 0)
    }

    @Test("anchors from another store, from the future, or not anchors at all are refused")
    func foreignAnchors() throws {
        let a = TempDB(), b = TempDB()
        let sa = try a.open(), sb = try b.open()
        try sa.save([try heartRate(70, at: 0)])
        let anchorA = try sa.currentAnchor()
        #expect(throws: ChangeFeedError.self) { try sb.changes(since: anchorA) }

        let future = try ChangeAnchor(string: anchorA.description.replacingOccurrences(of: ":1:0", with: ":99:0"))
        do {
            _ = try sa.changes(since: future)
            Issue.record("a future anchor was answered")
        } catch let e as ChangeFeedError {
            #expect(e.requiresResync)
        }
        for bad in ["", "v1", "v2:00:1:1", "v1:zz:1:1", "v1:00:-1:0", "v1:00:1", "v1:\u{FF10}\u{FF10}:1:1",
                    "v1:00:9223372036854775808:0"] {
            #expect(throws: ChangeFeedError.self) { try ChangeAnchor(string: bad) }
        }
        #expect(throws: ChangeFeedError.self) { try sa.changes(since: nil, limit: 0) }
    }

    @Test("anchors survive closing and reopening the store (a restart between calls)")
    func restart() throws {
        let db = TempDB()
        var saved = ""
        let kept = try heartRate(70, at: 0), gone = try heartRate(71, at: 1)
        do {
            let store = try db.open()
            try store.save([kept, gone])
            saved = try store.changes(since: nil).anchor.description
        }
        let added = try heartRate(72, at: 2)
        do {
            let store = try db.open()
            try store.save([added])
            try store.delete(uuids: [gone.uuid])
        }
        let store = try db.open()
        let c = try store.changes(since: try ChangeAnchor(string: saved))
        #expect(c.samples.map(\.uuid) == [added.uuid])
        #expect(c.deleted.map(\.uuid) == [gone.uuid])
    }
}
