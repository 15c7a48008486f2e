// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// The colour space pictures are converted to (docs/colour.md): sRGB, or the
/// screen's own ICC profile (`--screen-profile`), with a rendering intent (`--rendering-intent`);
/// or nothing at all (`--screen-profile off`: the stored numbers shown as they are).
public struct ColourTarget: Sendable, Hashable {
    /// How colours outside the screen's gamut are brought in (ICC.1:2010 section 6.2).
    public enum Intent: String, Sendable, Hashable, CaseIterable {
        /// The whole gamut compressed where the profiles have tables for it (matrix-shaper
        /// profiles have none: then as relative colorimetric).
        case perceptual
        /// Colours inside the screen's gamut kept exactly, those outside clipped to it.
        case relativeColorimetric = "relative-colorimetric"
    }

    /// The screen's ICC profile (an RGB display profile), nil for sRGB.
    public var screenProfile: ScreenProfile?
    public var intent: Intent
    /// False: no conversion at all (the stored numbers are shown as they are, as before colour
    /// management; HDR pictures are still reduced to 8 bits by libheif, not tone-mapped).
    public var enabled: Bool

    public init(screenProfile: ScreenProfile? = nil, intent: Intent = .perceptual, enabled: Bool = true) {
        self.screenProfile = screenProfile
        self.intent = intent
        self.enabled = enabled
    }

    /// sRGB, perceptual: the default.
    public static let sRGB = ColourTarget()
    /// No colour management.
    public static let off = ColourTarget(enabled: false)

    /// What the log calls it: "sRGB" or the profile's description.
    public var name: String { enabled ? screenProfile?.name ?? "sRGB" : "off" }
}

/// A screen's ICC profile: its bytes and what it calls itself.
public struct ScreenProfile: Sendable, Hashable {
    /// The profile, ICC.1:2010.
    public let bytes: [UInt8]
    /// Its description tag, or the file it came from.
    public let name: String

    /// Reads the profile at `path` and checks that Little CMS can convert sRGB to it (an RGB
    /// output profile).
    /// - Throws: ``ImageError/unreadable(path:errno:)`` when the file cannot be read (`EISDIR`
    ///   for a folder), ``ImageError/notRegularFile(path:kind:)`` for a device, FIFO or socket,
    ///   ``ImageError/corrupt(path:reason:)`` when it is no usable ICC display profile (with
    ///   Little CMS's reason) or larger than ``ColourDescription/maxProfileBytes``.
    public init(path: String) throws(ImageError) {
        let bytes: [UInt8]
        do {
            bytes = try readRegularFile(path, limit: ColourDescription.maxProfileBytes)
        } catch {
            if error.errno == EFBIG {
                let limit = byteSize(ColourDescription.maxProfileBytes)
                throw .corrupt(path: path, reason: "larger than \(limit), too large for an ICC profile")
            }
            // A folder or a device: say which, as for a picture, not a bare EINVAL.
            var info = stat()
            if error.errno == EINVAL, stat(path, &info) == 0 {
                try ImageDecoder.requireRegularFile(info.st_mode, path: path)
            }
            throw .unreadable(path: path, errno: error.errno)
        }
        let test = ColourConversion.probe(screen: bytes)
        if let problem = test.problem { throw .corrupt(path: path, reason: problem) }
        self.bytes = bytes
        name = test.description.isEmpty ? path : test.description
    }

    /// A profile given as bytes (tests); `name` stands in for its description.
    public init(bytes: [UInt8], name: String) {
        self.bytes = bytes
        self.name = name
    }
}

extension ScreenProfile {
    /// A matrix-shaper display profile made by Little CMS for `primaries` with the sRGB curve
    /// (or `primaries.gamma`'s inverse power), named `name`: for a screen whose primaries are
    /// known but that has no ICC file, or to embed a known space in a test picture. nil when
    /// Little CMS refuses the primaries.
    public init?(primaries c: Chromaticities, name: String) {
        guard let bytes = ColourConversion.makeProfile(c) else { return nil }
        self.init(bytes: bytes, name: name)
    }
}
