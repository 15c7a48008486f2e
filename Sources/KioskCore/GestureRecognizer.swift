// SPDX-License-Identifier: Apache-2.0
/// The thresholds that tell a tap from a drag (docs/touch.md).
public struct GestureConfig: Equatable, Sendable {
    /// How far (in logical pixels) a finger may wander before the touch is a drag rather than
    /// a tap. See ``slop(screenWidth:pixelsPerMillimetre:)`` for the default.
    public var slop: Double
    /// The longest touch that still counts as a tap (300 ms).
    public var tapMaxDuration: Duration
    /// Samples no older than this before the release give the release velocity (100 ms: long
    /// enough to span several 60-120 Hz touch reports, short enough that a finger that stopped
    /// before lifting has no velocity).
    public var velocityWindow: Duration

    public init(slop: Double, tapMaxDuration: Duration = .milliseconds(300),
                velocityWindow: Duration = .milliseconds(100)) {
        self.slop = slop
        self.tapMaxDuration = tapMaxDuration
        self.velocityWindow = velocityWindow
    }

    /// The settings for a screen `screenWidth` logical pixels wide.
    ///
    /// Slop: 2.5 mm when the touchscreen reports its resolution (`pixelsPerMillimetre`, from the
    /// axis resolution in units/mm of `EVIOCGABS`), else 1.5 % of the screen width; never under
    /// 8 px, never over 5 % of the width (a device claiming an absurd resolution must not make
    /// swiping impossible). Reports from the field: 5 px is too jumpy, fingers drift 10-20 px
    /// during a tap.
    public static func standard(screenWidth: Int, pixelsPerMillimetre: Double? = nil) -> GestureConfig {
        GestureConfig(slop: slop(screenWidth: screenWidth, pixelsPerMillimetre: pixelsPerMillimetre))
    }

    /// The slop distance in logical pixels: see ``standard(screenWidth:pixelsPerMillimetre:)``.
    public static func slop(screenWidth: Int, pixelsPerMillimetre: Double?) -> Double {
        let cap = max(8, 0.05 * Double(screenWidth))
        if let ppmm = pixelsPerMillimetre, ppmm.isFinite, ppmm > 0 { return min(cap, max(8, 2.5 * ppmm)) }
        return min(cap, max(8, 0.015 * Double(screenWidth)))
    }
}

/// What a touch means, as the carousel needs to hear it.
public enum Gesture: Equatable, Sendable {
    /// A finger landed: hold the show where it is.
    case pressed(at: Duration)
    /// The finger is dragging sideways: the picture sits `offset` logical pixels from where it
    /// was when the finger landed (negative = towards the left). The slop is not counted, so the
    /// first drag report is near 0 and the picture never jumps by the slop.
    case dragged(offset: Double, at: Duration)
    /// The finger left after a sideways drag, moving at `velocity` logical pixels per second
    /// (negative = towards the left).
    case dragEnded(offset: Double, velocity: Double, at: Duration)
    /// Down and up within the slop and ``GestureConfig/tapMaxDuration``, at the landing point
    /// (logical pixels).
    case tap(x: Double, y: Double, at: Duration)
    /// The finger left without a tap or a sideways drag (a long press, a vertical drag).
    case released(at: Duration)
    /// The touch was cancelled (the device went away, or a finger held still too long): a drag
    /// springs back, nothing counts as a tap.
    case cancelled(at: Duration)
}

/// Turns the driving finger's ``TouchSample``s into ``Gesture``s (docs/touch.md). Pure: the
/// times are the samples' own, so tests replay recordings on any clock.
///
/// A touch starts undecided. Moving past the slop decides it: mostly sideways (|dx| >= |dy|)
/// is a drag, mostly vertical is ignored until the finger leaves (vertical drags do nothing).
/// An undecided touch that ends within ``GestureConfig/tapMaxDuration`` is a tap.
public struct GestureRecognizer: Sendable {
    public var config: GestureConfig

    enum State: Equatable {
        case idle
        case undecided
        case dragging
        case ignored
    }

    private(set) var state: State = .idle
    private var downX = 0.0, downY = 0.0, downTime = Duration.zero
    /// Where the drag offset counts from: the landing x moved by the slop in the drag's direction.
    private var dragOrigin = 0.0
    /// Recent (time, x) samples for the release velocity, oldest first.
    private var recent: [(time: Duration, x: Double)] = []

    public init(config: GestureConfig) { self.config = config }

    /// True from a finger landing until it leaves.
    public var isTouching: Bool { state != .idle }

    /// Feeds one sample; returns what it means (often nothing). A sample whose position is not a
    /// finite number is ignored.
    public mutating func feed(_ sample: TouchSample) -> [Gesture] {
        guard sample.x.isFinite, sample.y.isFinite else { return [] }
        switch sample.phase {
        case .cancel:
            return cancel(at: sample.time)
        case .down:
            var out: [Gesture] = []
            // A down without an up before it (a lost release): end the old touch first.
            if state != .idle { out += feed(TouchSample(.up, x: recent.last?.x ?? downX, y: downY, time: sample.time)) }
            state = .undecided
            downX = sample.x; downY = sample.y; downTime = sample.time
            recent = [(sample.time, sample.x)]
            return out + [.pressed(at: sample.time)]
        case .move:
            guard state != .idle else { return [] }
            remember(sample)
            return decide(sample)
        case .up:
            guard state != .idle else { return [] }
            remember(sample)
            var out = decide(sample)
            switch state {
            case .dragging:
                out.append(.dragEnded(offset: sample.x - dragOrigin, velocity: velocity(at: sample.time),
                                      at: sample.time))
            case .undecided where sample.time - downTime <= config.tapMaxDuration:
                out.append(.tap(x: downX, y: downY, at: sample.time))
            default:
                out.append(.released(at: sample.time))
            }
            state = .idle
            recent.removeAll()
            return out
        }
    }

    /// Ends the touch in progress without a lift: `.cancelled` (nothing when no touch is in progress).
    public mutating func cancel(at time: Duration) -> [Gesture] {
        guard state != .idle else { return [] }
        state = .idle
        recent.removeAll()
        return [.cancelled(at: time)]
    }

    private mutating func decide(_ sample: TouchSample) -> [Gesture] {
        let dx = sample.x - downX, dy = sample.y - downY
        switch state {
        case .undecided:
            guard max(abs(dx), abs(dy)) > config.slop else { return [] }
            if abs(dx) >= abs(dy) {
                state = .dragging
                dragOrigin = downX + (dx > 0 ? config.slop : -config.slop)
                return [.dragged(offset: sample.x - dragOrigin, at: sample.time)]
            }
            state = .ignored
            return []
        case .dragging:
            return sample.phase == .move ? [.dragged(offset: sample.x - dragOrigin, at: sample.time)] : []
        case .ignored, .idle:
            return []
        }
    }

    private mutating func remember(_ sample: TouchSample) {
        recent.append((sample.time, sample.x))
        let horizon = sample.time - config.velocityWindow
        if let keep = recent.firstIndex(where: { $0.time >= horizon }), keep > 0 { recent.removeFirst(keep) }
    }

    /// Sideways velocity over the samples of the last ``GestureConfig/velocityWindow``, in
    /// logical pixels per second; 0 when they span no time.
    private func velocity(at now: Duration) -> Double {
        guard let first = recent.first, let last = recent.last else { return 0 }
        let span = Double((last.time - first.time).wholeNanoseconds) / 1e9
        guard span > 0.000_5 else { return 0 }
        return (last.x - first.x) / span
    }
}
