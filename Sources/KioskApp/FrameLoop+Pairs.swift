// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// `--pair-portraits` in the loop (docs/carousel.md "Pairs"): the shapes read off the loop go
/// to the policy, which pairs the sequence; a slot of a first is prepared with its partner; a
/// tap names the picture of the half it hit; the partner is announced and counted as shown.
extension FrameLoop {
    /// The partner of playlist item `item` to prepare with it (nil: alone, or no pairing).
    func partner(of item: Int) -> SlotPreparer.Partner? {
        guard let layout = policy.pairLayout, let other = policy.partners[item], other < carousel.items.count
        else { return nil }
        let p = carousel.items[other]
        return SlotPreparer.Partner(item: other, path: p.source, fit: p.fit, caption: p.caption, layout: layout)
    }

    /// The partner composed into the frame of the slot on screen showing `item`, if any, with
    /// its index in the playlist as it is now (a new playlist renumbers it: it is found by its
    /// file; nil when that is no longer in the playlist).
    func partnerOnScreen(of item: Int) -> SlotPreparer.Partner? {
        guard let slot = carousel.currentSlot, carousel.item(inSlot: slot) == item,
              var p = slots.partners[slot] else { return nil }
        if let now = policy.partners[item], now < carousel.items.count, carousel.items[now].source == p.path {
            p.item = now
        } else if p.item >= carousel.items.count || carousel.items[p.item].source != p.path {
            guard let found = carousel.items.firstIndex(where: { $0.source == p.path }) else { return nil }
            p.item = found
        }
        return p
    }

    /// The picture a tap at (`x`, `y`) logical pixels of a `width` x `height` screen (the output
    /// touched) hit on the current `item`: on a pair the partner in its second half, with the
    /// half's name; else `item` (no half).
    func tappedItem(_ item: Int, x: Double, y: Double, width: Int, height: Int) -> (item: Int, half: String?) {
        guard let p = partnerOnScreen(of: item) else { return (item, nil) }
        let second = p.layout.inSecondHalf(x: x, y: y, width: width, height: height)
        switch p.layout {
        case .sideBySide: return second ? (p.item, "right") : (item, "left")
        case .stacked: return second ? (p.item, "bottom") : (item, "top")
        }
    }

    /// Asks for the shapes of `playlist`'s pictures (off the loop) when pictures pair.
    func askShapes(of playlist: [PlaylistItem]) {
        configuration.pairShapes?.ask(paths: playlist.map(\.source))
    }

    /// The shapes read off the loop (on virtual time they are waited for): the policy pairs
    /// the sequence again with them.
    func takeShapes() {
        guard let reader = configuration.pairShapes else { return }
        driver.settle(reader, interrupt: configuration.signals?.wakeDescriptor ?? -1)
        guard let shapes = reader.take() else { return }
        policyStep { $0.learnShapes(shapes, at: clock.now, carousel: &$1) }
    }

    /// At the start: the first shapes, so the first picture is already shown paired (on
    /// virtual time for as long as they take, on the real clock at most ``PlayOrder/startWait``).
    func awaitFirstShapes() {
        guard let reader = configuration.pairShapes, reader.outstanding > 0 else { return }
        driver.settle(reader, interrupt: configuration.signals?.wakeDescriptor ?? -1)
        if reader.answers.count == 0 {
            _ = reader.answers.waitForValues(timeout: PlayOrder.startWait,
                                             interrupt: configuration.signals?.wakeDescriptor ?? -1)
        }
        if let shapes = reader.take() {
            policyStep { $0.learnShapes(shapes, at: clock.now, carousel: &$1) }
        }
    }

    /// Slots whose frame was asked with another partner than their item has now (the pairs
    /// changed: shapes came, a new sequence) are prepared again; one on screen stays until it
    /// leaves it (``Carousel/imageChanged(item:at:)``: never a cut).
    func reprepareChangedPairs() {
        guard configuration.pairShapes != nil else { return }
        var changed: [Int] = []
        for s in 0..<3 where carousel.status(ofSlot: s) != .empty {
            guard let item = carousel.item(inSlot: s), !changed.contains(item) else { continue }
            if slots.askedPartner(slot: s)?.item != policy.partners[item] { changed.append(item) }
        }
        for item in changed { handle(carousel.imageChanged(item: item, at: clock.now)) }
    }
}
