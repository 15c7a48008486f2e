// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskCore
import KioskInput

/// Synthetic streams, 0..1023 x 0..1023 devices on a 1024x1024 panel, so (with the mapping's
/// `(v - min) / (max - min)`) a device unit is 1024/1023 px.
@Suite struct TouchDecoderTests {
    static let axis = AbsoluteAxis(minimum: 0, maximum: 1023)
    static func px(_ v: Int32) -> Double { Double(v) * 1024 / 1023 }

    static let protocolB = InputCapabilities(
        properties: [Evdev.INPUT_PROP_DIRECT], keys: [Evdev.BTN_TOUCH],
        absoluteAxes: [Evdev.ABS_X: axis, Evdev.ABS_Y: axis, Evdev.ABS_MT_SLOT: AbsoluteAxis(minimum: 0, maximum: 9),
                       Evdev.ABS_MT_POSITION_X: axis, Evdev.ABS_MT_POSITION_Y: axis,
                       Evdev.ABS_MT_TRACKING_ID: AbsoluteAxis(minimum: 0, maximum: 65535)])

    func decoder(_ caps: InputCapabilities, rotation: Rotation = .none,
                 keysDown: Set<UInt16> = []) throws -> TouchDecoder {
        let axes = try #require(caps.positionAxes)
        let m = TouchMapping(xAxis: axes.x, yAxis: axes.y, rotation: rotation, panelWidth: 1024, panelHeight: 1024)
        return try #require(TouchDecoder(capabilities: caps, mapping: m, showStart: .seconds(100), keysDown: keysDown))
    }

    func expectSample(_ s: TouchSample?, _ phase: TouchSample.Phase, _ x: Int32, _ y: Int32,
                      sourceLocation: SourceLocation = #_sourceLocation) {
        guard let s else { Issue.record("no sample", sourceLocation: sourceLocation); return }
        #expect(s.phase == phase, sourceLocation: sourceLocation)
        #expect(abs(s.x - Self.px(x)) < 1e-9 && abs(s.y - Self.px(y)) < 1e-9, "\(s)", sourceLocation: sourceLocation)
    }

    // MARK: single-touch

    @Test func btnLeftOnlyAbsoluteDevice() throws {
        // QEMU usb-tablet / virtio-tablet / eGalax: no BTN_TOUCH, the left button says "touching".
        let caps = InputCapabilities(keys: [Evdev.BTN_LEFT, 0x111, 0x112],
                                     absoluteAxes: [Evdev.ABS_X: Self.axis, Evdev.ABS_Y: Self.axis],
                                     relativeAxes: [0x08])
        var d = try decoder(caps)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_X, 100); b.abs(Evdev.ABS_Y, 200)
        #expect(d.feed(b.report()).isEmpty)  // hovering pointer: nothing
        b.key(Evdev.BTN_LEFT, 1)
        let down = d.feed(b.report())
        #expect(down.count == 1)
        expectSample(down.first, .down, 100, 200)
        #expect(down.first?.time == .zero + .milliseconds(10))
        b.abs(Evdev.ABS_X, 150)
        expectSample(d.feed(b.report()).first, .move, 150, 200)
        b.key(Evdev.BTN_LEFT, 0); b.abs(Evdev.ABS_X, 900)  // moved in the release frame: still up at the last position
        let up = d.feed(b.report())
        #expect(up.count == 1)
        expectSample(up.first, .up, 150, 200)
        b.abs(Evdev.ABS_Y, 300)
        #expect(d.feed(b.report()).isEmpty)
        #expect(!d.isTouching)
    }

    @Test func singleTouchBtnTouch() throws {
        let caps = InputCapabilities(keys: [Evdev.BTN_TOUCH],
                                     absoluteAxes: [Evdev.ABS_X: Self.axis, Evdev.ABS_Y: Self.axis])
        var d = try decoder(caps)
        var b = StreamBuilder()
        b.key(Evdev.BTN_TOUCH, 1); b.abs(Evdev.ABS_X, 10); b.abs(Evdev.ABS_Y, 20)
        expectSample(d.feed(b.report()).first, .down, 10, 20)
        b.abs(Evdev.ABS_Y, 40)  // only Y changes: X persists
        expectSample(d.feed(b.report()).first, .move, 10, 40)
        b.key(Evdev.BTN_TOUCH, 0)
        expectSample(d.feed(b.report()).first, .up, 10, 40)
    }

    // MARK: protocol B

    @Test func multitouchOnlyDeviceWithNoKeys() throws {
        var caps = Self.protocolB
        caps.keys = []
        caps.absoluteAxes[Evdev.ABS_X] = nil; caps.absoluteAxes[Evdev.ABS_Y] = nil
        var d = try decoder(caps)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_TRACKING_ID, 4711); b.abs(Evdev.ABS_MT_POSITION_X, 300); b.abs(Evdev.ABS_MT_POSITION_Y, 400)
        expectSample(d.feed(b.report()).first, .down, 300, 400)
        b.abs(Evdev.ABS_MT_POSITION_X, 310)
        expectSample(d.feed(b.report()).first, .move, 310, 400)
        b.abs(Evdev.ABS_MT_TRACKING_ID, -1)
        expectSample(d.feed(b.report()).first, .up, 310, 400)
    }

    @Test func trackingIDsOtherThanZeroAndSlotSentOnlyWhenItChanges() throws {
        var caps = Self.protocolB
        caps.absoluteAxes[Evdev.ABS_MT_SLOT]!.value = 3  // the device's current slot at open
        var d = try decoder(caps)
        var b = StreamBuilder()
        // First finger in slot 3: no ABS_MT_SLOT event, since the slot did not change.
        b.abs(Evdev.ABS_MT_TRACKING_ID, 1234); b.abs(Evdev.ABS_MT_POSITION_X, 500); b.abs(Evdev.ABS_MT_POSITION_Y, 500)
        b.key(Evdev.BTN_TOUCH, 1)
        expectSample(d.feed(b.report()).first, .down, 500, 500)
        // Second finger in slot 0, far away: ignored.
        b.abs(Evdev.ABS_MT_SLOT, 0); b.abs(Evdev.ABS_MT_TRACKING_ID, 1235)
        b.abs(Evdev.ABS_MT_POSITION_X, 50); b.abs(Evdev.ABS_MT_POSITION_Y, 60)
        #expect(d.feed(b.report()).isEmpty)
        // The slot stays 0 across frames: this moves the second finger, not the first.
        b.abs(Evdev.ABS_MT_POSITION_X, 70)
        #expect(d.feed(b.report()).isEmpty)
        // Back to slot 3: the driving finger moves.
        b.abs(Evdev.ABS_MT_SLOT, 3); b.abs(Evdev.ABS_MT_POSITION_Y, 520)
        expectSample(d.feed(b.report()).first, .move, 500, 520)
        // Driving finger lifts (slot 3 current): up at its last position; the other one stays ignored.
        b.abs(Evdev.ABS_MT_TRACKING_ID, -1)
        let up = d.feed(b.report())
        #expect(up.count == 1)
        expectSample(up.first, .up, 500, 520)
        b.abs(Evdev.ABS_MT_SLOT, 0); b.abs(Evdev.ABS_MT_POSITION_X, 80)
        #expect(d.feed(b.report()).isEmpty)
        // A third finger lands while the second is still down: still nothing (until all are up).
        b.abs(Evdev.ABS_MT_SLOT, 1); b.abs(Evdev.ABS_MT_TRACKING_ID, 1236)
        b.abs(Evdev.ABS_MT_POSITION_X, 900); b.abs(Evdev.ABS_MT_POSITION_Y, 900)
        #expect(d.feed(b.report()).isEmpty)
        b.abs(Evdev.ABS_MT_TRACKING_ID, -1); b.abs(Evdev.ABS_MT_SLOT, 0); b.abs(Evdev.ABS_MT_TRACKING_ID, -1)
        b.key(Evdev.BTN_TOUCH, 0)
        #expect(d.feed(b.report()).isEmpty)
        // All up: the next finger drives, in slot 0 (current), at a position the kernel did not
        // repeat (x stays 80 from the slot's last contact).
        b.abs(Evdev.ABS_MT_TRACKING_ID, 1237); b.abs(Evdev.ABS_MT_POSITION_Y, 100); b.key(Evdev.BTN_TOUCH, 1)
        expectSample(d.feed(b.report()).first, .down, 80, 100)
    }

    @Test func releaseByBtnTouchWithoutTrackingIDMinusOne() throws {
        var d = try decoder(Self.protocolB)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_TRACKING_ID, 9); b.abs(Evdev.ABS_MT_POSITION_X, 200); b.abs(Evdev.ABS_MT_POSITION_Y, 300)
        b.key(Evdev.BTN_TOUCH, 1)
        expectSample(d.feed(b.report()).first, .down, 200, 300)
        b.abs(Evdev.ABS_MT_POSITION_X, 210)
        expectSample(d.feed(b.report()).first, .move, 210, 300)
        b.key(Evdev.BTN_TOUCH, 0)  // the driver forgot ABS_MT_TRACKING_ID -1
        expectSample(d.feed(b.report()).first, .up, 210, 300)
        #expect(!d.isTouching)
        b.abs(Evdev.ABS_MT_POSITION_X, 400)
        #expect(d.feed(b.report()).isEmpty)
        // Next touch reuses tracking ID 9: the kernel filters the unchanged value, only BTN_TOUCH comes.
        b.key(Evdev.BTN_TOUCH, 1); b.abs(Evdev.ABS_MT_POSITION_Y, 500)
        expectSample(d.feed(b.report()).first, .down, 400, 500)
        b.abs(Evdev.ABS_MT_TRACKING_ID, -1); b.key(Evdev.BTN_TOUCH, 0)
        expectSample(d.feed(b.report()).first, .up, 400, 500)
    }

    @Test func outOfRangeGhostValuesDoNotJump() throws {
        var d = try decoder(Self.protocolB)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_TRACKING_ID, 1); b.abs(Evdev.ABS_MT_POSITION_X, 500); b.abs(Evdev.ABS_MT_POSITION_Y, 500)
        b.key(Evdev.BTN_TOUCH, 1)
        _ = d.feed(b.report())
        b.abs(Evdev.ABS_MT_POSITION_X, 65535); b.abs(Evdev.ABS_MT_POSITION_Y, 510)  // ghost x
        expectSample(d.feed(b.report()).first, .move, 500, 510)
        b.abs(Evdev.ABS_MT_POSITION_Y, 520)  // x is still the ghost in the slot: still ignored
        expectSample(d.feed(b.report()).first, .move, 500, 520)
        b.abs(Evdev.ABS_MT_POSITION_X, -30000)
        #expect(d.feed(b.report()).isEmpty)
        b.abs(Evdev.ABS_MT_POSITION_X, 505)
        expectSample(d.feed(b.report()).first, .move, 505, 520)
        // A small overshoot at the edge is clamped to the edge.
        b.abs(Evdev.ABS_MT_POSITION_X, 1030)
        expectSample(d.feed(b.report()).first, .move, 1023, 520)
        b.abs(Evdev.ABS_MT_POSITION_X, -4)
        expectSample(d.feed(b.report()).first, .move, 0, 520)
        b.abs(Evdev.ABS_MT_TRACKING_ID, -1); b.key(Evdev.BTN_TOUCH, 0)
        expectSample(d.feed(b.report()).first, .up, 0, 520)
    }

    @Test func synDroppedThenLibevdevDeltaEndsTheTouch() throws {
        var d = try decoder(Self.protocolB)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_TRACKING_ID, 5); b.abs(Evdev.ABS_MT_POSITION_X, 100); b.abs(Evdev.ABS_MT_POSITION_Y, 100)
        b.key(Evdev.BTN_TOUCH, 1)
        _ = d.feed(b.report())
        // Half a frame, then the kernel's buffer overflows: the half frame is discarded...
        b.abs(Evdev.ABS_MT_POSITION_X, 999)
        b.dropped()
        // ...and libevdev hands over the delta to the current state: the finger left, another one
        // came and went; the axis values it reports belong to no contact.
        b.abs(Evdev.ABS_MT_SLOT, 0); b.abs(Evdev.ABS_MT_TRACKING_ID, -1); b.abs(Evdev.ABS_MT_POSITION_X, 700)
        b.abs(Evdev.ABS_MT_SLOT, 0); b.key(Evdev.BTN_TOUCH, 0)
        let out = d.feed(b.report())
        #expect(out.count == 1)
        expectSample(out.first, .up, 100, 100)
        #expect(!d.isTouching)
        // Consistent afterwards: the next touch is a normal down.
        b.abs(Evdev.ABS_MT_TRACKING_ID, 6); b.abs(Evdev.ABS_MT_POSITION_Y, 300); b.key(Evdev.BTN_TOUCH, 1)
        expectSample(d.feed(b.report()).first, .down, 700, 300)
    }

    @Test func synDroppedWithTheFingerStillDownMoves() throws {
        var d = try decoder(Self.protocolB)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_TRACKING_ID, 5); b.abs(Evdev.ABS_MT_POSITION_X, 100); b.abs(Evdev.ABS_MT_POSITION_Y, 100)
        b.key(Evdev.BTN_TOUCH, 1)
        _ = d.feed(b.report())
        b.abs(Evdev.ABS_MT_POSITION_X, 999); b.abs(Evdev.ABS_MT_SLOT, 1)
        b.dropped()
        b.abs(Evdev.ABS_MT_SLOT, 0); b.abs(Evdev.ABS_MT_POSITION_X, 400); b.abs(Evdev.ABS_MT_SLOT, 0)
        expectSample(d.feed(b.report()).first, .move, 400, 100)
        // The tracking ID changed during the drop: libevdev sends -1 then the new ID. The old touch
        // ends; the new one is a new touch (all other fingers are up).
        b.dropped()
        b.abs(Evdev.ABS_MT_TRACKING_ID, -1)
        #expect(d.feed(b.report()).map(\.phase) == [.up])
        b.abs(Evdev.ABS_MT_TRACKING_ID, 8); b.abs(Evdev.ABS_MT_POSITION_X, 600)
        expectSample(d.feed(b.report()).first, .down, 600, 100)
    }

    @Test func trackingIDReplacedInOneFrame() throws {
        var d = try decoder(Self.protocolB)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_TRACKING_ID, 5); b.abs(Evdev.ABS_MT_POSITION_X, 100); b.abs(Evdev.ABS_MT_POSITION_Y, 100)
        b.key(Evdev.BTN_TOUCH, 1)
        _ = d.feed(b.report())
        b.abs(Evdev.ABS_MT_TRACKING_ID, 6); b.abs(Evdev.ABS_MT_POSITION_X, 800)
        let out = d.feed(b.report())
        #expect(out.count == 2)
        expectSample(out.first, .up, 100, 100)
        expectSample(out.last, .down, 800, 100)
    }

    @Test func fingersAlreadyDownAtStartAreWaitedOut() throws {
        let axes = try #require(Self.protocolB.positionAxes)
        let m = TouchMapping(xAxis: axes.x, yAxis: axes.y, panelWidth: 1024, panelHeight: 1024)
        var d = try #require(TouchDecoder(capabilities: Self.protocolB, mapping: m, showStart: .zero,
                                          keysDown: [Evdev.BTN_TOUCH], slots: [SlotState(trackingID: 3, x: 10, y: 10)]))
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_POSITION_X, 20)
        #expect(d.feed(b.report()).isEmpty)
        b.abs(Evdev.ABS_MT_TRACKING_ID, -1); b.key(Evdev.BTN_TOUCH, 0)
        #expect(d.feed(b.report()).isEmpty)
        b.abs(Evdev.ABS_MT_TRACKING_ID, 4); b.key(Evdev.BTN_TOUCH, 1)
        expectSample(d.feed(b.report()).first, .down, 20, 10)
    }

    @Test func cancelEndsTheTouch() throws {
        var d = try decoder(Self.protocolB)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_TRACKING_ID, 5); b.abs(Evdev.ABS_MT_POSITION_X, 100); b.abs(Evdev.ABS_MT_POSITION_Y, 100)
        b.key(Evdev.BTN_TOUCH, 1)
        _ = d.feed(b.report())
        let out = d.cancel(at: .seconds(101))
        #expect(out.count == 1)
        expectSample(out.first, .cancel, 100, 100)
        #expect(out.first?.time == .seconds(1))
        #expect(d.cancel(at: .seconds(102)).isEmpty)
    }

    // MARK: protocol A

    static let protocolA = InputCapabilities(
        keys: [Evdev.BTN_TOUCH, 0x14d],
        absoluteAxes: [Evdev.ABS_X: axis, Evdev.ABS_Y: axis, Evdev.ABS_MT_POSITION_X: axis,
                       Evdev.ABS_MT_POSITION_Y: axis])

    func contact(_ b: inout StreamBuilder, _ x: Int32, _ y: Int32) {
        b.abs(Evdev.ABS_MT_POSITION_X, x); b.abs(Evdev.ABS_MT_POSITION_Y, y); b.mtReport()
    }

    @Test func protocolAFirstFingerDrivesAndEmptyFrameReleases() throws {
        var d = try decoder(Self.protocolA)
        var b = StreamBuilder()
        contact(&b, 100, 100); b.key(Evdev.BTN_TOUCH, 1)
        expectSample(d.feed(b.report()).first, .down, 100, 100)
        // A second finger, listed first in the frame: the driver is matched by distance.
        contact(&b, 800, 800); contact(&b, 105, 102)
        expectSample(d.feed(b.report()).first, .move, 105, 102)
        contact(&b, 110, 104); contact(&b, 790, 800)
        expectSample(d.feed(b.report()).first, .move, 110, 104)
        // The driver lifts; the other finger must not take over (no jump to 790, 800).
        contact(&b, 780, 800)
        expectSample(d.feed(b.report()).first, .up, 110, 104)
        contact(&b, 770, 800)
        #expect(d.feed(b.report()).isEmpty)
        // Empty frame (only SYN_MT_REPORT): all up. Nothing to report, the driver is gone already.
        b.mtReport()
        #expect(d.feed(b.report()).isEmpty)
        // A new touch, released by an empty frame: up at the last position, never at 0,0.
        contact(&b, 300, 400)
        expectSample(d.feed(b.report()).first, .down, 300, 400)
        contact(&b, 320, 410)
        _ = d.feed(b.report())
        b.mtReport()
        expectSample(d.feed(b.report()).first, .up, 320, 410)
    }

    @Test func protocolAReleaseByBtnTouch() throws {
        var d = try decoder(Self.protocolA)
        var b = StreamBuilder()
        contact(&b, 100, 200); b.key(Evdev.BTN_TOUCH, 1); b.key(0x14d, 1)
        expectSample(d.feed(b.report()).first, .down, 100, 200)
        b.key(0x14d, 0); b.key(Evdev.BTN_TOUCH, 0)  // N-Trig's last frame: keys only
        expectSample(d.feed(b.report()).first, .up, 100, 200)
    }

    // MARK: rotation end to end

    @Test(arguments: [
        (Rotation.none, (Int32(800), Int32(512)), (Int32(200), Int32(512))),
        (Rotation.clockwise90, (Int32(512), Int32(800)), (Int32(512), Int32(200))),
        (Rotation.upsideDown, (Int32(200), Int32(512)), (Int32(800), Int32(512))),
        (Rotation.clockwise270, (Int32(512), Int32(200)), (Int32(512), Int32(800))),
    ])
    func swipeLeftOnEveryRotation(_ rotation: Rotation, _ from: (Int32, Int32), _ to: (Int32, Int32)) throws {
        var d = try decoder(Self.protocolB, rotation: rotation)
        var b = StreamBuilder()
        b.abs(Evdev.ABS_MT_TRACKING_ID, 77)
        b.abs(Evdev.ABS_MT_POSITION_X, from.0); b.abs(Evdev.ABS_MT_POSITION_Y, from.1)
        b.key(Evdev.BTN_TOUCH, 1)
        var samples = d.feed(b.report())
        for step in 1 ... 10 {
            b.abs(Evdev.ABS_MT_POSITION_X, from.0 + (to.0 - from.0) * Int32(step) / 10)
            b.abs(Evdev.ABS_MT_POSITION_Y, from.1 + (to.1 - from.1) * Int32(step) / 10)
            samples += d.feed(b.report())
        }
        b.abs(Evdev.ABS_MT_TRACKING_ID, -1); b.key(Evdev.BTN_TOUCH, 0)
        samples += d.feed(b.report())
        #expect(samples.first?.phase == .down && samples.last?.phase == .up && samples.count == 12)
        for (a, c) in zip(samples, samples.dropFirst()) where c.phase == .move {
            #expect(c.x < a.x)
            #expect(abs(c.y - a.y) < 1e-9)
        }
        // 600 device units of 1024 px / 1023 units.
        #expect(abs((samples.first!.x - samples.last!.x) - 600 * 1024 / 1023) < 1e-6)
    }
}
