import Foundation
import GATT
import Glibc
import Simulators
import Testing

/// The Unix-socket ATT transport: a listener in the file system serves a peripheral, the client
/// connects by path; a socket that goes away and comes back takes a new connection; every way
/// the connect can fail says what is wrong. (The GATT behaviour over it is covered by every
/// test parameterised over ``BearerKind``.)
@Suite(.timeLimit(.minutes(2))) struct UnixSocketBearerTests {
    func tempPath() -> String { "/tmp/hg-att-test-\(UInt32.random(in: 0...UInt32.max)).sock" }

    @Test func aClientReachesThePeripheralByPathAndTheLinkCarriesOnePDUPerMessage() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let path = tempPath()
        let listener = try strap.listen(onUnixSocket: path)
        defer { listener.close() }
        var st = stat()
        #expect(stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK)
        let client = GATTClient(bearer: try SocketATTBearer.connect(unixSocket: path), transactionTimeout: .seconds(30))
        defer { client.close() }
        let hrm = try #require(try await client.discover().characteristic(0x2A37))
        let inbox = Inbox()
        try await client.subscribe(to: hrm, handler: inbox.handler)
        // Back-to-back notifications arrive as separate PDUs, never joined.
        for bpm in UInt8(70)..<UInt8(80) { #expect(strap.notifyHeartRate([0x00, bpm])) }
        #expect(await inbox.next(10) == (UInt8(70)..<UInt8(80)).map { [0x00, $0] })
    }

    @Test func aSocketThatGoesAwayRefusesAndOneThatComesBackServesAFreshConnection() async throws {
        let strap = SimulatedPeripheral.heartRateStrap()
        let path = tempPath()
        var listener = try strap.listen(onUnixSocket: path)
        let first = GATTClient(bearer: try SocketATTBearer.connect(unixSocket: path), transactionTimeout: .seconds(30))
        let hrm = try #require(try await first.discover().characteristic(0x2A37))
        try await first.subscribe(to: hrm) { _ in }
        #expect(strap.notificationsEnabled(0x2A37))

        listener.close()
        strap.disconnect()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(throws: ATTBearerError.self) { try SocketATTBearer.connect(unixSocket: path) }
        first.close()

        listener = try strap.listen(onUnixSocket: path)
        defer { listener.close() }
        let second = GATTClient(bearer: try SocketATTBearer.connect(unixSocket: path), transactionTimeout: .seconds(30))
        defer { second.close() }
        let hrm2 = try #require(try await second.discover().characteristic(0x2A37))
        #expect(!strap.notificationsEnabled(0x2A37))   // the new link starts unsubscribed
        let inbox = Inbox()
        try await second.subscribe(to: hrm2, handler: inbox.handler)
        strap.notifyHeartRate([0x00, 91])
        #expect(await inbox.next(1) == [[0x00, 91]])
        #expect(strap.connectionCount == 2)
    }

    func connectError(_ path: String) -> ATTBearerError? {
        do {
            _ = try SocketATTBearer.connect(unixSocket: path)
            return nil
        } catch let e as ATTBearerError {
            return e
        } catch {
            return nil
        }
    }

    @Test func noSocketThere() {
        let path = tempPath()
        let e = connectError(path)
        guard case .system(let call, let code, _) = e else { Issue.record("expected a system error, got \(String(describing: e))"); return }
        #expect(call == "connect to \(path)" && code == ENOENT)
        #expect(e?.description.contains("healthgate simulate") == true, "\(String(describing: e))")
    }

    @Test func aStaleSocketFileNobodyListensOn() throws {
        let path = tempPath()
        let listener = try SimulatedPeripheral.heartRateStrap().listen(onUnixSocket: path)
        // A listener that died without removing its file: bind a second socket, then close it.
        listener.close()
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(fd)
        defer { unlink(path) }
        let e = connectError(path)
        #expect(e?.description.contains("nobody is listening") == true, "\(String(describing: e))")
    }

    @Test func aStreamSocketIsNotAnATTSocket() throws {
        let path = tempPath()
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0 && listen(fd, 1) == 0)
        let e = connectError(path)
        #expect(e?.description.contains("SOCK_SEQPACKET") == true, "\(String(describing: e))")
    }

    @Test func aPathLongerThanSunPathIsRefusedUpFront() {
        let path = "/tmp/" + String(repeating: "x", count: SocketATTBearer.maximumUnixSocketPathLength)
        let e = connectError(path)
        #expect(e?.description.contains("1…\(SocketATTBearer.maximumUnixSocketPathLength) bytes") == true, "\(String(describing: e))")
    }
}
