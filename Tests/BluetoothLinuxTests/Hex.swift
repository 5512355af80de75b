/// Test helper: bytes from a hex string (spaces ignored).
func bytes(_ hex: String) -> [UInt8] {
    let h = Array(hex.filter { !$0.isWhitespace })
    return stride(from: 0, to: h.count, by: 2).map { UInt8(String(h[$0...$0 + 1]), radix: 16)! }
}
