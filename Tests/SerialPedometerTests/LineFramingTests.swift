import Testing
@testable import SerialPedometer

/// Line framing: terminators, trimming, padding, the length cap and invalid UTF-8.
@Suite struct LineFramingTests {
    private func frame(_ chunks: [[UInt8]], max: Int = 256) -> ([FramedLine], LineFramer) {
        var f = LineFramer(maxLineBytes: max)
        var out: [FramedLine] = []
        for c in chunks { out += f.feed(c) }
        return (out, f)
    }

    @Test(arguments: ["\n", "\r\n", "\r"])
    func everyTerminatorEndsALine(_ end: String) {
        let (lines, _) = frame([Array("steps:1\(end)steps:2\(end)steps:3\(end)".utf8)])
        #expect(lines == [.line("steps:1"), .line("steps:2"), .line("steps:3")])
    }

    @Test func crlfSplitAcrossReadsIsOneTerminator() {
        let (lines, f) = frame([Array("12\r".utf8), Array("\n13\r".utf8), Array("\n".utf8)])
        #expect(lines == [.line("12"), .line("13")])
        #expect(f.emptyLines == 0)
    }

    @Test func mixedTerminatorsInOneStream() {
        let (lines, _) = frame([Array("1\n2\r\n3\r4\n\n5\r\r6".utf8)])
        #expect(lines == [.line("1"), .line("2"), .line("3"), .line("4"), .line("5")])
    }

    @Test func byteAtATimeGivesTheSameLines() {
        let text = Array("{\"steps\":5}\r\nsteps=6\rsteps:7\n".utf8)
        let (whole, _) = frame([text])
        let (bytewise, _) = frame(text.map { [$0] })
        #expect(whole == bytewise)
        #expect(whole.count == 3)
    }

    @Test func microbitPaddingIsTrimmed() {
        // serial.writeValue("steps", 42): "steps:42" padded with spaces to 32 bytes, then \r\n.
        let padded = "steps:42" + String(repeating: " ", count: 32 - 8 - 2) + "\r\n"
        #expect(padded.utf8.count == 32)
        let (lines, _) = frame([Array(padded.utf8)])
        #expect(lines == [.line("steps:42")])
    }

    @Test func tabsAndNULsAreTrimmedAndBlankLinesSkipped() {
        let (lines, f) = frame([[0x00, 0x09] + Array(" 17 ".utf8) + [0x00, 0x0A] + Array("   \n".utf8)])
        #expect(lines == [.line("17")])
        #expect(f.emptyLines == 1)
    }

    @Test func oversizedLineIsRejectedWholeOnceAndTheNextLineSurvives() {
        let long = [UInt8](repeating: UInt8(ascii: "9"), count: 300)
        let (lines, _) = frame([long[0..<100].map { $0 }, long[100...].map { $0 } + Array("\n42\n".utf8)])
        #expect(lines == [.rejected(.tooLong(bytes: 300)), .line("42")])
    }

    @Test func lineExactlyAtTheCapIsAccepted() {
        let atCap = String(repeating: "7", count: 256)
        let (lines, _) = frame([Array((atCap + "\n").utf8)])
        #expect(lines == [.line(atCap)])
        let (over, _) = frame([Array((atCap + "7\n").utf8)])
        #expect(over == [.rejected(.tooLong(bytes: 257))])
    }

    @Test func invalidUTF8LineIsRejectedAndNeighboursKept() {
        let bytes: [UInt8] = Array("10\n".utf8) + [0x73, 0x74, 0xFF, 0xFE, 0x0A] + Array("11\n".utf8) + [0xC3, 0x0A]
        let (lines, _) = frame([bytes])
        #expect(lines == [.line("10"), .rejected(.invalidUTF8), .line("11"), .rejected(.invalidUTF8)])
    }

    @Test func validMultibyteUTF8IsKept() {
        let (lines, _) = frame([Array("steps:3 note:café\n".utf8)])
        #expect(lines == [.line("steps:3 note:café")])
    }

    @Test func finishFlushesAnUnterminatedLine() {
        var f = LineFramer()
        #expect(f.feed(Array("55\n56".utf8)) == [.line("55")])
        #expect(f.finish() == .line("56"))
        #expect(f.finish() == nil)
    }
}
