// SPDX-License-Identifier: Apache-2.0
import CLibEvdev

/// One raw evdev event (`struct input_event`, linux/input.h) with its kernel timestamp.
///
/// The decoder takes these frame by frame: every event up to an `EV_SYN`/`SYN_REPORT` belongs to
/// one frame (Documentation/input/event-codes.rst).
public struct EvdevEvent: Equatable, Sendable, CustomStringConvertible {
    /// The kernel's timestamp (`input_event.time`), read on `CLOCK_MONOTONIC` (the device is switched
    /// to it with `EVIOCSCLOCKID`): the raw monotonic clock, not yet show time.
    public var time: Duration
    /// Event type, e.g. ``Evdev/EV_ABS``.
    public var type: UInt16
    /// Event code within the type, e.g. ``Evdev/ABS_MT_POSITION_X``.
    public var code: UInt16
    /// The value: an axis position in device units, 1/0 for a key press/release, a tracking ID ...
    public var value: Int32

    public init(time: Duration, type: UInt16, code: UInt16, value: Int32) {
        self.time = time; self.type = type; self.code = code; self.value = value
    }

    /// `3.250000 0003 0035 412` (the evemu-record layout: seconds, type and code in hex, value).
    public var description: String {
        let (s, a) = time.components
        let micro = a / 1_000_000_000_000
        let hex = { (v: UInt16) -> String in
            let t = String(v, radix: 16); return String(repeating: "0", count: max(0, 4 - t.count)) + t
        }
        return "\(s).\(String(repeating: "0", count: 6 - String(micro).count))\(micro) "
            + "\(hex(type)) \(hex(code)) \(value)"
    }
}

/// The evdev constants the touch code uses, taken from the kernel's own headers
/// (linux/input-event-codes.h through libevdev.h) so they cannot drift.
public enum Evdev {
    // Event types.
    public static let EV_SYN = UInt16(CLibEvdev.EV_SYN)
    public static let EV_KEY = UInt16(CLibEvdev.EV_KEY)
    public static let EV_REL = UInt16(CLibEvdev.EV_REL)
    public static let EV_ABS = UInt16(CLibEvdev.EV_ABS)

    // EV_SYN codes.
    /// End of a frame.
    public static let SYN_REPORT = UInt16(CLibEvdev.SYN_REPORT)
    /// End of one contact in multitouch protocol A (Documentation/input/multi-touch-protocol.rst).
    public static let SYN_MT_REPORT = UInt16(CLibEvdev.SYN_MT_REPORT)
    /// The kernel's buffer overflowed; events were lost (libevdev resynchronises the state).
    public static let SYN_DROPPED = UInt16(CLibEvdev.SYN_DROPPED)

    // EV_KEY codes.
    /// Left button: what absolute pointing devices such as eGalax or QEMU's usb-tablet and
    /// virtio-tablet send instead of BTN_TOUCH.
    public static let BTN_LEFT = UInt16(CLibEvdev.BTN_LEFT)
    public static let BTN_TOOL_PEN = UInt16(CLibEvdev.BTN_TOOL_PEN)
    public static let BTN_TOOL_FINGER = UInt16(CLibEvdev.BTN_TOOL_FINGER)
    /// Something touches the surface (0x14a).
    public static let BTN_TOUCH = UInt16(CLibEvdev.BTN_TOUCH)

    // EV_REL codes.
    public static let REL_X = UInt16(CLibEvdev.REL_X)
    public static let REL_Y = UInt16(CLibEvdev.REL_Y)

    // EV_ABS codes.
    public static let ABS_X = UInt16(CLibEvdev.ABS_X)
    public static let ABS_Y = UInt16(CLibEvdev.ABS_Y)
    /// The slot the following ABS_MT_* events of protocol B refer to (0x2f).
    public static let ABS_MT_SLOT = UInt16(CLibEvdev.ABS_MT_SLOT)
    public static let ABS_MT_POSITION_X = UInt16(CLibEvdev.ABS_MT_POSITION_X)
    public static let ABS_MT_POSITION_Y = UInt16(CLibEvdev.ABS_MT_POSITION_Y)
    /// A contact's ID (>= 0) for as long as it touches; -1 ends the contact in the slot (0x39).
    public static let ABS_MT_TRACKING_ID = UInt16(CLibEvdev.ABS_MT_TRACKING_ID)

    // Input properties (EVIOCGPROP).
    /// The device needs a pointer on screen (touchpads, indirect tablets).
    public static let INPUT_PROP_POINTER = UInt16(CLibEvdev.INPUT_PROP_POINTER)
    /// Coordinates are positions on the screen itself (touchscreens, screen tablets).
    public static let INPUT_PROP_DIRECT = UInt16(CLibEvdev.INPUT_PROP_DIRECT)

    /// Highest codes (linux/input-event-codes.h), for scanning capabilities.
    public static let INPUT_PROP_MAX = UInt16(CLibEvdev.INPUT_PROP_MAX)
    public static let KEY_MAX = UInt16(CLibEvdev.KEY_MAX)
    public static let REL_MAX = UInt16(CLibEvdev.REL_MAX)
    public static let ABS_MAX = UInt16(CLibEvdev.ABS_MAX)
}
