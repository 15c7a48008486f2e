// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskImaging
import KioskText

/// Where a slot's caption comes from (`--caption`, docs/text.md "Captions").
public enum CaptionSource: String, CaseIterable, Sendable {
    /// The item's `caption` (manifest, playlist); none without one.
    case item
    /// The item's `caption`, else the image's own description (EXIF ImageDescription, XP
    /// comment, IPTC caption: ``ImageDescription``).
    case exif
    /// No captions at all.
    case off
}

extension SlotPreparer {
    /// The caption of `job` under ``captionSource``: its own, or the file's description.
    func caption(for job: Job) -> String? {
        switch captionSource {
        case .off: return nil
        case .item: return job.caption
        case .exif: return job.caption ?? ImageDescription.read(path: job.path)
        }
    }

    /// Draws the caption of `job` into its freshly prepared `frame` (on the decode worker); the
    /// first one makes the painter (``makeCaptions``).
    func drawCaption(_ job: Job, into frame: Bitmap) {
        guard let text = caption(for: job) else { return }
        if captions == nil, let make = makeCaptions {
            makeCaptions = nil
            captions = make()
        }
        captions?.draw(text, into: frame)
    }
}
