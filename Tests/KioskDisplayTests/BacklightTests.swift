// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
@testable import KioskDisplay

/// A folder laid out like /sys/class/backlight: one directory per device with `brightness`,
/// `max_brightness`, `actual_brightness` and `type`, as the kernel's backlight class has them.
private func backlightRoot(_ devices: [(name: String, max: Int, brightness: Int, type: String?)]) -> String {
    var template = Array("/tmp/kc-backlight-XXXXXX".utf8CString)
    let root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    for d in devices {
        mkdir("\(root)/\(d.name)", 0o755)
        write("\(root)/\(d.name)/max_brightness", "\(d.max)\n")
        write("\(root)/\(d.name)/brightness", "\(d.brightness)\n")
        write("\(root)/\(d.name)/actual_brightness", "\(d.brightness)\n")
        if let type = d.type { write("\(root)/\(d.name)/type", type + "\n") }
    }
    return root
}

private func write(_ path: String, _ text: String) {
    let f = fopen(path, "w")!
    fputs(text, f)
    fclose(f)
}

private func read(_ path: String) -> String {
    guard let f = fopen(path, "r") else { return "(missing)" }
    defer { fclose(f) }
    var buffer = [CChar](repeating: 0, count: 64)
    return fgets(&buffer, 64, f) != nil ? String(cString: buffer) : ""
}

@Suite struct BacklightTests {
    @Test func levelsAreWrittenAsAShareOfMaxBrightnessAndTheOriginalPutBack() throws {
        let root = backlightRoot([("rpi_backlight", 255, 200, "raw")])
        let light = try Backlight(directory: root + "/rpi_backlight")
        #expect(
            light.maxBrightness == 255 && light.original == 200 && light.type == "raw" && light.name == "rpi_backlight")
        #expect(try light.set(permille: 400) == 102)
        #expect(read(root + "/rpi_backlight/brightness") == "102\n")
        #expect(try light.set(permille: 1000) == 255)
        #expect(read(root + "/rpi_backlight/brightness") == "255\n")
        // The same raw value again is not written (the file changed behind it stays).
        write(root + "/rpi_backlight/brightness", "7\n")
        #expect(try light.set(permille: 999) == 255)
        #expect(read(root + "/rpi_backlight/brightness") == "7\n")
        light.restore()
        #expect(read(root + "/rpi_backlight/brightness") == "200\n")
        #expect(light.summary == "backlight \(root)/rpi_backlight (raw, max_brightness 255)")
    }

    @Test func anyLevelAboveZeroIsAtLeastOneStep() {
        #expect(Backlight.raw(permille: 1, maxBrightness: 7) == 1)
        #expect(Backlight.raw(permille: 0, maxBrightness: 7) == 0)
        #expect(Backlight.raw(permille: 500, maxBrightness: 7) == 4)
        #expect(Backlight.raw(permille: 1000, maxBrightness: 96000) == 96000)
        #expect(Backlight.raw(permille: 2000, maxBrightness: 100) == 100)
    }

    @Test func autoPicksTheBuiltInPanelsBacklightByTypeAndNeverAnExternalScreens() {
        let root = backlightRoot([("acpi_video0", 15, 15, "firmware"), ("intel_backlight", 96000, 48000, "raw"),
                                  ("zz_platform", 10, 5, "platform")])
        #expect(Backlight.choose(root: root, connectorName: "eDP-1").directory == root + "/acpi_video0")
        #expect(Backlight.choose(root: root, connectorName: nil).directory == root + "/acpi_video0")
        let hdmi = Backlight.choose(root: root, connectorName: "HDMI-A-1")
        #expect(hdmi.directory == nil && hdmi.why.contains("external"))
        #expect(Backlight.choose(root: root, connectorName: "Virtual-1").directory == nil)
        #expect(Backlight.choose(root: root, connectorName: "DSI-1").directory == root + "/acpi_video0")
        let two = backlightRoot([("b", 10, 5, "raw"), ("a", 10, 5, "raw")])
        #expect(Backlight.choose(root: two, connectorName: "DSI-1").directory == two + "/a")
        let none = backlightRoot([])
        #expect(Backlight.choose(root: none, connectorName: "DSI-1") == (nil, "no backlight in \(none)"))
        #expect(Backlight.isExternal("DP-2") && Backlight.isExternal("HDMI-B-1") && !Backlight.isExternal("LVDS-1"))
    }

    @Test func unreadableOrNonsenseFilesAreClearErrors() throws {
        let root = backlightRoot([("zero", 0, 0, nil), ("word", 10, 5, nil)])
        write(root + "/word/brightness", "bright\n")
        #expect { try Backlight(directory: root + "/zero") } throws: { "\($0)".contains("max_brightness is 0") }
        #expect { try Backlight(directory: root + "/word") } throws: {
            "\($0)".contains("'bright' is not a whole number")
        }
        #expect { try Backlight(directory: root + "/gone") } throws: {
            "\($0)".contains("open \(root)/gone/max_brightness")
        }
        // A brightness that cannot be written: the error names the file.
        let ok = backlightRoot([("panel", 10, 5, nil)])
        let light = try Backlight(directory: ok + "/panel")
        unlink(ok + "/panel/brightness")
        mkdir(ok + "/panel/brightness", 0o755)
        #expect { try light.set(permille: 100) } throws: {
            "\($0)".contains("open \(ok)/panel/brightness: Is a directory")
        }
    }
}
