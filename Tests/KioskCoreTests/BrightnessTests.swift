// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskCore

private func hm(_ h: Int, _ m: Int) -> Int { h * 60 + m }
private func ms(_ v: Int) -> Duration { .milliseconds(v) }

@Suite struct BrightnessTiersTests {
    @Test func parsesTiersInAnyOrderAndPrintsThemBack() throws {
        let t = try BrightnessTiers.parse("23:00=off, 07:00=100,20:00 = 40%")
        #expect(t.tiers == [.init(start: hm(7, 0), level: .percent(100)), .init(start: hm(20, 0), level: .percent(40)),
                            .init(start: hm(23, 0), level: .off)])
        #expect(t.description == "07:00=100,20:00=40,23:00=off")
        #expect(try BrightnessTiers.parse(t.description) == t)
        #expect(try BrightnessTiers.parse("7:30=1").tiers == [.init(start: 450, level: .percent(1))])
    }

    @Test func refusesBadValuesNamingThem() {
        #expect(throws: BrightnessTiersError.empty) { try BrightnessTiers.parse(" ") }
        #expect(throws: BrightnessTiersError.badTier("07:00")) { try BrightnessTiers.parse("07:00") }
        #expect(throws: BrightnessTiersError.badTier("07:00=5=6")) { try BrightnessTiers.parse("07:00=5=6") }
        #expect(throws: BrightnessTiersError.badTier("")) { try BrightnessTiers.parse("07:00=50,") }
        #expect(throws: BrightnessTiersError.badTime("24:00", tier: "24:00=50")) {
            try BrightnessTiers.parse("24:00=50")
        }
        #expect(throws: BrightnessTiersError.badTime("7", tier: "7=50")) { try BrightnessTiers.parse("7=50") }
        #expect(throws: BrightnessTiersError.badLevel("0", tier: "07:00=0")) { try BrightnessTiers.parse("07:00=0") }
        #expect(throws: BrightnessTiersError.badLevel("101", tier: "07:00=101")) {
            try BrightnessTiers.parse("07:00=101")
        }
        #expect(throws: BrightnessTiersError.badLevel("4.5", tier: "07:00=4.5")) {
            try BrightnessTiers.parse("07:00=4.5")
        }
        #expect(throws: BrightnessTiersError.badLevel("dim", tier: "07:00=dim")) {
            try BrightnessTiers.parse("07:00=dim")
        }
        #expect(throws: BrightnessTiersError.sameTime("07:00")) { try BrightnessTiers.parse("07:00=50,7:00=60") }
        #expect(throws: BrightnessTiersError.allOff) { try BrightnessTiers.parse("23:00=off") }
        #expect(BrightnessTiersError.badLevel("0", tier: "07:00=0").description.contains("1 ... 100, or off"))
    }

    @Test func eachTierHoldsUntilTheNextAndTheLastRunsPastMidnight() throws {
        let t = try BrightnessTiers.parse("07:00=100,20:00=40,23:00=off")
        #expect(t.level(atMinute: hm(6, 59)) == .off)
        #expect(t.level(atMinute: hm(7, 0)) == .percent(100))
        #expect(t.level(atMinute: hm(19, 59)) == .percent(100))
        #expect(t.level(atMinute: hm(20, 0)) == .percent(40))
        #expect(t.level(atMinute: hm(23, 30)) == .off)
        #expect(t.level(atMinute: hm(0, 0)) == .off)
        // One tier: that level all day, never a change.
        let one = try BrightnessTiers.parse("12:00=60")
        #expect(one.level(atMinute: 0) == .percent(60) && one.minutesUntilChange(from: 5) == nil)
    }

    @Test func theNextChangeIsTheNextTierOfAnotherLevel() throws {
        let t = try BrightnessTiers.parse("07:00=100,12:00=100,20:00=40")
        #expect(t.minutesUntilChange(from: hm(6, 0)) == 60)         // 40 -> 100 at 07:00
        #expect(t.minutesUntilChange(from: hm(7, 0)) == hm(13, 0))  // 12:00 is 100 too: 20:00
        #expect(t.minutesUntilChange(from: hm(21, 0)) == hm(10, 0)) // past midnight to 07:00
        #expect(t.secondsUntilChange(minuteOfDay: hm(19, 59), second: 30) == 30)
        // Walk two days from change to change against a minute-by-minute look.
        var minute = hm(3, 17), changes: [Int] = [], brute: [Int] = []
        while let step = t.minutesUntilChange(from: minute), minute + step <= hm(3, 17) + 2 * 1440 {
            minute += step
            changes.append(minute)
        }
        var level = t.level(atMinute: hm(3, 17))
        for m in (hm(3, 17) + 1)...(hm(3, 17) + 2 * 1440) where t.level(atMinute: m) != level {
            level = t.level(atMinute: m)
            brute.append(m)
        }
        #expect(changes == brute && changes.count == 4)
    }

    @Test func offTiersAreDisplayOffRanges() throws {
        let t = try BrightnessTiers.parse("07:00=100,20:00=40,23:00=off")
        #expect(t.offSchedule == DisplaySchedule(ranges: [.init(start: hm(23, 0), end: hm(7, 0))]))
        let u = try BrightnessTiers.parse("00:00=off,06:00=80,12:00=off,13:00=80")
        #expect(u.offSchedule?.description == "00:00-06:00,12:00-13:00")
        let v = try BrightnessTiers.parse("00:00=80,22:00=off")
        #expect(v.offSchedule?.description == "22:00-24:00")
        #expect(v.offSchedule?.isOff(minuteOfDay: hm(23, 59)) == true && v.offSchedule?.isOff(minuteOfDay: 0) == false)
        #expect(try BrightnessTiers.parse("07:00=100").offSchedule == nil)
    }
}

@Suite struct BrightnessRampTests {
    @Test func aChangeEasesFromTheLevelNowToTheTargetOverTheDuration() {
        var r = BrightnessRamp(level: 1000)
        #expect(r.level(at: .zero) == 1000 && !r.isChanging(at: .zero) && r.nextStep(after: .zero) == nil)
        r.go(to: 400, at: ms(1000))
        #expect(r.level(at: ms(1000)) == 1000)
        #expect(r.level(at: ms(1750)) == 700)   // the eased midpoint
        #expect(r.level(at: ms(2500)) == 400 && !r.isChanging(at: ms(2500)))
        // Falls the whole way, never past the target.
        var previous = 1001
        var t = ms(1000)
        var steps = 0
        while let next = r.nextStep(after: t) {
            #expect(next - t <= BrightnessRamp.stepInterval)
            t = next
            steps += 1
            let level = r.level(at: t)
            #expect(level <= previous && level >= 400)
            previous = level
        }
        #expect(steps == 30 && previous == 400)
    }

    @Test func aNewTargetMidwayStartsFromWhereTheLevelIs() {
        var r = BrightnessRamp(level: 1000)
        r.go(to: 0, at: .zero)
        let midway = r.level(at: ms(750))
        r.go(to: 1000, at: ms(750), over: ms(1000))
        #expect(r.level(at: ms(750)) == midway && r.from == midway)
        #expect(r.level(at: ms(1750)) == 1000)
        // The same target again does not restart it; zero length jumps; a jump ends a change.
        r.go(to: 200, at: ms(2000), over: .zero)
        #expect(r.level(at: ms(2000)) == 200 && !r.isChanging(at: ms(2000)))
        r.go(to: 900, at: ms(3000))
        r.jump(to: 50)
        #expect(r.level(at: ms(3001)) == 50 && r.nextStep(after: ms(3001)) == nil)
    }
}

@Suite struct PixelBrightnessTests {
    @Test func fullIsNoChangeAndZeroIsBlack() {
        #expect(PixelBrightness.full.isFull && PixelBrightness(permille: 1200).isFull)
        let zero = PixelBrightness(permille: 0)
        #expect(zero.table == [UInt8](repeating: 0, count: 256))
        var out: UInt32 = 0
        var p: UInt32 = 0x7F12_3456
        zero.apply(&p, step: 1, to: &out, count: 1)
        #expect(out == 0x7F00_0000, "the top byte is kept")
    }

    @Test func theScaleIsInLinearLight() {
        // sRGB 255 at 40 % of its light: 0.4 ** (1 / 2.4) ... = 170 (not 102, 40 % of the value).
        let forty = PixelBrightness(permille: 400)
        #expect(forty.table![255] == 170)
        // Every value: the table's pick has the nearest linear light, and the table never falls.
        let lin = PixelBrightness.linearLight.map(Double.init)
        for v in 0..<256 {
            let w = Int(forty.table![v]), target = lin[v] * 0.4
            #expect(abs(lin[w] - target) <= abs(lin[max(0, w - 1)] - target))
            #expect(abs(lin[w] - target) <= abs(lin[min(255, w + 1)] - target))
            if v > 0 { #expect(forty.table![v] >= forty.table![v - 1]) }
        }
        #expect(forty.description == "40.0 %")
    }

    @Test func dimScalesEveryPixelOfAFrameOnEveryRow() {
        let frame = Bitmap(width: 7, height: 5, fill: 0xFFFF_8000)
        let out = Bitmap(width: 7, height: 5)
        let half = PixelBrightness(permille: 500)
        half.dim(frame, into: out, rows: nil)
        let expected = 0xFF00_0000 | UInt32(half.table![255]) << 16 | UInt32(half.table![0x80]) << 8
        #expect((0..<35).allSatisfy { out.pixels[$0] == expected })
        // In place, too.
        half.dim(frame, into: frame, rows: nil)
        #expect(frame.pixels[34] == expected)
    }
}
