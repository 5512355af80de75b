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
        var starts = Set<Int>()
        var at = 0
        for run in runs { starts.insert(at); at += run.count }
        self.init(count: all.count, interval: { all[$0] }, startsRun: { starts.contains($0) })
    }

    /// The measures of one run of consecutive `beats` (ascending times in 1/1024 s ticks), nil
    /// with fewer than three beats. Allocates nothing (the live SDNN's path).
    package init?(beats: [Int64]) {
        guard beats.count > 1 else { return nil }
        self.init(count: beats.count - 1, interval: { Double(beats[$0 + 1] - beats[$0]) * 1000 / 1024 }, startsRun: { $0 == 0 })
    }

    /// The measures of `n` intervals (`interval(k)`, ms), runs beginning where `startsRun(k)`.
    private init?(count n: Int, interval: (Int) -> Double, startsRun: (Int) -> Bool) {
        var squares = 0.0, nn50 = 0, pairs = 0, sum = 0.0
        for k in 0..<n {
            let x = interval(k)
            sum += x
            guard k > 0, !startsRun(k) else { continue }
            let d = x - interval(k - 1)
            squares += d * d
            if abs(d) > 50 { nn50 += 1 }
            pairs += 1
        }
        guard n > 1, pairs > 0 else { return nil }
        let mean = sum / Double(n)
        var deviations = 0.0
        for k in 0..<n { let d = interval(k) - mean; deviations += d * d }
        intervals = n
        differences = pairs
        meanNN = mean
        sdnn = (deviations / Double(n - 1)).squareRoot()
        rmssd = (squares / Double(pairs)).squareRoot()
        pnn50 = Double(nn50) / Double(n) * 100
    }
}
