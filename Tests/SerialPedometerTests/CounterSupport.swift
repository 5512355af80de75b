import Foundation
@testable import SerialPedometer

/// Feeds (reading, receipt second) pairs to a counter and collects what came out.
struct CounterRun {
    var counter: StepCounter
    var samples: [StepInterval] = []
    var events: [CounterEvent] = []

    init(_ config: CounterConfiguration, state: CounterState = CounterState()) {
        counter = StepCounter(configuration: config, state: state)
    }

    static func config(bits: Int? = nil, trust: Bool = false) -> CounterConfiguration {
        try! CounterConfiguration(deviceID: "PED1", counterBits: bits, trustDeviceTime: trust)
    }

    @discardableResult
    mutating func feed(_ r: PedometerReading, at second: Double) -> CounterOutput {
        let out = counter.process(r, receivedAt: Date(timeIntervalSince1970: second))
        samples += out.samples
        events += out.events
        return out
    }

    /// Feeds counts one per `every` seconds from `start`, with optional seq numbering.
    mutating func feed(counts: [UInt64], from start: Double, every: Double = 1, seqFrom: UInt64? = nil, boot: String? = nil) {
        for (i, c) in counts.enumerated() {
            feed(PedometerReading(steps: c, seq: seqFrom.map { $0 + UInt64(i) }, boot: boot), at: start + Double(i) * every)
        }
    }

    /// Ends the stream: settles a held reading.
    mutating func finish() {
        let out = counter.finish()
        samples += out.samples
        events += out.events
    }

    var total: UInt64 { samples.reduce(0) { $0 + $1.steps } }
    func count(_ code: String) -> Int { events.filter { $0.code == code }.count }
}
