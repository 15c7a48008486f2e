// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskInput

@Suite struct InputCapabilitiesTests {
    static let abs0to32767 = AbsoluteAxis(minimum: 0, maximum: 32767)

    @Test func everyRecordedTouchscreenIsATouchscreen() throws {
        let names = try Evemu.descriptions()
        #expect(names.count == 7)
        for name in names {
            let device = try EvemuDevice(parsing: Evemu.text(name))
            let c = device.capabilities
            #expect(InputCapabilities.isTouchscreen(properties: c.properties, keys: c.keys,
                                                    absAxes: Set(c.absoluteAxes.keys), relAxes: c.relativeAxes),
                    "\(name)")
            #expect(c.touchProtocol != nil, "\(name)")
        }
    }

    @Test func protocolsOfTheRecordedDevices() throws {
        func proto(_ name: String) throws -> TouchProtocol? {
            try EvemuDevice(parsing: Evemu.text(name + ".desc")).capabilities.touchProtocol
        }
        #expect(try proto("Atmel maXTouch Touchscreen") == .multitouchB(slots: 10))
        #expect(try proto("EP0430M09") == .multitouchB(slots: 5))
        #expect(try proto("Beijing IRTOUCHSYSTEMS Co.,LtD IRTOUCH InfraRed USB TouchScreen") == .multitouchB(slots: 2))
        #expect(try proto("N-Trig MultiTouch") == .multitouchA)
        let ntrig = try EvemuDevice(parsing: Evemu.text("N-Trig MultiTouch.desc")).capabilities
        #expect(!ntrig.properties.contains(Evdev.INPUT_PROP_DIRECT))
        #expect(ntrig.keys.contains(Evdev.BTN_TOUCH))
        // Multitouch devices are mapped with their MT axes.
        let elan = try EvemuDevice(parsing: Evemu.text("ELAN Touchscreen.desc")).capabilities
        #expect(elan.positionAxes?.x == AbsoluteAxis(minimum: 0, maximum: 3312, resolution: 10))
        #expect(elan.positionAxes?.y == AbsoluteAxis(minimum: 0, maximum: 1872, resolution: 10))
    }

    @Test func keyboardIsNot() {
        let keys: Set<UInt16> = Set((1 ... 88).map { UInt16($0) })  // KEY_ESC ... KEY_F12
        #expect(!InputCapabilities.isTouchscreen(properties: [], keys: keys, absAxes: [], relAxes: []))
    }

    @Test func relativeMouseIsNot() {
        #expect(!InputCapabilities.isTouchscreen(properties: [INPUT_PROP_POINTER], keys: [Evdev.BTN_LEFT, 0x111, 0x112],
                                                 absAxes: [], relAxes: [Evdev.REL_X, Evdev.REL_Y, 0x08]))
        // A mouse that also claims absolute axes (some vendor receivers) is still a mouse.
        #expect(!InputCapabilities.isTouchscreen(properties: [], keys: [Evdev.BTN_LEFT],
                                                 absAxes: [Evdev.ABS_X, Evdev.ABS_Y],
                                                 relAxes: [Evdev.REL_X, Evdev.REL_Y]))
    }

    @Test func qemuTabletsAre() {
        // QEMU usb-tablet: ABS_X/ABS_Y 0..32767, BTN_LEFT/RIGHT/MIDDLE, REL_WHEEL; no properties.
        let usbTablet = InputCapabilities(keys: [Evdev.BTN_LEFT, 0x111, 0x112],
                                          absoluteAxes: [Evdev.ABS_X: Self.abs0to32767, Evdev.ABS_Y: Self.abs0to32767],
                                          relativeAxes: [0x08])
        #expect(usbTablet.isTouchscreen)
        #expect(usbTablet.touchProtocol == .singleTouch(key: Evdev.BTN_LEFT))
        // virtio-tablet: the same shape, plus side/extra buttons and REL_HWHEEL.
        let virtio = InputCapabilities(keys: [Evdev.BTN_LEFT, 0x111, 0x112, 0x113, 0x114],
                                       absoluteAxes: [Evdev.ABS_X: Self.abs0to32767, Evdev.ABS_Y: Self.abs0to32767],
                                       relativeAxes: [0x06, 0x08])
        #expect(virtio.isTouchscreen)
    }

    @Test func touchpadIsNot() {
        let axes: Set<UInt16> = [Evdev.ABS_X, Evdev.ABS_Y, Evdev.ABS_MT_SLOT, Evdev.ABS_MT_POSITION_X,
                                 Evdev.ABS_MT_POSITION_Y, Evdev.ABS_MT_TRACKING_ID]
        let keys: Set<UInt16> = [Evdev.BTN_LEFT, Evdev.BTN_TOUCH, Evdev.BTN_TOOL_FINGER, 0x14d, 0x14e]
        #expect(!InputCapabilities.isTouchscreen(properties: [INPUT_PROP_POINTER, 2], keys: keys, absAxes: axes,
                                                 relAxes: []))
        // An old kernel without properties: BTN_TOOL_FINGER without a pen still says touchpad.
        #expect(!InputCapabilities.isTouchscreen(properties: [], keys: keys, absAxes: axes, relAxes: []))
        // The same axes on a screen (INPUT_PROP_DIRECT) are a touchscreen.
        #expect(InputCapabilities.isTouchscreen(properties: [Evdev.INPUT_PROP_DIRECT], keys: keys, absAxes: axes,
                                                relAxes: []))
    }

    @Test func joystickIsNot() {
        #expect(!InputCapabilities.isTouchscreen(properties: [], keys: [0x120, 0x121],
                                                 absAxes: [Evdev.ABS_X, Evdev.ABS_Y, 0x05], relAxes: []))
    }

    @Test func multitouchOnlyWithoutKeysIs() {
        let axes: Set<UInt16> = [Evdev.ABS_MT_SLOT, Evdev.ABS_MT_POSITION_X, Evdev.ABS_MT_POSITION_Y,
                                 Evdev.ABS_MT_TRACKING_ID]
        #expect(InputCapabilities.isTouchscreen(properties: [], keys: [], absAxes: axes, relAxes: []))
        #expect(InputCapabilities.isTouchscreen(properties: [Evdev.INPUT_PROP_DIRECT], keys: [], absAxes: axes,
                                                relAxes: []))
    }

    @Test func singleTouchWithoutAnyKeyCannotBeRead() {
        let caps = InputCapabilities(absoluteAxes: [Evdev.ABS_X: Self.abs0to32767, Evdev.ABS_Y: Self.abs0to32767])
        #expect(!caps.isTouchscreen)
        #expect(caps.touchProtocol == nil)
    }
}

private let INPUT_PROP_POINTER = Evdev.INPUT_PROP_POINTER
