// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore
import KioskInput

/// Real recordings (whot/evemu-devices) replayed through the decoder with each device's own
/// ranges, onto a 1280x800 screen.
@Suite struct EvemuRecordingTests {
    func distance(_ a: TouchSample, _ b: TouchSample) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }

    @Test func atmelFastTapsAreNineShortTouches() throws {
        let replay = try Replay("Atmel maXTouch Touchscreen.1-finger-fast-taps.events")
        let touches = replay.touches
        // The file holds nine touches (tracking IDs 3 ... 11), each lifted 82-110 ms after landing.
        #expect(touches.count == 9)
        for touch in touches {
            #expect(touch.first?.phase == .down && touch.last?.phase == .up)
            let duration = touch.last!.time - touch.first!.time
            #expect(duration > .zero && duration < .milliseconds(300), "\(duration)")
            let wander = touch.map { distance($0, touch.first!) }.max()!
            #expect(wander < 10, "\(wander) px")
        }
        #expect(replay.samples.filter { $0.phase == .down }.count == 9)
    }

    @Test func atmelDragUpDownIsVertical() throws {
        let replay = try Replay("Atmel maXTouch Touchscreen.1-finger-drag-up-down.events")
        #expect(replay.samples.filter { $0.phase == .down }.count == 1)
        #expect(replay.samples.last?.phase == .up)
        var dx = 0.0, dy = 0.0
        for (a, b) in zip(replay.samples, replay.samples.dropFirst()) { dx += abs(b.x - a.x); dy += abs(b.y - a.y) }
        #expect(dy > 5 * dx, "dx \(dx) dy \(dy)")
        let ys = replay.samples.map(\.y)
        #expect(ys.max()! - ys.min()! > 300)  // up and down over most of the 800x480 panel's height
    }

    @Test func nTrigProtocolADragIsTrackedToItsEnd() throws {
        let replay = try Replay("N-Trig MultiTouch.1-finger-drag-NW-SE.events")
        let s = replay.samples
        #expect(s.filter { $0.phase == .down }.count == 1)
        #expect(s.filter { $0.phase == .up }.count == 1)
        let first = try #require(s.first), up = try #require(s.last), lastMove = s[s.count - 2]
        #expect(first.phase == .down && up.phase == .up)
        // Up at the last position (the last contact, x 9369 y 6967 of 0..9600 x 0..7200), not 0,0.
        #expect(up.x == lastMove.x && up.y == lastMove.y)
        let expected = replay.mapping.logicalPoint(deviceX: 9369, deviceY: 6967)
        #expect(abs(up.x - expected.x) < 1e-9 && abs(up.y - expected.y) < 1e-9)
        #expect(up.x > first.x + 800 && up.y > first.y + 500)  // NW to SE across most of the screen
        #expect(s.count > 90)
    }

    /// Every recording: touches alternate down ... up, samples stay on the screen, time never
    /// goes back, and with several fingers only one drives: no sample jumps further than a
    /// finger moves in one frame, and no touch starts before the previous one ended.
    @Test func everyRecordingGivesOneDrivingFingerWithoutJumps() throws {
        var report: [String] = []
        for name in try Evemu.recordings() {
            let replay = try Replay(name)
            var down = false, maxStep = 0.0
            var previous: TouchSample?
            for s in replay.samples {
                switch s.phase {
                case .down: #expect(!down, "\(name): down while down"); down = true
                case .move: #expect(down, "\(name): move while up")
                case .up: #expect(down, "\(name): up while up"); down = false
                case .cancel: Issue.record("\(name): a cancel from a recording that was not cut off")
                }
                #expect(s.x >= 0 && s.x < 1280 && s.y >= 0 && s.y < 800)
                if let p = previous {
                    #expect(s.time >= p.time)
                    if s.phase != .down { maxStep = max(maxStep, distance(p, s)) }
                }
                previous = s
            }
            #expect(!down, "\(name): ends with a finger down")
            #expect(replay.samples.count > 0, "\(name)")
            // A finger covers at most ~100 px of this screen in one 10-20 ms report.
            #expect(maxStep < 120, "\(name): step of \(maxStep) px")
            report.append("\(name): \(replay.touches.count) touches, \(replay.samples.count) samples, "
                          + "max step \(Int(maxStep)) px")
        }
        print(report.joined(separator: "\n"))
    }

    /// Protocol B multi-finger recordings, checked against a plain slot tracker written here: every
    /// `.down`/`.move` sits exactly on the first finger's own slot position, while other fingers
    /// are on the glass far enough away that a switch to them would show.
    @Test(arguments: ["Atmel maXTouch Touchscreen.4-finger-drag-down.events", "EP0430M09.4-finger-drag-down.events",
                      "EP0430M09.2-finger-scroll-down.events",
                      "Atmel maXTouch Touchscreen.2-fingers-touch-release.events",
                      "EP0430M09.2-fingers-touch-release.events"])
    func protocolBSamplesSitOnTheFirstFinger(_ name: String) throws {
        let replay = try Replay(name)
        var slot = 0
        var ids: [Int: Int32] = [:], xs: [Int: Int32] = [:], ys: [Int: Int32] = [:]
        var firstID: Int32?, firstSlot = 0
        var frame = 0, mostFingers = 0, farthestOther = 0.0
        for event in replay.events {
            if event.type == Evdev.EV_ABS {
                switch event.code {
                case Evdev.ABS_MT_SLOT: slot = Int(event.value)
                case Evdev.ABS_MT_TRACKING_ID: ids[slot] = event.value
                case Evdev.ABS_MT_POSITION_X: xs[slot] = event.value
                case Evdev.ABS_MT_POSITION_Y: ys[slot] = event.value
                default: break
                }
            }
            guard event.type == Evdev.EV_SYN && event.code == Evdev.SYN_REPORT else { continue }
            let active = ids.filter { $0.value >= 0 }
            if firstID == nil, let lowest = active.keys.min() { firstID = active[lowest]; firstSlot = lowest }
            mostFingers = max(mostFingers, active.count)
            if let id = firstID, ids[firstSlot] == id {
                let p = replay.mapping.logicalPoint(deviceX: Double(xs[firstSlot]!), deviceY: Double(ys[firstSlot]!))
                for s in replay.frames[frame] where s.phase != .up {
                    #expect(abs(s.x - p.x) < 1e-9 && abs(s.y - p.y) < 1e-9, "\(name) frame \(frame)")
                }
                for (other, _) in active where other != firstSlot {
                    let q = replay.mapping.logicalPoint(deviceX: Double(xs[other]!), deviceY: Double(ys[other]!))
                    farthestOther = max(farthestOther,
                                        ((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)).squareRoot())
                }
            } else {
                // The first finger is gone: only its .up may come, and nothing after it.
                #expect(replay.frames[frame].allSatisfy { $0.phase == .up }, "\(name) frame \(frame)")
            }
            frame += 1
        }
        #expect(mostFingers >= 2, "\(name)")
        #expect(farthestOther > 120, "\(name): other fingers at most \(farthestOther) px away")
        #expect(replay.samples.filter { $0.phase == .down }.count == 1)
    }

    /// The multi-finger recordings have frames where the driving finger is not the one the
    /// kernel's pointer emulation (ABS_X/ABS_Y) follows; check against the slot contents directly.
    @Test func multiFingerRecordingsFollowTheFirstFinger() throws {
        for name in ["Atmel maXTouch Touchscreen.4-finger-drag-down.events", "EP0430M09.4-finger-drag-down.events",
                     "EP0430M09.2-finger-scroll-down.events",
                     "Atmel maXTouch Touchscreen.2-fingers-touch-release.events",
                     "EP0430M09.2-fingers-touch-release.events", "N-Trig MultiTouch.2-fingers-touch-release.events"] {
            let replay = try Replay(name)
            let downs = replay.samples.filter { $0.phase == .down }.count
            #expect(downs >= 1 && downs == replay.samples.filter { $0.phase == .up }.count, "\(name)")
            // Only one touch is reported even though several fingers land at once.
            #expect(downs <= 2, "\(name): \(downs) touches")
        }
    }
}
