// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskImaging
import KioskSystem

/// An animation's frames made on the decode worker (``SlotPreparer``) for one slot, from its
/// second frame on: each decoded by its ``AnimationDecoder`` and placed into a new frame of the
/// screen's size (XRGB8888, `width` x `height`), its caption drawn. Only the worker touches it
/// (``next()``); the frame loop only holds it and hands it back there.
public final class AnimationStream: @unchecked Sendable {
    /// What one step made.
    public enum Step: Sendable {
        /// The next frame (ownership passes to the caller) and how long it shows, milliseconds.
        case frame(Bitmap, milliseconds: Int)
        /// The animation is over (its loop count played): the last frame stays.
        case ended
        /// The next frame could not be decoded (damage the file runs into): the frame on screen
        /// stays.
        case failed(ImageError)
    }

    public let decoder: AnimationDecoder
    public let width: Int, height: Int
    let fit: FitMode
    let background: RGBColor
    /// Frames decoded ahead of the one on screen: as many screen frames as fit beside the
    /// decoder in ``DecodeOptions/maxDecoderBytes``, from 1 to 3.
    public let framesAhead: Int
    /// How long the first frame (the slot's own, made by the preparer) shows, milliseconds.
    public let firstMilliseconds: Int
    private let finish: (Bitmap) -> Void
    /// Called once when the stream goes (the preparer's count of what animations hold).
    var released: (() -> Void)?

    /// What it holds at most, bytes: the decoder's state and the frames made ahead of the one
    /// on screen (those made and those being made: ``framesAhead``).
    public var heldBytes: Int {
        let frame = Bitmap.byteCount(width: width, height: height) ?? Int.max
        let (frames, overflow) = frame.multipliedReportingOverflow(by: framesAhead)
        let (sum, over) = decoder.heldBytes.addingReportingOverflow(frames)
        return overflow || over ? Int.max : sum
    }

    deinit { released?() }

    /// Takes `decoder` and decodes its first frame (shown already as the slot's frame), to read
    /// its duration. `finish` draws into each frame made (the caption), on the worker.
    /// - Throws: the first frame's ``ImageError``.
    init(decoder: AnimationDecoder, width: Int, height: Int, fit: FitMode, background: RGBColor,
         options: DecodeOptions, finish: @escaping (Bitmap) -> Void) throws(ImageError) {
        self.decoder = decoder
        self.width = width; self.height = height; self.fit = fit; self.background = background
        self.finish = finish
        guard let first = try decoder.skipFrame() else {
            throw .corrupt(path: decoder.name, reason: "the animation has no frame")
        }
        firstMilliseconds = first
        framesAhead = decoder.framesAhead(frameBytes: Bitmap.byteCount(width: width, height: height) ?? Int.max,
                                          options: options)
    }

    /// Decodes and places the next frame (on the worker).
    func next() -> Step {
        guard let frame = Bitmap(allocatingWidth: width, height: height) else {
            return .failed(.outOfMemory(path: decoder.name, reason: "cannot allocate a \(width)x\(height) frame"))
        }
        do throws(ImageError) {
            guard let (milliseconds, _) = try decoder.placeNext(into: frame, fit: fit, background: background) else {
                return .ended
            }
            finish(frame)
            return .frame(frame, milliseconds: milliseconds)
        } catch {
            return .failed(error)
        }
    }
}

/// One frame the decode worker made for a slot's animation (``SlotAnimations``).
struct AnimationAnswer: Sendable {
    var slot: Int, ticket: Int
    var step: AnimationStream.Step
}

/// The animations playing in the carousel's slots (docs/images.md "Animations"): for each slot
/// whose image is an animation, its frames decoded ahead on the decode worker (never on the
/// loop: each frame is a job of the ``SlotPreparer``'s queue, its answer posted to ``answers``,
/// whose descriptor wakes the loop) and shown on the loop's clock. A frame is due when the one
/// before it has had its duration; the slot's frame is then replaced by it, so the scene drawn
/// (a still, a fade, a slide) shows the animation's current frame. An animation plays while its
/// slot is on screen and stands still while it is not; it loops as its file says, for as long as
/// its item is shown. On virtual time the loop waits for the frames asked for before time moves
/// on (``LoopDriver/settle(_:interrupt:)``), so every frame reaches the screen at its exact time.
///
/// Runs on the frame loop's thread.
final class SlotAnimations: OffLoopWork {

    /// One slot's animation.
    private struct Player {
        let ticket: Int
        let stream: AnimationStream
        let source: String
        /// Frames made and not shown yet, with their durations (ms), in order.
        var ahead: [(Bitmap, Int)] = []
        /// Frames asked for and not answered.
        var asked = 0
        /// When the frame on screen gives way; nil until the slot is first on screen.
        var due: Duration?
        /// How long the frame on screen shows, ms.
        var showing: Int
        /// The slot was off screen since `pausedAt` (the animation stands still).
        var pausedAt: Duration?
        /// No more frames come (played out, or damaged).
        var ended = false
    }

    let preparer: SlotPreparer
    /// The worker's answers (the preparer's mailbox, made with its own).
    let answers: Mailbox<AnimationAnswer>
    private var players: [Player?] = [nil, nil, nil]
    /// Frames asked for of the worker and not taken yet (all slots, stale ones too).
    private(set) var outstanding = 0
    /// Frames shown after the first, for the tests and the log.
    private(set) var framesShown = 0

    init(preparer: SlotPreparer) {
        self.preparer = preparer
        answers = preparer.animationFrames
    }

    var wakeDescriptor: Int32 { answers.wakeDescriptor }

    /// Whether `slot` plays an animation.
    func isPlaying(slot: Int) -> Bool { players[slot] != nil }

    /// `slot` shows `stream`'s first frame under `ticket`: its frames are asked for.
    func start(slot: Int, ticket: Int, stream: AnimationStream, source: String) {
        players[slot] = Player(ticket: ticket, stream: stream, source: source, showing: stream.firstMilliseconds)
        refill(slot)
    }

    /// `slot`'s animation stops (another image, or none); answers still coming for it are dropped.
    func stop(slot: Int) { players[slot] = nil }

    func waitForAnswers(interrupt: Int32) {
        while outstanding > 0 {
            if answers.waitForValues(timeout: .seconds(1), interrupt: interrupt) != .timedOut { break }
        }
    }

    /// Takes the worker's answers into the slots' rings.
    func takeAnswers() {
        for answer in answers.take() {
            outstanding -= 1
            guard var player = players[answer.slot], player.ticket == answer.ticket else { continue }
            player.asked -= 1
            // Nothing after the end (frames asked for before it came are dropped).
            guard !player.ended else {
                players[answer.slot] = player
                continue
            }
            switch answer.step {
            case .frame(let frame, let milliseconds):
                player.ahead.append((frame, milliseconds))
            case .ended:
                player.ended = true
            case .failed(let error):
                player.ended = true
                Log.warning("animation stopped", path: player.source,
                            reason: error.reason + "; its frame on screen stays")
            }
            players[answer.slot] = player
        }
    }

    /// Moves the animations of the slots `visible` (those of the scene on screen) to show time
    /// `now`: each frame due is handed to `show` (its slot's frame from now on), and frames are
    /// asked for to keep each ring full. Slots not visible stand still. Returns whether a frame
    /// changed.
    func advance(visible: Set<Int>, at now: Duration, show: (Int, Bitmap) -> Void) -> Bool {
        var changed = false
        for slot in 0..<3 {
            guard var player = players[slot] else { continue }
            guard visible.contains(slot) else {
                if player.due != nil, player.pausedAt == nil { player.pausedAt = now }
                players[slot] = player
                continue
            }
            if let paused = player.pausedAt, let due = player.due {
                player.due = due + (now - paused)
                player.pausedAt = nil
            }
            let firstDue = now + .milliseconds(Int64(player.showing))
            var due = player.due ?? firstDue
            var shown: Bitmap?
            while now >= due, !player.ahead.isEmpty {
                let (frame, milliseconds) = player.ahead.removeFirst()
                shown = frame
                player.showing = milliseconds
                // Far behind (a real clock held up): the animation's clock starts again now.
                let next = due + .milliseconds(Int64(milliseconds))
                due = next < now ? now + .milliseconds(Int64(milliseconds)) : next
                framesShown += 1
            }
            player.due = due
            players[slot] = player
            if let shown {
                show(slot, shown)
                changed = true
            }
            refill(slot)
        }
        return changed
    }

    /// When the next frame of a slot on screen is due: the frame loop's `.animation` deadline.
    /// A frame due already whose frame has not come is not a deadline (its answer wakes the loop).
    func nextDue(after now: Duration) -> Duration? {
        players.compactMap { player -> Duration? in
            guard let player, player.pausedAt == nil, let due = player.due, !player.ended || !player.ahead.isEmpty
            else { return nil }
            return due > now || !player.ahead.isEmpty ? due : nil
        }.min()
    }

    /// Asks the worker for frames until `slot`'s ring (frames made and asked for) is full.
    private func refill(_ slot: Int) {
        guard var player = players[slot] else { return }
        while !player.ended, player.ahead.count + player.asked < player.stream.framesAhead {
            player.asked += 1
            outstanding += 1
            let stream = player.stream, ticket = player.ticket, answers = answers
            preparer.onWorker { answers.post(AnimationAnswer(slot: slot, ticket: ticket, step: stream.next())) }
        }
        players[slot] = player
    }
}
