// SPDX-License-Identifier: Apache-2.0
// The touch path's fuzz target: arbitrary evdev event streams through the TouchDecoder and the
// GestureRecognizer, as TouchInput and the frame loop chain them.
import KioskCore
import KioskInput

/// A little reader over the fuzz input; past its end it reads zeros.
struct ByteReader {
    let data: [UInt8]
    var offset = 0
    var atEnd: Bool { offset >= data.count }
    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return offset < data.count ? data[offset] : 0
    }
    mutating func int32() -> Int32 {
        var v: UInt32 = 0
        for i in 0 ..< 4 { v |= UInt32(byte()) << (8 * i) }
        return Int32(bitPattern: v)
    }
}

/// The device: 8 header bytes give its protocol (single touch with BTN_TOUCH or BTN_LEFT,
/// multitouch A with or without BTN_TOUCH, multitouch B with 1-16 slots), its axis ranges
/// (any, empty and reversed included), the rotation and the panel size.
func fuzzDevice(_ r: inout ByteReader) -> (InputCapabilities, TouchMapping, keysDown: Set<UInt16>) {
    let kind = r.byte() % 5
    let slots = Int32(r.byte() % 16)
    let rotation = Rotation.allCases[Int(r.byte() % 4)]
    let minimum = Int32(Int8(bitPattern: r.byte())) * 16
    let maximum = Int32(r.byte()) * 32 + Int32(r.byte())
    let panel = Int(r.byte() % 4)
    let flags = r.byte()
    let axis = AbsoluteAxis(minimum: minimum, maximum: maximum, resolution: Int32(flags >> 4))
    var keys: Set<UInt16> = []
    var abs: [UInt16: AbsoluteAxis] = [:]
    switch kind {
    case 0, 1:
        keys = [kind == 0 ? Evdev.BTN_TOUCH : Evdev.BTN_LEFT]
        abs = [Evdev.ABS_X: axis, Evdev.ABS_Y: axis]
    case 2, 3:
        if kind == 2 { keys = [Evdev.BTN_TOUCH] }
        abs = [Evdev.ABS_MT_POSITION_X: axis, Evdev.ABS_MT_POSITION_Y: axis]
    default:
        keys = [Evdev.BTN_TOUCH]
        abs = [Evdev.ABS_X: axis, Evdev.ABS_Y: axis, Evdev.ABS_MT_POSITION_X: axis, Evdev.ABS_MT_POSITION_Y: axis,
               Evdev.ABS_MT_SLOT: AbsoluteAxis(minimum: 0, maximum: slots),
               Evdev.ABS_MT_TRACKING_ID: AbsoluteAxis(minimum: 0, maximum: 65535)]
    }
    let caps = InputCapabilities(properties: [Evdev.INPUT_PROP_DIRECT], keys: keys, absoluteAxes: abs)
    let sizes = [(800, 480), (1024, 600), (1, 1), (1920, 1080)]
    let mapping = TouchMapping(xAxis: axis, yAxis: axis, rotation: rotation,
                               panelWidth: sizes[panel].0, panelHeight: sizes[panel].1)
    return (caps, mapping, flags & 1 == 1 ? keys : [])
}

/// The next event, 8 bytes: type, code (2), value (4), milliseconds since the last event. Types
/// and codes are drawn mostly from those a touchscreen sends (SYN_REPORT, SYN_MT_REPORT and
/// SYN_DROPPED, BTN_TOUCH/BTN_LEFT, the positions, slot and tracking id), else taken raw.
func fuzzEvent(_ r: inout ByteReader, time: inout Duration) -> EvdevEvent {
    let t = r.byte(), lo = r.byte(), hi = r.byte()
    let value = r.int32()
    time += .milliseconds(Int(r.byte()))
    let rawCode = UInt16(lo) | UInt16(hi) << 8
    let syn = [Evdev.SYN_REPORT, Evdev.SYN_REPORT, Evdev.SYN_MT_REPORT, Evdev.SYN_DROPPED]
    let keys = [Evdev.BTN_TOUCH, Evdev.BTN_LEFT, Evdev.BTN_TOOL_FINGER]
    let axes = [Evdev.ABS_MT_POSITION_X, Evdev.ABS_MT_POSITION_Y, Evdev.ABS_MT_SLOT, Evdev.ABS_MT_TRACKING_ID,
                Evdev.ABS_X, Evdev.ABS_Y]
    switch t % 8 {
    case 0, 5:
        return EvdevEvent(time: time, type: Evdev.EV_SYN, code: hi == 0 ? syn[Int(lo) % syn.count] : rawCode,
                          value: value)
    case 1:
        return EvdevEvent(time: time, type: Evdev.EV_KEY, code: hi == 0 ? keys[Int(lo) % keys.count] : rawCode,
                          value: value)
    case 2, 3, 4:
        return EvdevEvent(time: time, type: Evdev.EV_ABS, code: hi == 0 ? axes[Int(lo) % axes.count] : rawCode,
                          value: value)
    case 6: return EvdevEvent(time: time, type: Evdev.EV_REL, code: rawCode, value: value)
    default: return EvdevEvent(time: time, type: UInt16(t), code: rawCode, value: value)
    }
}

/// Invariants: samples are finite and inside the logical frame, in the order down, move..., up
/// or cancel; the recogniser reports one end per contact, never a tap for a contact it reported
/// dragging, never a drag end without a press, and nothing between contacts.
func fuzzTouch(_ data: [UInt8]) {
    var r = ByteReader(data: data)
    let (caps, mapping, keysDown) = fuzzDevice(&r)
    let showStart = Duration.seconds(1000)
    guard var decoder = TouchDecoder(capabilities: caps, mapping: mapping, showStart: showStart,
                                     keysDown: keysDown) else {
        fuzzFailure("no decoder for \(caps)", data)
    }
    var recognizer = GestureRecognizer(config: .standard(screenWidth: mapping.logicalWidth))
    var time = showStart
    var fingerDown = false
    var contact: (pressed: Bool, dragged: Bool) = (false, false)
    func check(_ samples: [TouchSample]) {
        for s in samples {
            guard s.x.isFinite, s.y.isFinite, s.x >= 0, s.y >= 0,
                  s.x < Double(mapping.logicalWidth), s.y < Double(mapping.logicalHeight) else {
                fuzzFailure("sample outside the \(mapping.logicalWidth)x\(mapping.logicalHeight) frame: \(s)", data)
            }
            switch s.phase {
            case .down: if fingerDown { fuzzFailure("down while a finger is down: \(s)", data) }; fingerDown = true
            case .move: if !fingerDown { fuzzFailure("move without a finger down: \(s)", data) }
            case .up, .cancel:
                if !fingerDown { fuzzFailure("\(s.phase) without a finger down: \(s)", data) }; fingerDown = false
            }
            for g in recognizer.feed(s) { checkGesture(g) }
        }
    }
    func checkGesture(_ g: Gesture) {
        switch g {
        case .pressed:
            if contact.pressed { fuzzFailure("pressed twice without an end", data) }
            contact = (true, false)
        case .dragged(let offset, _):
            guard contact.pressed, offset.isFinite else { fuzzFailure("\(g) outside a contact or not finite", data) }
            contact.dragged = true
        case .dragEnded(let offset, let velocity, _):
            guard contact.pressed, contact.dragged, offset.isFinite, velocity.isFinite else {
                fuzzFailure("\(g) without a drag, outside a contact or not finite", data)
            }
            contact = (false, false)
        case .tap(let x, let y, _):
            guard contact.pressed, !contact.dragged else {
                fuzzFailure("a tap for a contact that was \(contact.dragged ? "dragged" : "not pressed")", data)
            }
            guard x.isFinite, y.isFinite, x >= 0, y >= 0, x < Double(mapping.logicalWidth),
                  y < Double(mapping.logicalHeight) else {
                fuzzFailure("\(g) outside the frame", data)
            }
            contact = (false, false)
        case .released, .cancelled:
            guard contact.pressed else { fuzzFailure("\(g) outside a contact", data) }
            contact = (false, false)
        }
    }
    while !r.atEnd {
        check(decoder.feed(fuzzEvent(&r, time: &time)))
    }
    check(decoder.cancel(at: time + .milliseconds(1)))
    for g in recognizer.cancel(at: time - showStart + .milliseconds(1)) { checkGesture(g) }
    if fingerDown || contact.pressed { fuzzFailure("a contact left open after cancel", data) }
}
