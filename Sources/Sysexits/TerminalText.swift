import Foundation

/// Text from outside (source and device names, serial lines, advertised names) made safe for a
/// terminal: control characters are shown as escapes instead of being sent raw, so a name holding
/// `ESC [ 2 J` cannot clear the screen or recolour the output (docs/input-rules.md).
package enum TerminalText {
    /// `s` with every C0 control (U+0000–U+001F), DEL and C1 control (U+0080–U+009F) replaced by
    /// `\u{…}`; anything else unchanged.
    package static func visible(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isControl) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            if isControl(u) { out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}" } else { out.unicodeScalars.append(u) }
        }
        return out
    }

    package static func isControl(_ u: Unicode.Scalar) -> Bool {
        u.value < 0x20 || (0x7F...0x9F).contains(u.value)
    }

    /// `raw` made ``visible(_:)``, then padded or cut to `width` columns (a table's cell).
    package static func column(_ raw: String, _ width: Int) -> String {
        let s = visible(raw)
        return s.count >= width ? String(s.prefix(width - 1)) + " " : s.padding(toLength: width, withPad: " ", startingAt: 0)
    }

    /// Seconds for people: `2 s`, `0.5 s`.
    package static func seconds(_ t: Double) -> String { t == t.rounded() ? "\(Int(t)) s" : "\(t) s" }
}
