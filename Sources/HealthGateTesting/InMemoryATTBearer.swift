import Foundation
import GATT
import Glibc
import Simulators

/// An in-memory ``ATTBearer`` pair: what one end sends, the other receives, PDU by PDU.
///
/// Thread rules as for every bearer; one `NSCondition` guards both directions. Closing either
/// end closes the link for both (like a disconnect).
package final class InMemoryATTBearer: ATTBearer, @unchecked Sendable {
    // @unchecked: `link` is shared by the two ends and every access holds `link.condition`.
    private final class Link: @unchecked Sendable {
        let condition = NSCondition()
        var queues: [[[UInt8]]] = [[], []]
        var closed = false
    }

    private let link: Link
    private let side: Int

    private init(link: Link, side: Int) {
        self.link = link
        self.side = side
    }

    /// Two connected ends: give one to a ``GATTClient`` and the other to a test server.
    package static func makePair() -> (InMemoryATTBearer, InMemoryATTBearer) {
        let link = Link()
        return (InMemoryATTBearer(link: link, side: 0), InMemoryATTBearer(link: link, side: 1))
    }

    package func send(_ pdu: [UInt8]) throws {
        link.condition.lock()
        defer { link.condition.unlock() }
        guard !link.closed else { throw ATTBearerError.closed }
        link.queues[1 - side].append(pdu)
        link.condition.broadcast()
    }

    package func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        link.condition.lock()
        defer { link.condition.unlock() }
        while link.queues[side].isEmpty && !link.closed { link.condition.wait() }
        if link.closed { return nil }
        let pdu = link.queues[side].removeFirst()
        let n = min(pdu.count, buffer.count)
        pdu.withUnsafeBytes { src in buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[0..<n])) }
        return n
    }

    package func close() {
        link.condition.lock()
        link.closed = true
        link.condition.broadcast()
        link.condition.unlock()
    }
}

extension SimulatedPeripheral {
    /// Connects a new client over an in-memory bearer and serves it on a new thread.
    /// - Returns: the client's end of the link.
    package func connect() -> any ATTBearer {
        let (client, server) = InMemoryATTBearer.makePair()
        serve(server)
        return client
    }
}
