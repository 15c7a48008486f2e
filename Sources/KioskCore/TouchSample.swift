// SPDX-License-Identifier: Apache-2.0
/// One report of the driving finger, already mapped to the screen (docs/touch.md).
///
/// Produced by the evdev reader from one `SYN_REPORT` frame of the touchscreen; consumed by
/// ``GestureRecognizer``. Only the first finger on the glass is reported: a second finger
/// changes nothing until every finger has left.
public struct TouchSample: Equatable, Sendable {
    /// Where in a touch the sample falls.
    public enum Phase: Equatable, Sendable {
        /// The finger landed (`BTN_TOUCH`/`BTN_LEFT` 1, or a tracking id >= 0 in a free slot).
        case down
        /// The finger moved while down.
        case move
        /// The finger left (`BTN_TOUCH`/`BTN_LEFT` 0, tracking id -1), at its last position.
        case up
        /// The touch ended without the finger being seen to leave (the device went away): no
        /// tap, no flick; a drag springs back.
        case cancel
    }

    public var phase: Phase
    /// Position in logical screen pixels: the frame the compositor draws (`--rotate` already
    /// undone), 0 ..< width and 0 ..< height, origin top left. Fractional: device units are often
    /// finer than pixels.
    public var x: Double
    public var y: Double
    /// Show time of the kernel's timestamp of the event frame (`input_event.time`, read on
    /// `CLOCK_MONOTONIC` through `EVIOCSCLOCKID`, minus the show's start).
    public var time: Duration

    public init(_ phase: Phase, x: Double, y: Double, time: Duration) {
        self.phase = phase
        self.x = x
        self.y = y
        self.time = time
    }
}
