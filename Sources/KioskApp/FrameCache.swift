// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

/// The memory cache of prepared, screen-sized frames (docs/content.md): the last frames made,
/// least recently used first out, bounded in bytes. A frame moving back into a slot (a swipe
/// back, a short playlist going round) is taken from here instead of being decoded again.
///
/// Frames are shared, not copied: a prepared frame is never written again (the renderer blends
/// into its own scratch frames), so the cache and a slot may hold the same ``Bitmap``. Not
/// thread-safe: the ``SlotPreparer`` calls it under its lock.
struct FrameCache {
    /// A frame is the image of a source fitted one way. For a local file, `version` is the
    /// identity of its content when it was read (device, inode, size, times in ns), so a file
    /// renamed over, rewritten in place or copied over under the same name is decoded again,
    /// never served from an older frame.
    struct Key: Hashable {
        var source: String
        var fit: FitMode
        var version: FileIdentity?
        /// The caption drawn into the frame, if any.
        var caption: String?
        /// The frame's size in pixels: a frame of another display size is never handed out.
        var width = 0, height = 0
    }

    /// Most bytes of pixels held (width x height x 4 per frame).
    let budget: Int
    private var entries: [(key: Key, frame: Bitmap)] = []   // most recently used last
    private(set) var bytes = 0

    init(budget: Int) { self.budget = max(0, budget) }

    /// The frame for `key`, marked as just used; nil when not held.
    mutating func frame(for key: Key) -> Bitmap? {
        guard let i = entries.firstIndex(where: { $0.key == key }) else { return nil }
        let entry = entries.remove(at: i)
        entries.append(entry)
        return entry.frame
    }

    /// Whether a frame for `key` is held (without marking it used).
    func contains(_ key: Key) -> Bool { entries.contains { $0.key == key } }

    /// Keeps `frame` under `key`, dropping the least recently used frames beyond the budget. A
    /// frame larger than the whole budget is not kept.
    mutating func insert(_ frame: Bitmap, for key: Key) {
        entries.removeAll { $0.key == key }
        let size = Self.size(frame)
        if size <= budget { entries.append((key, frame)) }
        bytes = entries.reduce(0) { $0 + Self.size($1.frame) }
        while bytes > budget, let oldest = entries.first {
            bytes -= Self.size(oldest.frame)
            entries.removeFirst()
        }
    }

    /// Drops the frames of `source` (every fit).
    mutating func remove(source: String) {
        entries.removeAll { $0.key.source == source }
        bytes = entries.reduce(0) { $0 + Self.size($1.frame) }
    }

    /// Number of frames held.
    var count: Int { entries.count }

    private static func size(_ frame: Bitmap) -> Int {
        Bitmap.byteCount(width: frame.width, height: frame.height) ?? Int.max
    }
}
