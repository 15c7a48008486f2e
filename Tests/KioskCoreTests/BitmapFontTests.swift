// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

@Suite struct BitmapFontTests {
    @Test func coversPrintableASCII() {
        #expect(BitmapFont.columns.count == 95 * 5)
        #expect(BitmapFont.columns.allSatisfy { $0 & 0x80 == 0 }) // seven rows only
    }

    /// The glyph as seven strings of "#" and ".".
    private func picture(_ c: Character) -> [String] {
        let code = c.asciiValue!
        return (0..<7).map { y in String((0..<5).map { x in BitmapFont.isSet(code, x: x, y: y) ? "#" : "." }) }
    }

    @Test func glyphsReadRightWayUp() {
        #expect(picture("A") == [".###.", "#...#", "#...#", "#...#", "#####", "#...#", "#...#"])
        #expect(picture("L") == ["#....", "#....", "#....", "#....", "#....", "#....", "#####"])
        #expect(picture("7") == ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."])
        #expect(picture(" ") == Array(repeating: ".....", count: 7))
    }

    @Test func linesMapToPrintableASCII() {
        #expect(BitmapFont.lines("ab\ncd") == [[0x61, 0x62], [0x63, 0x64]])
        #expect(BitmapFont.lines("x\u{2026}") == [[0x78, 0x2E, 0x2E, 0x2E]])
        #expect(BitmapFont.lines("é\t") == [[0x3F, 0x20]])
        #expect(BitmapFont.lines("") == [[]])
    }

    @Test func widthHasNoTrailingGap() {
        #expect(BitmapFont.width(of: [0x41, 0x42], scale: 3) == 11 * 3)
        #expect(BitmapFont.width(of: [], scale: 3) == 0)
    }

    @Test func drawingClipsAtTheEdges() {
        let frame = Bitmap(width: 4, height: 4, fill: 0)
        BitmapFont.draw([0x41], into: frame, x: -2, y: -1, scale: 1, color: 0xFFFF_FFFF)
        // 'A' column 2 (0x11: rows 0 and 4) lands at x = 0: rows -1 (clipped) and 3.
        #expect(frame[0, 3] == 0xFFFF_FFFF)
        #expect(frame[0, 2] == 0)
    }
}
