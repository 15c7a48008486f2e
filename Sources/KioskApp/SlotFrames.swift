// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskDisplay
import KioskSystem

/// The three slots' frames (docs/frame-loop.md): the prepared frame of each physical slot of the
/// ``Carousel``, asked for from the decode worker (``SlotPreparer``), and the local file behind
/// each with the identity it was read with. The files are looked at every ``checkInterval``
/// off the loop (stat(2) on a queue of the preparer's); one whose content changed under the
/// same name has its item prepared again (``Carousel/imageChanged(item:at:)``: never a cut on
/// screen). A directory's watch reports its own changes as they happen.
///
/// Runs on the frame loop's thread; owns the frames (the renderer borrows them for a frame).
final class SlotFrames {
    /// The decode worker.
    let preparer: SlotPreparer
    /// The animations playing in the slots (their frames made on the decode worker).
    let animations: SlotAnimations
    /// How often the files behind the slots are looked at for a change of content (1 s).
    let checkInterval: Duration
    /// The prepared frame of each physical slot (nil: none, or being prepared).
    private(set) var frames: [Bitmap?] = [nil, nil, nil]
    /// The frames of each physical slot at the other outputs' sizes (``SlotPreparer/outputSizes``,
    /// in its order; docs/displays.md "Several outputs"): `outputFrames[size][slot]`.
    private(set) var outputFrames: [[Bitmap?]] = []
    /// The partner composed into each slot's frame (``SlotPreparer/Result/partner``): what a
    /// tap on its second half reports; nil: the slot's picture alone.
    private(set) var partners: [SlotPreparer.Partner?] = [nil, nil, nil]
    /// The job each slot's frame was asked for with (asked again for the other outputs' sizes).
    private var jobs: [SlotPreparer.Job?] = [nil, nil, nil]
    /// The local file behind each slot's frame, with the identity it was read with.
    private var files: [(ticket: Int, path: String, identity: FileIdentity)?] = [nil, nil, nil]
    /// When the files are looked at next; nil: none to look at (or virtual time, where files
    /// do not change under the show).
    private(set) var nextCheck: Duration?

    init(preparer: SlotPreparer, checkInterval: Duration) {
        self.preparer = preparer
        animations = SlotAnimations(preparer: preparer)
        self.checkInterval = checkInterval
        outputFrames = preparer.outputSizes.map { _ in [nil, nil, nil] }
    }

    /// Readable when decodes or file checks have finished.
    var wakeDescriptors: [Int32] {
        [preparer.results.wakeDescriptor, preparer.changedFiles.wakeDescriptor, preparer.goneFiles.wakeDescriptor,
         animations.wakeDescriptor]
    }

    /// Asks for a frame of `item` (playlist index `index`) for `slot` under `ticket`; the slot's
    /// old frame goes now, before the new one is made.
    /// `partner`: the picture sharing the frame (`--pair-portraits`); nil: the item alone.
    func prepare(slot: Int, ticket: Int, index: Int, item: PlaylistItem, partner: SlotPreparer.Partner? = nil) {
        frames[slot] = nil
        animations.stop(slot: slot)
        files[slot] = nil
        partners[slot] = nil
        for i in outputFrames.indices { outputFrames[i][slot] = nil }
        var job = SlotPreparer.Job(slot: slot, ticket: ticket, item: index, path: item.source, fit: item.fit,
                                   sha256: item.sha256, caption: item.caption)
        job.partner = partner
        jobs[slot] = job
        preparer.submit(job)
    }

    /// The partner each slot's frame was asked with (its job's), whatever the result.
    func askedPartner(slot: Int) -> SlotPreparer.Partner? { jobs[slot]?.partner }

    /// Slots the carousel left empty let their frames go.
    func dropEmpty(_ carousel: Carousel) {
        for s in 0..<3 where carousel.status(ofSlot: s) == .empty {
            frames[s] = nil; files[s] = nil; jobs[s] = nil; partners[s] = nil
            animations.stop(slot: s)
            for i in outputFrames.indices { outputFrames[i][s] = nil }
        }
    }

    /// `slot`'s frame is ready, read from `source` (a local file with `identity`, watched for
    /// changes; nil: a download or a file that cannot be watched).
    /// `others`: its frames at the other outputs' sizes (``SlotPreparer/Result/outputFrames``).
    /// `animation`: the rest of the frames when the image is an animation (played in the slot,
    /// ``SlotAnimations``; the other outputs keep its first frame).
    /// `partner`: the partner composed into the frame (nil: the picture alone).
    func ready(slot: Int, frame: Bitmap, others: [Bitmap?] = [], ticket: Int, source: String, identity: FileIdentity?,
               animation: AnimationStream? = nil, partner: Int? = nil) {
        frames[slot] = frame
        partners[slot] = partner != nil && partner == jobs[slot]?.partner?.item ? jobs[slot]?.partner : nil
        animations.stop(slot: slot)
        if let animation { animations.start(slot: slot, ticket: ticket, stream: animation, source: source) }
        for i in outputFrames.indices { outputFrames[i][slot] = i < others.count ? others[i] : nil }
        files[slot] = identity.map { (ticket, source, $0) }
    }

    /// A changed file that does not decode (yet): the old picture stays in `slots`, and the file
    /// is watched again from what it is now.
    func keepWatching(slots: [Int], ticket: Int, source: String, identity: FileIdentity) {
        for s in slots { files[s] = (ticket, source, identity) }
    }

    /// The items whose files changed since the last call (reported by the file checks), each
    /// once; their slots stop watching them.
    func changedItems(_ carousel: Carousel) -> [Int] {
        var changed: [Int] = []
        for ticket in preparer.changedFiles.take() {
            for s in 0..<3 where files[s]?.ticket == ticket {
                files[s] = nil
                if let item = carousel.item(inSlot: s), !changed.contains(item) { changed.append(item) }
            }
        }
        return changed
    }

    /// Looks at the files (off the loop) when ``nextCheck`` is due.
    func checkFilesIfDue(at now: Duration, driver: LoopDriver) {
        guard let due = nextCheck, now >= due else { return }
        preparer.checkFiles(files.compactMap { $0 })
        nextCheck = driver.worldDeadline(now + checkInterval)
    }

    /// Sets ``nextCheck`` when there are files to look at and none is set.
    func scheduleCheck(at now: Duration, driver: LoopDriver) {
        if files.allSatisfy({ $0 == nil }) {
            nextCheck = nil
        } else if nextCheck == nil {
            nextCheck = driver.worldDeadline(now + checkInterval)
        }
    }

    /// The display changed size: every frame goes, and the preparer makes them at the new size.
    /// `outputSizes`: the other outputs' sizes (nil: as they were).
    func resize(width: Int, height: Int, outputSizes: [FrameSize]? = nil) {
        preparer.resize(width: width, height: height, outputSizes: outputSizes)
        outputFrames = preparer.outputSizes.map { _ in [nil, nil, nil] }
        jobs = [nil, nil, nil]
        frames = [nil, nil, nil]
        partners = [nil, nil, nil]
        for s in 0..<3 { animations.stop(slot: s) }
        files = [nil, nil, nil]
    }

    /// The other outputs' sizes changed, the display's own did not: their frames go, and each
    /// slot that has its frame asks the preparer for frames of the new sizes only
    /// (``SlotPreparer/Job/outputsOnly``); the carousel goes on meanwhile.
    func resizeOutputs(_ outputSizes: [FrameSize]) {
        preparer.resize(width: preparer.width, height: preparer.height, outputSizes: outputSizes)
        outputFrames = outputSizes.map { _ in [nil, nil, nil] }
        guard !outputSizes.isEmpty else { return }
        for s in 0..<3 where frames[s] != nil {
            guard var job = jobs[s] else { continue }
            job.outputsOnly = true
            preparer.submit(job)
        }
    }

    /// The animations of the slots `scene` shows move to `now`: a frame due replaces its slot's
    /// frame. Returns whether one did (the scene must be drawn again). `scene` nil: nothing is on
    /// screen (the screen is off or another VT has it), every animation stands still.
    func advanceAnimations(_ scene: Scene?, at now: Duration) -> Bool {
        var visible: Set<Int> = []
        for layer in [scene?.base, scene?.overlay, scene?.offset != 0 ? scene?.neighbour : nil] {
            if case .slot(let s)? = layer { visible.insert(s) }
        }
        return animations.advance(visible: visible, at: now) { slot, frame in frames[slot] = frame }
    }

    /// The frames of an outputs-only job (``resizeOutputs(_:)``) go to their slot when it still
    /// shows that job's frame. Returns whether they were taken.
    func outputsReady(_ result: SlotPreparer.Result) -> Bool {
        guard result.outputsOnly, jobs[result.slot]?.ticket == result.ticket, frames[result.slot] != nil,
              case .frame = result.outcome else { return false }
        for i in outputFrames.indices { outputFrames[i][result.slot] = i < result.outputFrames.count ? result.outputFrames[i] : nil }
        return true
    }
}
