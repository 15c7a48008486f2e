// SPDX-License-Identifier: Apache-2.0
import CKioskSys

/// The version of kiosk-carousel, e.g. "0.2.0": the first line of the repository's top-level
/// VERSION file, compiled into CKioskSys (`kc_version`). The .deb's version, `--version`, the
/// control socket's `status` and the fetcher's `User-Agent` all read it from here.
public enum ProgramVersion {
    /// The version string, without a trailing newline; "unknown" if the file was empty.
    public static let string: String = {
        let text = String(cString: kc_version())
        return text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).first.map(String.init) ?? "unknown"
    }()
}
