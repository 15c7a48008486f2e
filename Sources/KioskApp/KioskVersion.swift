// SPDX-License-Identifier: Apache-2.0
import KioskContent
import KioskDisplay
import KioskImaging
import KioskInput
import KioskMQTT
import KioskSystem
import KioskText

/// The program's version and the libraries it runs with, for `--version` and the control
/// socket's `status`.
public enum KioskVersion {
    /// The version of kiosk-carousel, e.g. "0.2.0": the first line of the repository's
    /// top-level VERSION file, compiled into the C shim (the .deb's version comes from the same
    /// file).
    public static var string: String { ProgramVersion.string }

    /// One library: its name, the version it reports at run time, the headers' version, the
    /// file the dynamic loader mapped, and why it is not installed (``LibraryVersion``).
    public typealias Library = LibraryVersion

    /// Every library the program uses, in `--version`'s order: the image codecs' (the codec
    /// table, ``ImageCodec/libraryVersions``), the display's, the touchscreen's, the downloads',
    /// JSON's and the text's. Those linked are found among the loaded shared objects by the
    /// start of their file name (the soname's stem, as Debian installs it); those opened with
    /// dlopen on first use (libheif, libde265, libcurl, libcrypto, FreeType, HarfBuzz,
    /// fontconfig, FriBidi, libmosquitto) are opened to ask their version ("not installed" when one cannot be).
    public static var libraries: [Library] {
        ImageCodec.libraryVersions + DisplayVersions.versions + InputVersions.versions
            + ContentVersions.versions + [JSONValue.libraryVersion] + TextVersions.versions
            + [MosquittoVersion.version]
    }

    /// `kiosk-carousel --version`: the version on the first line, then one line per library
    /// (in the manner of `ffmpeg -version`).
    public static var report: String {
        var lines = ["kiosk-carousel \(string)"]
        let libraries = libraries
        let width = libraries.map(\.name.count).max() ?? 0
        for library in libraries {
            var parts: [String] = []
            if let running = library.running { parts.append("running \(running)") }
            if let built = library.builtWith { parts.append("built with \(built)") }
            if let reason = library.notInstalled {
                parts.insert("not installed (\(reason))", at: 0)
            } else {
                if library.running == nil && library.builtWith == nil { parts.append("reports no version") }
                parts.append(library.loadedFile.map { "loaded from \($0)" } ?? "not loaded")
            }
            lines.append(library.name + String(repeating: " ", count: width + 2 - library.name.count)
                         + parts.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }
}
