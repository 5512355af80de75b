/// Time-domain heart-rate variability of NN intervals, as the Task Force of the ESC and NASPE
/// (1996) defines it, over one or more runs of consecutive intervals (a gap between runs: no
/// successive difference is taken across it).
///
/// - `sdnn`: the standard deviation of all NN intervals, with n − 1 in the denominator;
/// - `rmssd`: the root mean square of the successive differences, over the differences within runs;
/// - `pnn50`: the number of successive differences larger than 50 ms, divided by the number of
///   NN intervals (the Task Force's denominator; neurokit2's for a single run), in percent.
package struct TimeDomain: Sendable, Equatable {
    /// NN intervals.
    package var intervals: Int
    /// Successive differences (pairs of consecutive intervals within a run).
    package var differences: Int
    /// Mean NN interval, ms.
    package var meanNN: Double
    /// SDNN, ms.
    package var sdnn: Double
    /// RMSSD, ms.
    package var rmssd: Double
    /// pNN50, percent.
    package var pnn50: Double

    /// The measures of `runs` (NN intervals in ms), nil with fewer than two intervals or no
    /// successive difference.
    package init?(runs: [[Double]]) {
        let all = runs.flatMap { $0 }
        var squares = 0.0, nn50 = 0, pairs = 0
        for run in runs where run.count > 1 {
            for k in 1..<run.count {
                let d = run[k] - run[k - 1]
                squares += d * d
                if abs(d) > 50 { nn50 += 1 }
                pairs += 1
            }
        }
        guard all.count > 1, pairs > 0 else { return nil }
        let mean = all.reduce(0, +) / Double(all.count)
        let variance = all.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(all.count - 1)
        intervals = all.count
        differences = pairs
        meanNN = mean
        sdnn = variance.squareRoot()
        rmssd = (squares / Double(pairs)).squareRoot()
        pnn50 = Double(nn50) / Double(all.count) * 100
    }
}
