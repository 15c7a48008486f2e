// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem

/// A panel's backlight through the kernel's backlight class (`/sys/class/backlight/NAME`,
/// Documentation/ABI/stable/sysfs-class-backlight): `max_brightness` is read once, and a level
/// is written to `brightness` as that share of it (docs/power.md). The brightness found when
/// it was opened is put back by ``restore()``, so a stopped show leaves the panel as it found it.
///
/// Writes go straight to the attribute (one `write(2)` of a few bytes; the driver sets a PWM
/// duty or sends an I2C command) and only when the raw value changes.
public final class Backlight {
    /// Where the kernel lists backlights.
    public static let classDirectory = "/sys/class/backlight"

    /// The device's directory, e.g. `/sys/class/backlight/rpi_backlight`.
    public let directory: String
    /// Its name (the directory's last component).
    public var name: String { String(directory.split(separator: "/").last ?? Substring(directory)) }
    /// `max_brightness`: the raw value of full brightness.
    public let maxBrightness: Int
    /// `type`: `firmware`, `platform` or `raw` (nil when the file is missing).
    public let type: String?
    /// The raw `brightness` found when it was opened (put back by ``restore()``).
    public let original: Int
    /// The raw value last written (``original`` before the first write).
    public private(set) var current: Int

    /// Reads `max_brightness`, `brightness` and `type` in `directory`.
    /// - Throws: ``DisplayError/system(_:advice:)`` when a file cannot be read;
    ///   ``DisplayError/badValue(path:reason:)`` when a value is not a number, or
    ///   `max_brightness` is not positive.
    public init(directory: String) throws(DisplayError) {
        self.directory = directory
        let maximum = try Self.readNumber(directory + "/max_brightness")
        guard maximum > 0 else {
            throw .badValue(path: directory + "/max_brightness",
                            reason: "max_brightness is \(maximum), not a positive number")
        }
        maxBrightness = maximum
        original = try Self.readNumber(directory + "/brightness")
        current = original
        type = (try? readRegularFile(directory + "/type", limit: 4096)).map { Self.text($0) }
    }

    /// `backlight /sys/class/backlight/NAME (raw, max_brightness 255)`.
    public var summary: String {
        "backlight \(directory) (\(type.map { "\($0), " } ?? "")max_brightness \(maxBrightness))"
    }

    /// The raw value for `permille` of full brightness: rounded, and at least 1 for any level
    /// above zero (on many panels 0 is dark, not dim).
    public static func raw(permille: Int, maxBrightness: Int) -> Int {
        let p = min(1000, max(0, permille))
        guard p > 0 else { return 0 }
        return max(1, (p * maxBrightness + 500) / 1000)
    }

    /// Sets the backlight to `permille` of full brightness (``raw(permille:maxBrightness:)``);
    /// returns the raw value. Nothing is written when it is the value last written.
    /// - Throws: ``DisplayError/system(_:advice:)`` (`open` or `write` of `brightness`, with the
    ///   advice for EACCES and EROFS).
    @discardableResult
    public func set(permille: Int) throws(DisplayError) -> Int {
        let value = Self.raw(permille: permille, maxBrightness: maxBrightness)
        guard value != current else { return value }
        try write(value)
        current = value
        return value
    }

    /// Puts back the brightness found when it was opened (errors are ignored: the show is ending).
    public func restore() {
        guard current != original else { return }
        if (try? write(original)) != nil { current = original }
    }

    private func write(_ value: Int) throws(DisplayError) {
        let path = directory + "/brightness"
        let advice = "the user needs write access to it (docs/power.md: a udev rule for group video, "
            + "and a unit without ProtectKernelTunables= or with ReadWritePaths= for it)"
        do throws(SystemError) {
            let fd = try FileDescriptor.open(path, O_WRONLY)
            let bytes = Array("\(value)\n".utf8)
            let n = try syscall("write", path: path) { Glibc.write(fd.rawValue, bytes, bytes.count) }
            if n != bytes.count {
                throw SystemError(operation: "write (\(n) of \(bytes.count) bytes)", path: path, errno: EIO)
            }
        } catch {
            throw .system(error, advice: [EACCES, EPERM, EROFS].contains(error.errno) ? advice : nil)
        }
    }

    /// Which backlight `--backlight auto` uses for the panel on connector `connectorName` (a DRM
    /// connector such as `DSI-1` or `HDMI-A-1`; nil for fbdev, where the panel is not named).
    ///
    /// An external screen (HDMI, DisplayPort, DVI, VGA, analogue TV, QEMU's `Virtual`) has its own
    /// light, which no backlight here sets: none. Otherwise (a built-in panel: DSI, DPI, eDP,
    /// LVDS, SPI; or fbdev) the one device in `root`, or among several the kernel's order of
    /// preference (sysfs-class-backlight: `firmware`, then `platform`, then `raw`), then by name.
    /// - Returns: the device's directory, or nil and why not (for the log).
    public static func choose(
        root: String = classDirectory, connectorName: String?
    ) -> (directory: String?, why: String) {
        if let connectorName, isExternal(connectorName) {
            return (nil, "\(connectorName) is an external screen (its light is its own)")
        }
        let names = ((try? listDirectory(root)) ?? []).compactMap(\.name).filter { !$0.hasPrefix(".") }.sorted()
        guard !names.isEmpty else { return (nil, "no backlight in \(root)") }
        func rank(_ name: String) -> Int {
            let t = (try? readRegularFile("\(root)/\(name)/type", limit: 4096)).map(text)
            return ["firmware": 0, "platform": 1, "raw": 2][t ?? ""] ?? 3
        }
        let best = names.min { (rank($0), $0) < (rank($1), $1) }!
        return (
            "\(root)/\(best)",
            names.count == 1 ? "the only backlight" : "the first of \(names.count) by type (firmware, platform, raw)"
        )
    }

    /// Whether a DRM connector name (`HDMI-A-1`) is of an external screen's type (drm_connector.c's
    /// names: HDMI-A, HDMI-B, DP, DVI-I, DVI-D, DVI-A, VGA, Composite, SVIDEO, Component, DIN, TV, Virtual).
    public static func isExternal(_ connectorName: String) -> Bool {
        let type = connectorName.split(separator: "-").dropLast().joined(separator: "-")
        return ["HDMI-A", "HDMI-B", "DP", "DVI-I", "DVI-D", "DVI-A", "VGA", "Composite", "SVIDEO", "Component",
                "DIN", "TV", "Virtual"].contains(type.isEmpty ? connectorName : type)
    }

    private static func readNumber(_ path: String) throws(DisplayError) -> Int {
        let bytes: [UInt8]
        do { bytes = try readRegularFile(path, limit: 4096) } catch { throw .system(error) }
        guard let n = Int(text(bytes)), n >= 0 else {
            throw .badValue(path: path, reason: "'\(text(bytes))' is not a whole number")
        }
        return n
    }

    private static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == " " }).first.map(String.init)
            ?? ""
    }
}
