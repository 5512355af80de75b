/// One pedometer's steps since local midnight, as the `steps_today` topic publishes them: the
/// store's count at the day's first committed step sample, then each committed sample added.
///
/// The store is asked for the samples that end **before** the first sample seen, and that sample
/// is added itself: samples committed after it with the same end time (lines a reader took in
/// one read share their receipt time) are then added as they arrive, never lost or counted
/// twice, however late the store is read. A later sample that ends before the count's end (a
/// clock stepped back) was in the store's count or is dropped: it is not added again; nor is a
/// sample of a day before the count's (late, or the clock stepped back over midnight).
/// At local midnight the count starts again from zero (``rolledOver(to:midnight:)``).
struct StepsToday: Sendable, Equatable {
    /// The local day counted (days since 1970 in the local time zone).
    var day: Int
    /// Steps counted so far that day.
    var total: Double
    /// The latest end time counted (seconds since 1970).
    var through: Double

    /// The count after a committed step sample of `value` steps ending at `end` on local `day`.
    /// `storeBefore(end)` gives the store's steps of that day ending before `end`; it is called
    /// for a day's first sample only, and when it returns nil (the store could not be read) the
    /// result is nil: the next sample asks again, and the store then holds this one.
    static func after(_ current: StepsToday?, value: Double, end: Double, day: Int,
                      storeBefore: (Double) -> Double?) -> StepsToday? {
        if let current, day < current.day { return current }
        guard var count = current, count.day == day else {
            return storeBefore(end).map { StepsToday(day: day, total: $0 + value, through: end) }
        }
        if end >= count.through {
            count.total += value
            count.through = end
        }
        return count
    }

    /// The count of local `day`, whose midnight is `midnight` (seconds since 1970), when this
    /// one counts an earlier day: no steps yet, through midnight, so the day's samples are each
    /// added as they commit. Nil when this count is already of `day` (or a later one).
    ///
    /// No store read: every sample the gateway commits after midnight passes through ``after``,
    /// and one committed before this is called already started the day from the store.
    func rolledOver(to day: Int, midnight: Double) -> StepsToday? {
        day > self.day ? StepsToday(day: day, total: 0, through: midnight) : nil
    }
}
