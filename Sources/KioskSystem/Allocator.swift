// SPDX-License-Identifier: Apache-2.0
import CKioskSys

/// The process's allocator (glibc malloc), set once at start.
public enum Allocator {
    /// Blocks of at least this many bytes are mapped on their own and given back to the kernel
    /// when freed: 256 KiB, below any frame (640x400 XRGB8888 is 1000 KiB) and above the rows and
    /// small buffers the decoders use.
    public static let mappedBlockBytes = 256 << 10

    /// Makes every block of ``mappedBlockBytes`` or more a mapping of its own (`mallopt(3)`
    /// `M_MMAP_THRESHOLD`). glibc's default threshold is dynamic: each mapped block freed raises
    /// it to that block's size (up to 32 MiB), after which frames come from the heaps of the
    /// decode threads that made them and, freed on the frame loop's thread, stay resident: the
    /// soak (docs/soak.md) saw resident memory swing between 70 and 175 MiB at 640x400 where the
    /// frames alive took about 40. Returns false when glibc refuses the setting.
    @discardableResult
    public static func mapLargeBlocks() -> Bool {
        kc_malloc_set_mmap_threshold(mappedBlockBytes) == 1
    }
}
