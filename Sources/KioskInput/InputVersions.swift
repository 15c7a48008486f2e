// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// The touchscreen's library for `--version`: libevdev (linked), which has no version call and
/// no version in its headers, so only the file the dynamic loader mapped is known.
public enum InputVersions {
    /// libevdev's line: no version, the file loaded (nil when the loader has not mapped it).
    public static var versions: [LibraryVersion] {
        [LibraryVersion(name: "libevdev", running: nil, builtWith: nil,
                        loadedFile: SharedLibrary.loadedFile("libevdev.so"))]
    }
}
