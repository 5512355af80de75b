/// Polls `condition` every 10 ms until it holds, at most `seconds / 0.01` times, and says whether
/// it held.
///
/// The bound only keeps a broken test from hanging; no test asserts how long anything took. It
/// counts polls, not wall-clock time: each poll sleeps with `Task.sleep` (no thread is held), and
/// when the cooperative pool is starved (the one-thread pass, a loaded machine) the polls simply
/// come later, so the bound stretches instead of expiring before the awaited work got a thread.
package func eventually(seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
    let polls = max(1, Int(seconds * 100))
    for _ in 0..<polls {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
