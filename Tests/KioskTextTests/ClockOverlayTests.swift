// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskCore
import KioskText
import Testing

/// The overlay on the virtual clock: the show's time zero stands for `start` (seconds since
/// 1970), and the clock is moved from deadline to deadline as the frame loop moves it.
/// Serialized: the time zone is the process's (`TZ`).
@Suite(.serialized) struct ClockOverlayTests {
    init() {
        // Central European time with its rules (POSIX TZ, no tzdata needed): CEST from the last
        // Sunday of March 01:00 UTC to the last Sunday of October 01:00 UTC.
        setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1)
        tzset()
    }

    func overlay() throws -> ClockOverlay {
        ClockOverlay(format: ClockOverlay.Kind.clock.defaultFormat, renderer: try Fonts.renderer(),
                     frameWidth: 1920, frameHeight: 1080)
    }

    @Test func aMinuteBoundaryChangesTheTextOnceAtItsDeadline() throws {
        let o = try overlay()
        let start = 1_780_000_000 + 59 - 1_780_000_000 % 60 - 30  // hh:mm:29 UTC
        let clock = VirtualClock()
        #expect(o.update(epochSeconds: start))
        let first = o.text
        #expect(first.count == 5 && first.contains(":"))
        let deadline = ClockOverlay.nextChange(after: start)
        #expect(deadline == start + 31 && deadline % 60 == 0)
        clock.advance(to: .seconds(deadline - start - 1))
        #expect(!o.update(epochSeconds: start + Int(clock.now.components.seconds)))  // same minute: nothing to draw
        clock.advance(to: .seconds(deadline - start))
        #expect(o.update(epochSeconds: start + Int(clock.now.components.seconds)))
        #expect(o.text != first)
        #expect(ClockOverlay.nextChange(after: deadline) == deadline + 60)
    }

    @Test func theEndOfSummerTimeTurnsTheClockBack() throws {
        let o = try overlay()
        let change = 1_792_890_000  // 2026-10-25 01:00:00 UTC: 03:00 CEST becomes 02:00 CET
        let clock = VirtualClock()
        #expect(o.update(epochSeconds: change - 30))
        #expect(o.text == "02:59")
        clock.advance(to: .seconds(ClockOverlay.nextChange(after: change - 30) - (change - 30)))
        #expect(o.update(epochSeconds: change - 30 + Int(clock.now.components.seconds)))
        #expect(o.text == "02:00")
        #expect(ClockOverlay.format("%H:%M %Z", epochSeconds: change + 3600) == "03:00 CET")
        #expect(ClockOverlay.format("%H:%M %Z", epochSeconds: change - 3600) == "02:00 CEST")
    }

    /// The clock as a premultiplied layer over a picture gives the frame its blend draws, within
    /// two levels of rounding: the plane path shows the same clock as the CPU path.
    @Test func theClockAsALayerGivesWhatItsBlendDraws() throws {
        let o = try overlay()
        o.update(epochSeconds: 1_792_890_000)
        let picture = Bitmap(width: 1920, height: 1080)
        for i in 0..<picture.pixelCount {
            picture.pixels[i] = 0xFF00_0000 | UInt32(truncatingIfNeeded: i &* 2_654_435_761) & 0xFF_FFFF
        }
        let blended = picture.copy()
        o.blend(into: blended)
        guard case .layer(let layer) = o.layer else { Issue.record("no layer"); return }
        #expect(layer.premultiplied && layer.x == o.box.x && layer.y == o.box.y && layer.width == o.box.width)
        let stacked = Bitmap(width: 1920, height: 1080)
        LayerComposer.compose([FrameLayer(bitmap: picture), layer], background: .black, into: stacked)
        var worst = 0
        for i in 0..<picture.pixelCount {
            for shift in [0, 8, 16] as [UInt32] {
                worst = max(worst, abs(Int((blended.pixels[i] >> shift) & 0xFF)
                                       - Int((stacked.pixels[i] >> shift) & 0xFF)))
            }
        }
        #expect(worst <= 2)
    }

    @Test func blendingTouchesOnlyTheCornerBox() throws {
        let o = try overlay()
        o.update(epochSeconds: 1_792_890_000)
        let frame = Bitmap(width: 1920, height: 1080, fill: 0xFF80_8080)
        o.blend(into: frame)
        let box = o.box
        #expect(box.x > 1920 / 2 && box.y < 1080 / 10 && box.width > 0 && box.height > 0)
        var changedOutside = 0, white = 0
        for y in 0..<1080 {
            for x in 0..<1920 where frame[x, y] != 0xFF80_8080 {
                if x < box.x || x >= box.x + box.width || y < box.y || y >= box.y + box.height { changedOutside += 1 }
                if frame[x, y] == 0xFFFF_FFFF { white += 1 }
            }
        }
        #expect(changedOutside == 0 && white > 100)
        // A frame of another size is left alone.
        let other = Bitmap(width: 64, height: 48, fill: 0xFF80_8080)
        o.blend(into: other)
        #expect((0..<other.pixelCount).allSatisfy { other.pixels[$0] == 0xFF80_8080 })
    }

    /// On a white picture the clock's glyph area holds white strokes framed by a dark outline
    /// (the words stay legible: dark pixels, and rows where a near-white stroke lies between
    /// two dark ones); on a black one the white strokes are there as well.
    @Test func theClockIsLegibleOnWhiteAndOnBlack() throws {
        let o = try overlay()
        o.update(epochSeconds: 1_792_890_000)
        func levels(on background: UInt32) -> [[UInt32]] {
            let frame = Bitmap(width: 1920, height: 1080, fill: background)
            o.blend(into: frame)
            return (o.box.y..<(o.box.y + o.box.height)).map { y in
                (o.box.x..<(o.box.x + o.box.width)).map { x in
                    let v = frame[x, y]
                    return max((v >> 16) & 0xFF, (v >> 8) & 0xFF, v & 0xFF)
                }
            }
        }
        let white = levels(on: 0xFFFF_FFFF)
        let dark = white.joined().filter { $0 <= 0x40 }.count
        // A row crossing a glyph: dark (outline), near-white (the stroke), dark again.
        let framed = white.filter { row in
            guard let stroke = row.indices.first(where: { i in row[i] >= 0xF0 && row[..<i].contains { $0 <= 0x40 } })
            else { return false }
            return row[stroke...].contains { $0 <= 0x40 }
        }.count
        #expect(dark > 500, "dark pixels on white: \(dark)")
        #expect(framed > o.box.height / 3, "rows with a framed white stroke: \(framed) of \(o.box.height)")
        let black = levels(on: 0xFF00_0000)
        #expect(black.joined().filter { $0 >= 0xF0 }.count > 500, "near-white pixels on black")
    }
}
