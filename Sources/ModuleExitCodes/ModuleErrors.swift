import AccessTokens
import AppleHealthExport
import BluetoothLinux
import Capture
import HealthGateConfiguration
import GATT
import Gateway
import HealthModel
import HealthStore
import SerialPedometer
import Sysexits
import Udev

// Every module's failures with their sysexits(3) code: the one mapping both executables
// (`healthgate`, `healthgate-bench`) exit by, through Sysexits' `ExitCodeMapping`, which finds
// these conformances at run time. They live here, above the modules they name, so that Sysexits
// itself depends on none of them and any module (HTTPAPI) can use its output conventions.

extension AppleHealthExportError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .fileMissing: .noInput
        case .unreadable: .ioError
        case .notAnExport, .noExportXML, .malformedXML, .zipUnreadable, .unknownSampleIdentity: .dataError
        }
    }
}

extension SerialPortError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .notFound, .vanished: .unavailable
        case .permissionDenied: .noPermission
        case .busy: .tempFail
        case .notATerminal, .unsupportedBaud: .usage
        case .system: .ioError
        }
    }
}

extension SerialConfigError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .badConfigFile: .config
        default: .usage
        }
    }
}

extension ConfigError: SysexitConvertible {
    /// A bad configuration file: 78, said as what it is, then where and what is wrong.
    package var sysexit: Sysexit { .config }
    package var sysexitMessage: String { "configuration error: \(self)" }
}

extension UdevError: SysexitConvertible {
    package var sysexit: Sysexit { .unavailable }
}

extension DeviceMatchError: SysexitConvertible {
    package var sysexit: Sysexit { .usage }
}

extension StoreError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch kind {
        case .io: .ioError
        case .busy: .tempFail
        case .permission: .noPermission
        case .corrupt, .data: .dataError
        case .usage: .usage
        case .config: .config
        case .internal: .software
        case .noInput: .noInput
        }
    }
}

extension HealthModelError: SysexitConvertible {
    package var sysexit: Sysexit { .dataError }
}

extension InputValueError: SysexitConvertible {
    package var sysexit: Sysexit { .usage }
}

extension SampleJSON.DecodeError: SysexitConvertible {
    package var sysexit: Sysexit { .dataError }
}

extension DaemonLockError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .cannotCreate: .ioError
        case .owned: .tempFail
        }
    }
}

extension BluetoothError: SysexitConvertible {
    /// The agreed sysexits code: 69 unavailable, 75 try again, 74 link lost, 77 permissions.
    package var sysexit: Sysexit { Sysexit(rawValue: exitCode) ?? .unavailable }
}

extension GATTError: SysexitConvertible {
    /// A transaction timeout is worth retrying (75); a lost link is an I/O failure (74); a
    /// refusal or a protocol violation means the device cannot do it (69).
    package var sysexit: Sysexit {
        switch self {
        case .timeout: return .tempFail
        case .disconnected: return .ioError
        default: return .unavailable
        }
    }
}

extension CaptureFileError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .exists: return .usage
        case .cannotCreate, .writeFailed: return .ioError
        }
    }
}

extension ChangeFeedError: SysexitConvertible {
    /// 65 (data error) means exactly "this anchor cannot be answered without a gap: resync";
    /// a malformed anchor or limit is a usage error (64).
    package var sysexit: Sysexit { requiresResync ? .dataError : .usage }
}

extension StrapLookupError: SysexitConvertible {
    package var sysexit: Sysexit {
        switch self {
        case .unknownName, .noneRemembered: .unavailable
        case .notAStrap: .usage
        }
    }
}

extension TokenError: SysexitConvertible {
    /// A bad option value is a usage error (64); an unknown token is bad data (65), as an unknown device is.
    package var sysexit: Sysexit {
        switch self {
        case .unknownType, .badName: .usage
        case .notFound: .dataError
        }
    }
}
