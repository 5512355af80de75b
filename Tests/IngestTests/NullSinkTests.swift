import Foundation
import Testing
@testable import Ingest

/// The one sink that stores nothing (`live --no-store`, `record`, `serial watch --no-store`):
/// batches vanish, but state values stay in memory so a re-plugged pedometer continues its count.
@Suite struct NullSinkTests {
    @Test("state written with a batch is read back, newest value per key; records are not kept")
    func keepsStateInMemory() throws {
        let sink = NullSink()
        let slots = SlotTable()
        #expect(try sink.persistedState(forKey: "serial.counter.A") == nil)
        let records = [SampleRecord](repeating: SampleRecord(typeSlot: 0, value: 1, start: 0, end: 0, sourceSlot: 0), count: 3)
        try records.withUnsafeBufferPointer { buffer in
            try sink.write(buffer, slots: slots, attachments: BatchAttachments(state: ["serial.counter.A": Data("1".utf8)]))
            try sink.write(buffer, slots: slots, attachments: BatchAttachments(state: ["serial.counter.B": Data("b".utf8)]))
            try sink.write(buffer, slots: slots, attachments: BatchAttachments(state: ["serial.counter.A": Data("2".utf8)]))
            // A batch without state leaves what was kept.
            try sink.write(buffer, slots: slots, attachments: .none)
            try sink.write(buffer, slots: slots)
        }
        #expect(try sink.persistedState(forKey: "serial.counter.A") == Data("2".utf8))
        #expect(try sink.persistedState(forKey: "serial.counter.B") == Data("b".utf8))
        #expect(try sink.persistedState(forKey: "serial.counter.C") == nil)
    }

    @Test("an empty batch carrying only state (a pedometer's final state at unplug) is kept")
    func stateOnlyBatch() throws {
        let sink = NullSink()
        try [SampleRecord]().withUnsafeBufferPointer { empty in
            try sink.write(empty, slots: SlotTable(), attachments: BatchAttachments(state: ["k": Data([7])]))
        }
        #expect(try sink.persistedState(forKey: "k") == Data([7]))
    }
}
