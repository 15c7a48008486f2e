// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// The state of one multitouch slot (protocol B) when decoding starts, device units; from
/// libevdev (`libevdev_get_slot_value`) when a device is opened.
public struct SlotState: Equatable, Sendable {
    /// ABS_MT_TRACKING_ID: >= 0 while a contact is in the slot, -1 when it is free.
    public var trackingID: Int32
    public var x: Int32
    public var y: Int32

    public init(trackingID: Int32 = -1, x: Int32 = 0, y: Int32 = 0) {
        self.trackingID = trackingID; self.x = x; self.y = y
    }
}

/// Turns raw evdev events into ``KioskCore/TouchSample``s of the driving finger: pure, no I/O,
/// fed one event at a time; a frame is decoded when its `SYN_REPORT` arrives.
///
/// Protocols (Documentation/input/multi-touch-protocol.rst):
/// - **single-touch**: ABS_X/ABS_Y, the finger is down while BTN_TOUCH (or, for absolute devices
///   without it, BTN_LEFT) is 1;
/// - **protocol B**: the current slot persists across frames (the device sends ABS_MT_SLOT only
///   when it changes; it starts at the device's current ABS_MT_SLOT value); a slot holds a contact
///   while its ABS_MT_TRACKING_ID is >= 0 (any such value), -1 frees it; the kernel does not repeat
///   unchanged values, so positions persist per slot. On devices with BTN_TOUCH, BTN_TOUCH 0 also
///   ends every contact (some drivers forget the -1); devices with no keys at all work from the
///   tracking IDs alone;
/// - **protocol A**: no slots; each frame lists every contact, each closed by SYN_MT_REPORT; a frame
///   with no contact (or BTN_TOUCH 0) means all fingers are up. Contacts carry no identity, so each
///   is matched to the nearest one of the previous frame (or by ABS_MT_TRACKING_ID when sent).
///
/// Only the first finger drives: it gives `.down`, `.move`s and `.up`; fingers that land while it
/// is down are ignored, and after it lifts nothing more is reported until every finger is up
/// (so the samples never jump from one finger to another). `.up` is at the last reported position.
///
/// Positions outside an axis's range by up to 1/8 of the range are clamped to it; values further
/// out (ghost values some controllers send) are dropped: the axis keeps its previous position.
///
/// `SYN_DROPPED` discards the incomplete frame; what follows is applied as usual. With libevdev in
/// front (``TouchInput``) that is the delta libevdev generates to bring the state up to date,
/// ending in a `SYN_REPORT`, after which the decoder agrees with the device again.
public struct TouchDecoder: Sendable {
    /// Device units to logical pixels (the panel size changes with the display's).
    public var mapping: TouchMapping
    /// The raw `CLOCK_MONOTONIC` time at which the show started; sample times are relative to it.
    public let showStart: Duration
    /// How the device reports contacts.
    public let touchProtocol: TouchProtocol

    /// A contact at the end of a frame: `serial` identifies it from the frame it began in.
    private struct Contact { var serial: Int; var x: Int32; var y: Int32; var trackingID: Int32? = nil }
    /// The finger that drives, at its last reported position (device units, after range handling).
    private struct Driver { var serial: Int; var x: Double; var y: Double }

    /// The key whose 0 ends every contact (BTN_TOUCH or, single-touch, BTN_LEFT), if the device has one.
    private let touchKey: UInt16?
    private var touchKeyDown = false
    private var pending: [EvdevEvent] = []
    private var nextSerial = 0
    private var driver: Driver?
    private var previousSerials: Set<Int> = []

    // Single-touch.
    private var singleX: Int32 = 0, singleY: Int32 = 0, singleSerial: Int? = nil
    // Protocol B.
    private var slots: [SlotState] = []
    private var slotSerials: [Int] = []
    private var currentSlot = 0
    // Protocol A.
    private var previousA: [Contact] = []
    private var lastAX: Int32 = 0, lastAY: Int32 = 0

    /// - Parameters:
    ///   - capabilities: the device's capabilities; must have a ``InputCapabilities/touchProtocol``
    ///     (returns nil otherwise).
    ///   - mapping: device units to logical pixels (built from the same device's ``InputCapabilities/positionAxes``).
    ///   - showStart: raw `CLOCK_MONOTONIC` time of the show's start.
    ///   - keysDown: keys down when decoding starts (libevdev's state at open); default none.
    ///   - slots: protocol B slot contents when decoding starts; default all free, positions 0.
    ///     Contacts already down are never promoted to driving finger: they are waited out.
    public init?(capabilities: InputCapabilities, mapping: TouchMapping, showStart: Duration,
                 keysDown: Set<UInt16> = [], slots initialSlots: [SlotState] = []) {
        guard let proto = capabilities.touchProtocol else { return nil }
        self.mapping = mapping
        self.showStart = showStart
        self.touchProtocol = proto
        switch proto {
        case .singleTouch(let key):
            touchKey = key
            singleX = capabilities.absoluteAxes[Evdev.ABS_X]?.value ?? 0
            singleY = capabilities.absoluteAxes[Evdev.ABS_Y]?.value ?? 0
        case .multitouchA, .multitouchB:
            touchKey = capabilities.keys.contains(Evdev.BTN_TOUCH) ? Evdev.BTN_TOUCH : nil
        }
        if let key = touchKey { touchKeyDown = keysDown.contains(key) }
        if case .multitouchB(let count) = proto {
            slots = (0 ..< count).map { $0 < initialSlots.count ? initialSlots[$0] : SlotState() }
            slotSerials = Array(repeating: -1, count: count)
            currentSlot = Int(capabilities.absoluteAxes[Evdev.ABS_MT_SLOT]?.value ?? 0)
            for i in slots.indices where slots[i].trackingID >= 0 { slotSerials[i] = newSerial() }
        }
        if case .singleTouch = proto, touchKeyDown { singleSerial = newSerial() }
        previousSerials = Set(currentContacts().map(\.serial))
    }

    /// Whether a finger is driving (between its `.down` and its `.up`).
    public var isTouching: Bool { driver != nil }

    /// Takes one event; returns the samples of the frame it completes (empty until a `SYN_REPORT`).
    public mutating func feed(_ event: EvdevEvent) -> [TouchSample] {
        guard event.type == Evdev.EV_SYN else {
            pending.append(event)
            return []
        }
        switch event.code {
        case Evdev.SYN_REPORT:
            let frame = pending
            pending.removeAll(keepingCapacity: true)
            return decodeFrame(frame, time: event.time)
        case Evdev.SYN_DROPPED:
            pending.removeAll(keepingCapacity: true)
            return []
        case Evdev.SYN_MT_REPORT:
            pending.append(event)
            return []
        default:
            return []
        }
    }

    /// Feeds several events in order; returns all samples.
    public mutating func feed<S: Sequence>(_ events: S) -> [TouchSample] where S.Element == EvdevEvent {
        var out: [TouchSample] = []
        for event in events { out += feed(event) }
        return out
    }

    /// Ends the touch now (the device went away): a `.cancel` at the last position if a finger
    /// is driving, and everything forgotten. `time` is the raw monotonic time.
    public mutating func cancel(at time: Duration) -> [TouchSample] {
        pending.removeAll()
        var out: [TouchSample] = []
        if let d = driver { out.append(sample(.cancel, d.x, d.y, time)) }
        driver = nil
        for i in slots.indices { slots[i].trackingID = -1; slotSerials[i] = -1 }
        singleSerial = nil
        previousA = []
        touchKeyDown = false
        previousSerials = []
        return out
    }

    // MARK: - Frames

    private mutating func newSerial() -> Int { nextSerial += 1; return nextSerial }

    private mutating func decodeFrame(_ frame: [EvdevEvent], time: Duration) -> [TouchSample] {
        switch touchProtocol {
        case .singleTouch: applySingle(frame)
        case .multitouchB: applySlots(frame)
        case .multitouchA: if let contacts = decodeProtocolA(frame) { previousA = contacts }
        }
        return finish(currentContacts(), time: time)
    }

    /// Tracks the touch key; when it goes down, contacts that are there get new serials (a touch
    /// that ended with BTN_TOUCH 0 but kept its tracking ID comes back as a new touch).
    private mutating func applyKey(_ event: EvdevEvent) -> Bool {
        guard event.type == Evdev.EV_KEY, let key = touchKey, event.code == key else { return false }
        let down = event.value != 0
        if down && !touchKeyDown {
            for i in slots.indices where slots[i].trackingID >= 0 { slotSerials[i] = newSerial() }
            if case .singleTouch = touchProtocol { singleSerial = newSerial() }
        }
        touchKeyDown = down
        return true
    }

    private mutating func applySingle(_ frame: [EvdevEvent]) {
        for event in frame {
            if applyKey(event) { continue }
            guard event.type == Evdev.EV_ABS else { continue }
            if event.code == Evdev.ABS_X {
                singleX = event.value
            } else if event.code == Evdev.ABS_Y {
                singleY = event.value
            }
        }
    }

    private mutating func applySlots(_ frame: [EvdevEvent]) {
        for event in frame {
            if applyKey(event) { continue }
            guard event.type == Evdev.EV_ABS else { continue }
            if event.code == Evdev.ABS_MT_SLOT { currentSlot = Int(event.value); continue }
            // Events for a slot outside the device's range are dropped (libevdev does the same).
            guard slots.indices.contains(currentSlot) else { continue }
            switch event.code {
            case Evdev.ABS_MT_TRACKING_ID:
                let id = max(event.value, -1)
                if id >= 0 && id != slots[currentSlot].trackingID { slotSerials[currentSlot] = newSerial() }
                if id < 0 { slotSerials[currentSlot] = -1 }
                slots[currentSlot].trackingID = id
            case Evdev.ABS_MT_POSITION_X: slots[currentSlot].x = event.value
            case Evdev.ABS_MT_POSITION_Y: slots[currentSlot].y = event.value
            default: break
            }
        }
    }

    /// The contacts of one protocol A frame, matched to the previous frame's; nil when the frame
    /// says nothing about contacts (no MT data while the touch key is still down).
    private mutating func decodeProtocolA(_ frame: [EvdevEvent]) -> [Contact]? {
        var raw: [Contact] = []
        var x: Int32?, y: Int32?, id: Int32?
        var sawMT = false
        func close() {
            if x != nil || y != nil {
                let cx = x ?? lastAX, cy = y ?? lastAY
                lastAX = cx; lastAY = cy
                if (id ?? 0) >= 0 { raw.append(Contact(serial: -1, x: cx, y: cy, trackingID: id)) }
            }
            x = nil; y = nil; id = nil
        }
        for event in frame {
            if applyKey(event) { continue }
            if event.type == Evdev.EV_SYN && event.code == Evdev.SYN_MT_REPORT { sawMT = true; close(); continue }
            guard event.type == Evdev.EV_ABS, event.code >= Evdev.ABS_MT_SLOT else { continue }
            sawMT = true
            switch event.code {
            case Evdev.ABS_MT_POSITION_X: x = event.value
            case Evdev.ABS_MT_POSITION_Y: y = event.value
            case Evdev.ABS_MT_TRACKING_ID: id = event.value
            default: break
            }
        }
        close()  // a last contact without its SYN_MT_REPORT
        if !sawMT && touchKey != nil && touchKeyDown { return nil }
        if touchKey != nil && !touchKeyDown { raw = [] }
        return matchProtocolA(raw)
    }

    /// Gives each contact the serial of the previous frame's contact it continues: same tracking ID
    /// when both have one, else greedily the nearest pairs first. Unmatched contacts are new.
    private mutating func matchProtocolA(_ current: [Contact]) -> [Contact] {
        var result = current
        var usedPrevious = Set<Int>()
        var pairs: [(distance: Double, current: Int, previous: Int)] = []
        for (i, c) in current.enumerated() {
            for (j, p) in previousA.enumerated() {
                if let a = c.trackingID, let b = p.trackingID {
                    if a == b { pairs.append((0, i, j)) }
                } else {
                    let dx = Double(c.x) - Double(p.x), dy = Double(c.y) - Double(p.y)
                    pairs.append(((dx * dx + dy * dy).squareRoot(), i, j))
                }
            }
        }
        pairs.sort { $0.distance < $1.distance }
        var assigned = Set<Int>()
        for pair in pairs where !assigned.contains(pair.current) && !usedPrevious.contains(pair.previous) {
            result[pair.current].serial = previousA[pair.previous].serial
            assigned.insert(pair.current); usedPrevious.insert(pair.previous)
        }
        for i in result.indices where !assigned.contains(i) { result[i].serial = newSerial() }
        return result
    }

    /// The contacts on the glass now, in the order a new driving finger is chosen from (protocol B:
    /// lowest slot first; protocol A: the order of the frame).
    private func currentContacts() -> [Contact] {
        if touchKey != nil && !touchKeyDown { return [] }
        switch touchProtocol {
        case .singleTouch:
            guard let serial = singleSerial else { return [] }
            return [Contact(serial: serial, x: singleX, y: singleY)]
        case .multitouchB:
            return slots.indices.compactMap { i in
                slots[i].trackingID >= 0 && slotSerials[i] >= 0
                    ? Contact(serial: slotSerials[i], x: slots[i].x, y: slots[i].y) : nil
            }
        case .multitouchA:
            return previousA
        }
    }

    /// The driving-finger rule, common to every protocol.
    private mutating func finish(_ contacts: [Contact], time: Duration) -> [TouchSample] {
        var out: [TouchSample] = []
        if let d = driver {
            if let c = contacts.first(where: { $0.serial == d.serial }) {
                let x = Self.resolve(c.x, mapping.xAxis, previous: d.x),
                    y = Self.resolve(c.y, mapping.yAxis, previous: d.y)
                if x != d.x || y != d.y {
                    driver = Driver(serial: d.serial, x: x, y: y)
                    out.append(sample(.move, x, y, time))
                }
            } else {
                out.append(sample(.up, d.x, d.y, time))
                driver = nil
            }
        }
        if driver == nil, let first = contacts.first,
           !contacts.contains(where: { previousSerials.contains($0.serial) }) {
            let x = Self.resolve(first.x, mapping.xAxis, previous: nil),
                y = Self.resolve(first.y, mapping.yAxis, previous: nil)
            driver = Driver(serial: first.serial, x: x, y: y)
            out.append(sample(.down, x, y, time))
        }
        previousSerials = Set(contacts.map(\.serial))
        return out
    }

    /// A device value inside the axis range as it is; outside by up to 1/8 of the range, clamped;
    /// further out (a ghost), the previous value (clamped when there is none).
    static func resolve(_ value: Int32, _ axis: AbsoluteAxis, previous: Double?) -> Double {
        let lo = Double(axis.minimum), hi = Double(max(axis.maximum, axis.minimum)), v = Double(value)
        if v >= lo && v <= hi { return v }
        let tolerance = (hi - lo) / 8
        if v >= lo - tolerance && v <= hi + tolerance { return min(max(v, lo), hi) }
        return previous ?? min(max(v, lo), hi)
    }

    private func sample(_ phase: TouchSample.Phase, _ x: Double, _ y: Double, _ time: Duration) -> TouchSample {
        let p = mapping.logicalPoint(deviceX: x, deviceY: y)
        return TouchSample(phase, x: p.x, y: p.y, time: time - showStart)
    }
}
