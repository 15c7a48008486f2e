// SPDX-License-Identifier: Apache-2.0
/// The scene as layers for a display that stacks and blends them itself (KMS planes,
/// docs/planes.md): the same picture as ``SceneRenderer/render(_:slots:)`` without a pixel
/// composed here, except the page dots, drawn once per change into a small premultiplied strip.
extension SceneRenderer {
    /// The layers of `scene`, bottom to top, or nil when it cannot be described as layers (a frame
    /// overlay that has no layer form). A cross-fade is the base frame with the overlay frame
    /// above it at the fade's alpha (``FrameLayer/alpha(forWeight:)``); a slide is the picture's
    /// layers moved by the offset with the neighbour beside them (the bottom layer then does not
    /// cover the frame: the display puts a backdrop under it); the dots and the overlay come last.
    /// The slot frames are used as they are (borrowed: see ``FrameLayer``).
    /// A Ken Burns view (``Scene/Layer/kenBurns(slot:seed:progress:)``) is drawn anew every frame
    /// and cannot be borrowed as a layer: such a scene gives nil (composed on the CPU).
    public func layers(_ scene: Scene, slots: [Bitmap?]) -> [FrameLayer]? {
        for layer in [scene.base, scene.overlay, scene.neighbour] {
            if case .kenBurns? = layer { return nil }
        }
        var extra: FrameLayer?
        if let frameOverlay {
            switch frameOverlay.layer {
            case .unavailable: return nil
            case .empty: break
            case .layer(let l): extra = l
            }
        }
        var picture = [FrameLayer(bitmap: frame(for: scene.base, slots: slots))]
        if let overlay = scene.overlay, scene.weight > 0 {
            let top = frame(for: overlay, slots: slots)
            if scene.weight >= 256 {
                picture = [FrameLayer(bitmap: top)]
            } else {
                picture.append(FrameLayer(bitmap: top, alpha: FrameLayer.alpha(forWeight: scene.weight)))
            }
        }
        var out = picture
        if scene.offset != 0 {
            let o = min(width, max(-width, scene.offset))
            for i in out.indices { out[i].x = o }
            let neighbour = scene.neighbour.map { frame(for: $0, slots: slots) } ?? placeholder()
            out.append(FrameLayer(bitmap: neighbour, x: o < 0 ? o + width : o - width))
        }
        if let dots = scene.dots, dots.count > 1, let strip = dotStrip(count: dots.count, current: dots.current) {
            out.append(strip)
        }
        if let extra { out.append(extra) }
        return out
    }

    /// The page dots of ``Compositor/drawPageDots(into:count:current:)`` as a premultiplied
    /// ARGB8888 strip just covering them (its box from ``Compositor/pageDotLayout(frameWidth:frameHeight:count:)``).
    func dotStrip(count: Int, current: Int) -> FrameLayer? {
        let highlighted = ((current % count) + count) % count
        if let cached = dotStrips.first(where: { $0.count == count && $0.current == highlighted }) { return cached.layer }
        if dotStrips.first?.count != count { dotStrips = [] }
        guard let layer = Compositor.pageDotStrip(frameWidth: width, frameHeight: height, count: count, current: highlighted)
        else { return nil }
        dotStrips.append((count, highlighted, layer))
        return layer
    }
}
