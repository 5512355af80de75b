/// One window of gap-free beats as a strap reports them, and its heart-rate variability with
/// the artefacts corrected: the live SDNN and RMSSD of `run`, `live` and every strap command
/// (docs/hrv.md, "Live, while a strap is connected").
///
/// RR intervals are appended as notifications bring them; ``finish(maxArtefacts:)`` corrects the
/// window's beats (``ArtefactCorrection``, the same method and numbers as `healthgate hrv`) and
/// takes the Task Force measures (``TimeDomain``) over them. Built for a strap's reader thread:
/// once its buffers have grown to the longest window seen (``init(capacity:)`` sizes them for a
/// minute at 240 bpm), appending and finishing allocate nothing.
package struct BeatWindow: Sendable {
    /// What a finished window gives.
    package enum Outcome: Sendable, Equatable {
        /// The measures over the corrected beats; `intervals` before correction, `corrected`
        /// beats corrected (all classes).
        case measured(TimeDomain, intervals: Int, corrected: Int)
        /// More than the allowed share of the intervals were artefacts: no value.
        case tooManyArtefacts(intervals: Int, corrected: Int)
        /// Fewer than two intervals (or no successive difference) after correction.
        case tooFewBeats(intervals: Int)
    }

    private var workspace: ArtefactCorrection.Workspace

    /// An empty window with room for `capacity` beats before any buffer grows.
    package init(capacity: Int = 256) {
        workspace = ArtefactCorrection.Workspace(capacity: capacity)
    }

    /// RR intervals in the window.
    package var intervals: Int { max(0, workspace.beats.count - 1) }
    /// The window's length so far, 1/1024 s ticks (the sum of its intervals).
    package var ticks: Int64 { workspace.beats.last ?? 0 }

    /// Empties the window (a gap, a reconnect, a finished window).
    package mutating func reset() { workspace.beats.removeAll(keepingCapacity: true) }

    /// Appends one RR interval (1/1024 s ticks) after the window's last beat.
    package mutating func append(_ rr: UInt16) {
        if workspace.beats.isEmpty { workspace.beats.append(0) }
        workspace.beats.append(workspace.beats[workspace.beats.count - 1] + Int64(rr))
    }

    /// Corrects the window's artefacts and measures it, refusing it when more than
    /// `maxArtefacts` (0…1) of its intervals needed correcting; then empties it.
    package mutating func finish(maxArtefacts: Double) -> Outcome {
        defer { reset() }
        let intervals = self.intervals
        workspace.correct()
        let corrected = workspace.corrected.count
        if Double(corrected) > maxArtefacts * Double(intervals) { return .tooManyArtefacts(intervals: intervals, corrected: corrected) }
        guard let m = TimeDomain(beats: workspace.beats) else { return .tooFewBeats(intervals: intervals) }
        return .measured(m, intervals: intervals, corrected: corrected)
    }
}
