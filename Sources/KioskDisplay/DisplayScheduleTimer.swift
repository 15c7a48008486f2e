// SPDX-License-Identifier: Apache-2.0
import Glibc
import CKioskSys
import KioskSystem

/// Wakes the frame loop at the next change of the display-off schedule: a timerfd on
/// CLOCK_REALTIME armed at an absolute wall time with TFD_TIMER_CANCEL_ON_SET, so it fires at
/// that wall-clock second however long the machine slept or the loop waited, and at once when
/// the clock is set (an NTP step at boot, `date -s`), after which the schedule is looked at again.
/// Its ``descriptor`` goes into the loop's poll set; nothing polls the clock.
public final class DisplayScheduleTimer {
    /// Readable when the timer expired or the clock was set.
    public let descriptor: Int32

    /// Creates the timerfd (`CLOCK_REALTIME`, non-blocking, close-on-exec).
    /// Throws ``SystemError`` (`timerfd_create`) when the kernel refuses.
    public init() throws(SystemError) {
        descriptor = try syscall("timerfd_create") { kc_wall_timer_create() }
    }

    deinit { close(descriptor) }

    /// Arms the timer for `epochSeconds` (seconds since 1970, wall time; it also fires when the
    /// clock is set). Throws ``SystemError`` (`timerfd_settime`).
    public func arm(at epochSeconds: Int) throws(SystemError) {
        try syscall("timerfd_settime") { kc_wall_timer_arm(descriptor, Int64(epochSeconds)) }
    }

    /// True when the timer expired or the clock was set since the last call (the schedule must
    /// be looked at again); clears the readiness.
    public func consume() -> Bool { kc_wall_timer_consume(descriptor) != 0 }

    /// The local wall time now (localtime_r: /etc/localtime or TZ): minute of the day
    /// (0 ... 1439), second (0 ... 59; a leap second counts as 59) and seconds since 1970.
    public static func localNow() -> (minuteOfDay: Int, second: Int, epoch: Int) {
        var t = time(nil)
        var parts = tm()
        localtime_r(&t, &parts)
        return (Int(parts.tm_hour) * 60 + Int(parts.tm_min), min(Int(parts.tm_sec), 59), Int(t))
    }
}
