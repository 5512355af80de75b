import Foundation
import GATT
import HealthGateTesting
import Simulators
import Testing
@testable import Gateway
@testable import HealthGateConfiguration
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The simulated load itself: the configuration it writes is one `run` accepts and names every
/// endpoint; and it never hangs on a daemon that is not reading (a long `healthgate simulate`
/// with no `run` attached must still stop on Ctrl-C).
@Suite(.timeLimit(.minutes(3))) struct SimulatedLoadTests {
    @Test func theConfigurationNamesEverySocketAndPtyWithTheSampleIngestSettings() throws {
        let load = try SimulatedLoad(directory: shortTempDirectory("cfg"), straps: 3, pedometers: 2)
        defer { load.stop() }
        let c = try GatewayConfig.parse(load.configuration(databasePath: "/tmp/x.sqlite"), file: "sim.toml")
        #expect(c.straps.map(\.socket) == load.straps.map(\.socketPath))
        #expect(c.straps.map(\.name) == load.straps.map(\.name))
        #expect(c.pedometers.map(\.path) == load.pedometers.map(\.link))
        #expect(c.databasePath == "/tmp/x.sqlite")
        let sample = try GatewayConfig.load(path: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("samples/healthgate.toml").path)
        #expect(c.ingest == sample.ingest)
    }

    @Test func aPedometerNobodyReadsDropsLinesInsteadOfBlockingStop() async throws {
        let p = try SimulatedPedometer()
        p.start(interval: .milliseconds(1))
        // Each reading adds at most 3 steps; more steps than 3 per written line means lines
        // were dropped because the pty's buffer is full (no reader), not queued forever.
        #expect(await eventually(seconds: 150) { p.steps > 3 * UInt64(p.linesWritten) })
        await offThread { p.stop() }
    }

    @Test func stopReturnsWhileADaemonHoldsTheStrapLinksWithoutReading() async throws {
        let load = try SimulatedLoad(directory: shortTempDirectory("stall"), straps: 1, rate: 1_000, pedometers: 0)
        // A client that connects, subscribes by writing the CCCD by hand, and never reads again.
        let strap = load.straps[0]
        let fd = try connectRaw(strap.socketPath)
        defer { close(fd) }
        let cccd = try #require(strap.peripheral.cccdHandle(of: 0x2A37))
        var write: [UInt8] = [0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x01, 0x00]
        #expect(send(fd, &write, write.count, 0) == write.count)
        #expect(await eventually(seconds: 60) { load.isSubscribed(strap: 0) })
        load.start()
        // The kernel queues only a few messages per socket; the driver then blocks in send.
        #expect(await eventually(seconds: 60) { load.sentCount(strap: 0) >= 5 })
        await offThread { load.stop() }
    }

    func connectRaw(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else { throw POSIXError(.ECONNREFUSED) }
        return fd
    }
}
