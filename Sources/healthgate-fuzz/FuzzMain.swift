import Foundation
import FuzzTargets

// `healthgate-fuzz`: the parsers' fuzzing driver (docs/fuzzing.md).
//
// Built by `scripts/fuzz.sh` with `-sanitize=fuzzer,address -DFUZZING`, it is a libFuzzer
// binary: `main` hands the command line to libFuzzer's driver, which calls
// `LLVMFuzzerTestOneInput` with each generated input for the target named by
// $HEALTHGATE_FUZZ_TARGET. Built normally (`swift build`), it replays inputs through a target
// — a corpus, a crash file libFuzzer wrote — and says which break it, so a finding can be
// reproduced without the fuzzing build.

#if FUZZING
/// libFuzzer's driver (FuzzerDriver.cpp): runs the fuzzing loop over `callback` with libFuzzer's flags.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// The target of this process, from $HEALTHGATE_FUZZ_TARGET (checked in `main` before fuzzing).
nonisolated(unsafe) var fuzzTarget: FuzzTarget?

/// libFuzzer's per-input entry point: a violation aborts, so libFuzzer saves the input as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = fuzzTarget else { return 0 }
    do {
        try target.run(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    } catch {
        FileHandle.standardError.write(Data("healthgate-fuzz: \(target.name): \(error)\n".utf8))
        abort()
    }
    return 0
}
#endif

@main
enum FuzzMain {
    static let usage = """
        usage: healthgate-fuzz list
               healthgate-fuzz replay TARGET PATH...   (files, or directories of inputs)

        Replays inputs through one of HealthGate's parser fuzz targets and reports every input
        that breaks it (exit 1), e.g. a crash file a fuzzing run saved. To fuzz, build and run with
        scripts/fuzz.sh [TARGET] [SECONDS] (docs/fuzzing.md), which runs this program built with
        libFuzzer: the target is then named by $HEALTHGATE_FUZZ_TARGET and the arguments are
        libFuzzer's.
        """

    static func main() {
        #if FUZZING
        let name = ProcessInfo.processInfo.environment["HEALTHGATE_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget.named(name) else {
            fail("set HEALTHGATE_FUZZ_TARGET to one of: \(FuzzTarget.all.map(\.name).joined(separator: ", ")) (got '\(name)')", code: 64)
        }
        fuzzTarget = target
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
        let args = Array(CommandLine.arguments.dropFirst())
        switch args.first {
        case "list":
            for t in FuzzTarget.all { print("\(t.name.padding(toLength: 24, withPad: " ", startingAt: 0))\(t.summary)") }
        case "replay" where args.count >= 3:
            guard let target = FuzzTarget.named(args[1]) else {
                fail("no fuzz target '\(args[1])': `healthgate-fuzz list` names them", code: 64)
            }
            replay(target, paths: Array(args.dropFirst(2)))
        case "-h", "--help", "help":
            print(usage)
        default:
            fail("expected `list` or `replay TARGET PATH...`\n\(usage)", code: 64)
        }
        #endif
    }

    /// Runs every input under `paths` through `target`; exits 1 when one breaks it, 66 when a path is missing.
    static func replay(_ target: FuzzTarget, paths: [String]) {
        var inputs = 0, broken = 0
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                fail("\(path) does not exist: give input files or corpus directories", code: 66)
            }
            let files = isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
                : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                inputs += 1
                if let violation = target.violation(in: data) {
                    broken += 1
                    print("\(file): \(violation)")
                }
            }
        }
        print("\(target.name): \(inputs) input(s), \(broken) broke it")
        if broken > 0 { exit(1) }
    }

    static func fail(_ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data("healthgate-fuzz: \(message)\n".utf8))
        exit(code)
    }
}
