// SPDX-License-Identifier: Apache-2.0
import KioskSystem

/// The display's library for `--version`: libdrm (linked), which has no version call and no
/// version in its headers, so only the file the dynamic loader mapped is known.
public enum DisplayVersions {
    /// libdrm's line: no version, the file loaded (nil when the loader has not mapped it).
    public static var versions: [LibraryVersion] {
        [LibraryVersion(name: "libdrm", running: nil, builtWith: nil,
                        loadedFile: SharedLibrary.loadedFile("libdrm.so"))]
    }
}
