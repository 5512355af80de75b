import Foundation
import Gateway
import HealthGateTesting
import HealthModel
import HealthStore
import SerialPedometer
import ModuleExitCodes
import Sysexits
import Testing

/// One exit-code mapping for both executables: a module's failure exits with the same code from
/// `healthgate` and from `healthgate-bench` (the bench used to exit 70 for every one of them:
/// the mapping lived in the CLI's files).
@Suite struct ExitCodeMappingTests {
    @Test func modulesFailuresMapToTheirSysexitsCodes() {
        let cases: [(any Error, Sysexit)] = [
            (StoreError.sqlite(code: 5, message: "database is locked", context: "commit"), .tempFail),   // SQLITE_BUSY
            (StoreError.storeMissing(path: "/x.sqlite", reason: "no such file"), .noInput),
            (StoreError.schemaTooNew(found: 99, supported: 6), .config),
            (SerialPortError.busy("/dev/ttyUSB0"), .tempFail),
            (SerialPortError.permissionDenied("/dev/ttyUSB0"), .noPermission),
            (DaemonLockError.owned("/x.sqlite", pid: 1), .tempFail),
            (StrapLookupError.noneRemembered, .unavailable),
            (StrapLookupError.notAStrap("walker", kind: "serial"), .usage),
            (InputValueError("--tz 'x' is not an IANA time zone name"), .usage),
        ]
        for (error, code) in cases {
            let (message, mapped) = ExitCodeMapping.describe(error)
            #expect(mapped == code, "\(error)")
            #expect(message == "\(error)")
        }
        #expect(ExitCodeMapping.describe(CocoaError(.featureUnsupported)).1 == .software, "an error of no known kind: the fallback")
    }

    /// The conformances live in `ModuleExitCodes`, above the modules they name (Sysexits depends on
    /// none of them): the executable must link them, or a module's failure would exit with the
    /// fallback 70 instead of its own code.
    @Test func theCommandLineExitsWithTheModulesCodes() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString)/x.sqlite").path
        let r = try await offThread { try HealthGateExecutable.run(["samples", "--db", missing]) }
        #expect(r.status == Sysexit.noInput.rawValue, "\(r.stderr)")   // StoreError.storeMissing
        #expect(r.stderr.contains("there is no health store at \(missing)"), "\(r.stderr)")
    }
}
