// SPDX-License-Identifier: Apache-2.0
import KioskCore

/// One absolute axis as the kernel describes it (`struct input_absinfo`, linux/input.h, read with
/// `EVIOCGABS`). All values in device units.
public struct AbsoluteAxis: Equatable, Sendable, CustomStringConvertible {
    /// The current value (for ABS_MT_SLOT: the slot the kernel currently reports).
    public var value: Int32
    /// Lowest and highest value the device reports, inclusive.
    public var minimum: Int32
    public var maximum: Int32
    /// Noise filter and dead zone, device units.
    public var fuzz: Int32
    public var flat: Int32
    /// Units per millimetre for position axes (0: not reported).
    public var resolution: Int32

    public init(minimum: Int32, maximum: Int32, value: Int32 = 0, fuzz: Int32 = 0, flat: Int32 = 0,
                resolution: Int32 = 0) {
        self.value = value; self.minimum = minimum; self.maximum = maximum
        self.fuzz = fuzz; self.flat = flat; self.resolution = resolution
    }

    /// `0..4095` or `0..4095 (10/mm)`.
    public var description: String {
        "\(minimum)..\(maximum)" + (resolution > 0 ? " (\(resolution)/mm)" : "")
    }
}

/// How a device reports its contacts (Documentation/input/multi-touch-protocol.rst).
public enum TouchProtocol: Equatable, Sendable, CustomStringConvertible {
    /// ABS_X/ABS_Y while `key` (BTN_TOUCH, else BTN_LEFT) is down.
    case singleTouch(key: UInt16)
    /// Protocol A: no slots; every frame lists all contacts, each closed by SYN_MT_REPORT.
    case multitouchA
    /// Protocol B: `slots` slots (ABS_MT_SLOT 0 ..< slots), contacts identified by ABS_MT_TRACKING_ID.
    case multitouchB(slots: Int)

    public var description: String {
        switch self {
        case .singleTouch(let key): return key == Evdev.BTN_LEFT ? "single-touch (BTN_LEFT)" : "single-touch"
        case .multitouchA: return "multitouch protocol A"
        case .multitouchB(let slots): return "multitouch protocol B, \(counted(slots, "slot"))"
        }
    }
}

/// What an evdev device can report: its properties, keys, absolute axes (with ranges) and
/// relative axes. Filled from libevdev for a real device, or from an evemu `.desc` in tests.
public struct InputCapabilities: Equatable, Sendable {
    /// INPUT_PROP_* codes set (e.g. ``Evdev/INPUT_PROP_DIRECT``).
    public var properties: Set<UInt16>
    /// EV_KEY codes the device can send.
    public var keys: Set<UInt16>
    /// EV_ABS codes the device can send, with their ranges.
    public var absoluteAxes: [UInt16: AbsoluteAxis]
    /// EV_REL codes the device can send.
    public var relativeAxes: Set<UInt16>

    public init(properties: Set<UInt16> = [], keys: Set<UInt16> = [], absoluteAxes: [UInt16: AbsoluteAxis] = [:],
                relativeAxes: Set<UInt16> = []) {
        self.properties = properties; self.keys = keys
        self.absoluteAxes = absoluteAxes; self.relativeAxes = relativeAxes
    }

    /// Whether a device with these capabilities is a touchscreen (docs/touch.md), a pure decision:
    ///
    /// - it must report a position: ABS_X and ABS_Y, or ABS_MT_POSITION_X and ABS_MT_POSITION_Y;
    /// - a relative X or Y axis (a mouse) rules it out, and so does a device without a position
    ///   (keyboards, buttons, switches);
    /// - INPUT_PROP_DIRECT (a touchscreen or screen tablet) is enough;
    /// - INPUT_PROP_POINTER (touchpad, drawing tablet), or BTN_TOOL_FINGER without BTN_TOOL_PEN and
    ///   without INPUT_PROP_DIRECT (a touchpad on an old kernel, udev's heuristic), rules it out;
    /// - otherwise: ABS_X/ABS_Y with BTN_TOUCH or BTN_LEFT (QEMU's usb-tablet and virtio-tablet,
    ///   eGalax), or MT positions with ABS_MT_TRACKING_ID or BTN_TOUCH (N-Trig has no DIRECT).
    public static func isTouchscreen(properties: Set<UInt16>, keys: Set<UInt16>,
                                     absAxes: Set<UInt16>, relAxes: Set<UInt16>) -> Bool {
        let singlePosition = absAxes.contains(Evdev.ABS_X) && absAxes.contains(Evdev.ABS_Y)
        let mtPosition = absAxes.contains(Evdev.ABS_MT_POSITION_X) && absAxes.contains(Evdev.ABS_MT_POSITION_Y)
        guard singlePosition || mtPosition else { return false }
        if relAxes.contains(Evdev.REL_X) || relAxes.contains(Evdev.REL_Y) { return false }
        if properties.contains(Evdev.INPUT_PROP_DIRECT) { return true }
        if properties.contains(Evdev.INPUT_PROP_POINTER) { return false }
        if keys.contains(Evdev.BTN_TOOL_FINGER) && !keys.contains(Evdev.BTN_TOOL_PEN) { return false }
        if singlePosition && (keys.contains(Evdev.BTN_TOUCH) || keys.contains(Evdev.BTN_LEFT)) { return true }
        if mtPosition && (absAxes.contains(Evdev.ABS_MT_TRACKING_ID) || keys.contains(Evdev.BTN_TOUCH)) { return true }
        return false
    }

    /// ``isTouchscreen(properties:keys:absAxes:relAxes:)`` for these capabilities.
    public var isTouchscreen: Bool {
        Self.isTouchscreen(properties: properties, keys: keys, absAxes: Set(absoluteAxes.keys), relAxes: relativeAxes)
    }

    /// How contacts are reported, or nil when the device cannot be read as a touchscreen at all:
    /// protocol B when it has ABS_MT_SLOT, ABS_MT_TRACKING_ID and MT positions; protocol A when it
    /// has MT positions without slots; single-touch when it has ABS_X/ABS_Y and BTN_TOUCH or BTN_LEFT.
    public var touchProtocol: TouchProtocol? {
        let abs = absoluteAxes
        let mtPosition = abs[Evdev.ABS_MT_POSITION_X] != nil && abs[Evdev.ABS_MT_POSITION_Y] != nil
        if mtPosition, let slot = abs[Evdev.ABS_MT_SLOT], abs[Evdev.ABS_MT_TRACKING_ID] != nil {
            // The kernel caps slots far below this; the cap keeps a bogus range from costing memory.
            let count = Int(slot.maximum) - Int(max(0, slot.minimum)) + 1
            return .multitouchB(slots: min(max(count, 1), 256))
        }
        if mtPosition && abs[Evdev.ABS_MT_SLOT] == nil { return .multitouchA }
        if abs[Evdev.ABS_X] != nil && abs[Evdev.ABS_Y] != nil {
            if keys.contains(Evdev.BTN_TOUCH) { return .singleTouch(key: Evdev.BTN_TOUCH) }
            if keys.contains(Evdev.BTN_LEFT) { return .singleTouch(key: Evdev.BTN_LEFT) }
        }
        return nil
    }

    /// The axes positions are read from, device units: ABS_MT_POSITION_X/Y for a multitouch
    /// protocol, else ABS_X/ABS_Y. Nil when ``touchProtocol`` is nil.
    public var positionAxes: (x: AbsoluteAxis, y: AbsoluteAxis)? {
        switch touchProtocol {
        case .multitouchA?, .multitouchB?:
            return (absoluteAxes[Evdev.ABS_MT_POSITION_X]!, absoluteAxes[Evdev.ABS_MT_POSITION_Y]!)
        case .singleTouch?:
            return (absoluteAxes[Evdev.ABS_X]!, absoluteAxes[Evdev.ABS_Y]!)
        case nil:
            return nil
        }
    }
}
