import Foundation
import Testing
import FuzzTargets

/// Every committed fuzz input — the seeds, inputs fuzzing runs kept, every crash reproducer —
/// replayed through its target: none may trap or break the target's promise. A crash libFuzzer
/// finds is committed into `Corpus/<target>/` and becomes a regression test here.
@Suite("Fuzz corpora")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    static func inputs(of target: FuzzTarget) -> [URL] {
        let dir = corpus.appendingPathComponent(target.name)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().map { dir.appendingPathComponent($0) }
    }

    @Test("each target's corpus passes", arguments: FuzzTarget.all.map(\.name))
    func corpusPasses(_ name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let files = Self.inputs(of: target)
        #expect(!files.isEmpty, "no committed inputs for \(name): run scripts/fuzz-seeds.py")
        for file in files {
            if let violation = target.violation(in: try Data(contentsOf: file)) {
                Issue.record("\(file.lastPathComponent): \(violation)")
            }
        }
    }

    @Test("every corpus directory names a target")
    func directoriesNameTargets() throws {
        let dirs = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path)
        #expect(Set(dirs).subtracting(FuzzTarget.all.map(\.name)).isEmpty, "corpus directories without a target: \(dirs)")
    }
}
