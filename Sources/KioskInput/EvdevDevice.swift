// SPDX-License-Identifier: Apache-2.0
import Glibc
import CLibEvdev
import KioskSystem

/// An open evdev node (`/dev/input/eventN`) read through libevdev: its name, capabilities, the
/// state at open, and the event stream with `SYN_DROPPED` resynchronisation.
///
/// Ownership: owns the descriptor (closed on deinit, which also releases a grab) and the libevdev
/// context. Used by one thread at a time. Failures are ``InputError/system(_:)`` with the path,
/// the call and errno.
final class EvdevDevice {
    let path: String
    let fd: FileDescriptor
    private let dev: OpaquePointer
    /// The kernel's device name (`EVIOCGNAME`), e.g. `ELAN Touchscreen`.
    let name: String
    let capabilities: InputCapabilities
    /// True while the device is in sync mode after a `SYN_DROPPED` (libevdev's delta being read).
    private var syncing = false

    private init(path: String, fd: FileDescriptor, dev: OpaquePointer) {
        self.path = path; self.fd = fd; self.dev = dev
        name = libevdev_get_name(dev).map { String(cString: $0) } ?? ""
        var props: Set<UInt16> = [], keys: Set<UInt16> = [], rel: Set<UInt16> = []
        var abs: [UInt16: AbsoluteAxis] = [:]
        for p in 0 ... UInt32(Evdev.INPUT_PROP_MAX) where libevdev_has_property(dev, p) != 0 { props.insert(UInt16(p)) }
        for k in 0 ... UInt32(Evdev.KEY_MAX) where libevdev_has_event_code(dev, UInt32(Evdev.EV_KEY), k) != 0 {
            keys.insert(UInt16(k))
        }
        for r in 0 ... UInt32(Evdev.REL_MAX) where libevdev_has_event_code(dev, UInt32(Evdev.EV_REL), r) != 0 {
            rel.insert(UInt16(r))
        }
        for a in 0 ... UInt32(Evdev.ABS_MAX) where libevdev_has_event_code(dev, UInt32(Evdev.EV_ABS), a) != 0 {
            if let info = libevdev_get_abs_info(dev, a)?.pointee {
                abs[UInt16(a)] = AbsoluteAxis(minimum: info.minimum, maximum: info.maximum, value: info.value,
                                              fuzz: info.fuzz, flat: info.flat, resolution: info.resolution)
            }
        }
        capabilities = InputCapabilities(properties: props, keys: keys, absoluteAxes: abs, relativeAxes: rel)
    }

    deinit { libevdev_free(dev) }

    /// Opens `path` `O_RDONLY | O_NONBLOCK | O_CLOEXEC` and reads its capabilities (libevdev_new_from_fd).
    /// - Throws: ``InputError/system(_:)``: `open PATH: … (errno N)` or `libevdev_new_from_fd PATH: …`.
    static func open(_ path: String) throws(InputError) -> EvdevDevice {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK) } catch { throw .system(error) }
        var dev: OpaquePointer?
        do {
            try negativeErrnoCall("libevdev_new_from_fd", path: path) { libevdev_new_from_fd(fd.rawValue, &dev) }
        } catch {
            throw .system(error)
        }
        guard let dev else { throw .system(SystemError(operation: "libevdev_new_from_fd", path: path, errno: ENOMEM)) }
        return EvdevDevice(path: path, fd: fd, dev: dev)
    }

    /// Timestamps on `CLOCK_MONOTONIC` from now on (`EVIOCSCLOCKID`; the kernel drops events
    /// already queued on the old clock and queues a `SYN_DROPPED`, which libevdev resolves).
    func useMonotonicClock() throws(InputError) {
        do {
            try negativeErrnoCall("ioctl EVIOCSCLOCKID", path: path) { libevdev_set_clock_id(dev, CLOCK_MONOTONIC) }
        } catch {
            throw .system(error)
        }
    }

    /// Takes the device for this process alone (`EVIOCGRAB`): the console and other readers stop
    /// seeing its events. Released when the descriptor closes.
    func grab() throws(InputError) {
        do { try negativeErrnoCall("ioctl EVIOCGRAB", path: path) { libevdev_grab(dev, LIBEVDEV_GRAB) } } catch {
            throw .system(error)
        }
    }

    /// Keys down now (libevdev's state, read at open).
    func keysDown(among keys: [UInt16]) -> Set<UInt16> {
        Set(keys.filter {
            capabilities.keys.contains($0) && libevdev_get_event_value(dev, UInt32(Evdev.EV_KEY), UInt32($0)) != 0
        })
    }

    /// Protocol B slot contents now (libevdev's state, read at open); empty without slots.
    func slotStates() -> [SlotState] {
        let count = libevdev_get_num_slots(dev)
        guard count > 0 else { return [] }
        return (0 ..< count).map { slot in
            SlotState(trackingID: libevdev_get_slot_value(dev, UInt32(slot), UInt32(Evdev.ABS_MT_TRACKING_ID)),
                      x: libevdev_get_slot_value(dev, UInt32(slot), UInt32(Evdev.ABS_MT_POSITION_X)),
                      y: libevdev_get_slot_value(dev, UInt32(slot), UInt32(Evdev.ABS_MT_POSITION_Y)))
        }
    }

    /// Reads every event waiting (until `EAGAIN`) and hands each to `handle` in order. After a
    /// `SYN_DROPPED` (handed on too) it reads libevdev's resynchronisation delta, which ends in a
    /// `SYN_REPORT`, then carries on normally.
    /// - Throws: ``InputError/system(_:)`` for a read error; `ENODEV` means the device is gone.
    func readAvailable(_ handle: (EvdevEvent) -> Void) throws(InputError) {
        var event = input_event()
        let success = Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue), sync = Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue)
        while true {
            let flags = syncing ? LIBEVDEV_READ_FLAG_SYNC.rawValue : LIBEVDEV_READ_FLAG_NORMAL.rawValue
            let rc: Int32
            do {
                rc = try negativeErrnoCall("read", path: path) { libevdev_next_event(dev, flags, &event) }
            } catch where error.errno == EAGAIN {
                if syncing { syncing = false; continue }  // delta done; back to normal events
                return
            } catch {
                throw .system(error)
            }
            if rc == success || rc == sync {
                if rc == sync { syncing = true }
                let time = Duration.seconds(Int64(event.time.tv_sec)) + .microseconds(Int64(event.time.tv_usec))
                handle(EvdevEvent(time: time, type: event.type, code: event.code, value: event.value))
            }
        }
    }
}
