import Foundation

/// Asks a yes/no question on the terminal; false when stdin is not a terminal.
package enum Confirm {
    package static var isTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    package static func ask(_ question: String) -> Bool {
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}
