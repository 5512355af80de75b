import ArgumentParser
import Foundation
import HealthModel
import HealthStore

/// `healthgate changes`: HealthKit's anchored object query on the command line.
struct ChangesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract: "List the samples added and deleted since an anchor, and the anchor to continue from.",
        discussion: """
            The change feed a backup or uplink is built on. Without --anchor you get every sample \
            (and the retained deletion records); keep the printed anchor and pass it next time to get \
            only what changed since. Apply deletions first, then additions. A sync-identifier \
            replacement shows as the deletion of the old sample plus the new one.

            With --limit N at most N items come back; "hasMore": true means call again with the new \
            anchor. With --json: {"samples": [objects as 'samples --json' prints them], "deleted": \
            [uuid, …], "anchor": "…", "hasMore": false}.

            Deletion records are kept for a retention period ('healthgate tombstones'). An anchor \
            older than the oldest kept record, or from another store file, exits 65 with a sentence \
            telling you to resynchronise from scratch (drop your copy and ask again without --anchor). \
            A malformed anchor exits 64. See docs/change-feed.md.

            Example:
              healthgate changes --type heartRate --json > first.json
              healthgate changes --type heartRate --anchor "$(jq -r .anchor first.json)" --json
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: "Only this quantity type (repeatable; default: every type).")
    var type: [String] = []

    @Option(help: ArgumentHelp("Continue after this anchor (from a previous answer).", valueName: "anchor"))
    var anchor: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("At most this many changes (deletions + additions; 1 or more).", valueName: "n"))
    var limit: Int?

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        let types = try type.map(InputValues.type)
        let since = try anchor.map { try ChangeAnchor(string: $0) }
        let change = try store.openForReading().changes(types: types, since: since, limit: limit)
        if json {
            try JSONOutput.emit(try change.jsonObject())
            return
        }
        let lines = ChangeOutput.lines(change)
        if lines.isEmpty { print("no changes") }
        lines.forEach { print($0) }
        print("anchor: \(change.anchor)")
        if change.hasMore { print("more changes remain: run again with --anchor \(change.anchor)") }
    }
}

/// `healthgate tombstones`: deletion-record retention for the change feed.
struct TombstonesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tombstones",
        abstract: "Show or set how long deletion records are kept for the change feed, and prune them.",
        discussion: """
            Every deleted or replaced sample leaves a deletion record (tombstone) so 'changes' and \
            'watch' can report it. Records older than the retention (default 30d) are removed by \
            --prune (and by the daemon); an anchor from before a removed record must resynchronise \
            from scratch. --older-than prunes with a one-off cutoff instead of the retention.

            Examples:
              healthgate tombstones
              healthgate tombstones --retention 90d
              healthgate tombstones --prune --json
            """)

    @OptionGroup var store: StoreLocation

    @Option(help: ArgumentHelp("Set the retention (30d, 12h, 2w…); stored in the database.", valueName: "duration"))
    var retention: String?

    @Flag(help: "Remove records older than the retention.")
    var prune = false

    @Option(help: ArgumentHelp("Remove records older than this instead (implies --prune).", valueName: "duration"))
    var olderThan: String?

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        let db = try (retention == nil && !prune && olderThan == nil ? store.openForReading() : store.open())
        if let retention { try db.setTombstoneRetention(try InputValues.seconds(retention, option: "--retention")) }
        var removed: Int?
        if let olderThan {
            let s = try InputValues.seconds(olderThan, option: "--older-than")
            removed = try db.pruneTombstones(olderThan: Date().addingTimeInterval(-s))
        } else if prune {
            removed = try db.pruneExpiredTombstones()
        }
        let st = try db.changeFeedStatus()
        if json {
            var o = st.jsonObject
            if let removed { o["removed"] = removed }
            try JSONOutput.emit(o)
            return
        }
        if let removed { print("removed \(removed) deletion record\(removed == 1 ? "" : "s")") }
        print("kept: \(st.tombstoneCount), oldest: \(st.oldestTombstone.map(ISO8601.string) ?? "-"), "
              + "retention: \(DurationText.text(st.retention)), pruned through #\(st.prunedThrough)")
        print("current anchor: \(st.currentAnchor)")
    }
}
