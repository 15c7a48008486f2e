// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
@testable import KioskDisplay

/// True when this machine has neither a DRM card node nor /dev/fb0 (CI containers, build hosts).
private let noDisplayHardware = DRMDevice.cardPaths().isEmpty && access("/dev/fb0", F_OK) != 0

@Suite struct DisplaySpecTests {
    @Test(arguments: [
        ("auto", DisplaySpec.auto),
        ("AUTO", .auto),
        ("fbdev", .fbdev(path: nil)),
        ("fbdev:/dev/fb1", .fbdev(path: "/dev/fb1")),
        ("fbdev:fb1", .fbdev(path: "/dev/fb1")),
        ("offscreen:/tmp/frames", .offscreen(directory: "/tmp/frames")),
        ("offscreen:out,with,commas", .offscreen(directory: "out,with,commas")),
        ("drm", .drm(device: nil, connector: nil, mode: nil)),
        ("drm:/dev/dri/card1", .drm(device: "/dev/dri/card1", connector: nil, mode: nil)),
        ("drm:card1", .drm(device: "/dev/dri/card1", connector: nil, mode: nil)),
        ("drm,mode=800x480", .drm(device: nil, connector: nil, mode: ModeRequest(width: 800, height: 480))),
        ("drm,connector=HDMI-A-1", .drm(device: nil, connector: "HDMI-A-1", mode: nil)),
        ("drm:card0,connector=DP-2,mode=1920x1080@60",
         .drm(device: "/dev/dri/card0", connector: "DP-2", mode: ModeRequest(width: 1920, height: 1080, refresh: 60))),
        ("drm:/dev/dri/card0,mode=1280x720,connector=eDP-1",
         .drm(device: "/dev/dri/card0", connector: "eDP-1", mode: ModeRequest(width: 1280, height: 720))),
        ("drm,planes=off", .drm(device: nil, connector: nil, mode: nil, options: DRMOptions(planes: false))),
        ("drm:card0,planes=OFF,mode=800x480",
         .drm(device: "/dev/dri/card0", connector: nil, mode: ModeRequest(width: 800, height: 480),
              options: DRMOptions(planes: false))),
        ("drm,atomic=off", .drm(device: nil, connector: nil, mode: nil, options: DRMOptions(atomic: false))),
        ("drm,planes=on,atomic=auto", .drm(device: nil, connector: nil, mode: nil)),
    ])
    func parses(text: String, expected: DisplaySpec) throws {
        let spec = try DisplaySpec.parse(text)
        #expect(spec == expected)
        #expect(try DisplaySpec.parse(spec.description) == spec)
    }

    @Test(arguments: [
        ("wayland", DisplaySpecError.unknownBackend("wayland")),
        ("", .unknownBackend("")),
        ("auto:1", .unexpectedArgument(backend: "auto", argument: "1")),
        ("offscreen", .missingArgument(backend: "offscreen", what: "a directory for the frames: offscreen:DIR")),
        ("offscreen:", .missingArgument(backend: "offscreen", what: "a directory for the frames: offscreen:DIR")),
        ("fbdev:", .missingArgument(backend: "fbdev", what: "a device path after 'fbdev:', e.g. fbdev:/dev/fb1")),
        ("drm:", .missingArgument(backend: "drm", what: "a device after 'drm:', e.g. drm:/dev/dri/card1 or drm:card1")),
        ("drm:,mode=800x480",
         .missingArgument(backend: "drm", what: "a device after 'drm:', e.g. drm:/dev/dri/card1 or drm:card1")),
        ("drm,mode=800", .badMode("800")),
        ("drm:card0,mode=800x480@fast", .badMode("800x480@fast")),
        ("drm,mode=",
         .missingArgument(backend: "drm", what: "a mode after 'mode=', e.g. mode=1920x1080 or mode=800x480@60")),
        ("drm,connector", .missingArgument(backend: "drm", what: "a name after 'connector=', e.g. connector=HDMI-A-1")),
        ("drm,rotate=90", .unknownOption("rotate=90")),
        ("drm:card0,", .unknownOption("")),
        ("drm,mode=800x480,mode=640x480", .duplicateOption("mode=640x480")),
        ("drm,planes=no", .badSwitch("planes", "no")),
        ("drm,atomic", .badSwitch("atomic", "")),
        ("drm,planes=off,planes=off", .duplicateOption("planes=off")),
    ])
    func rejects(text: String, expected: DisplaySpecError) {
        #expect(throws: expected) { try DisplaySpec.parse(text) }
    }

    @Test func messagesNameTheBadPartAndTheExpectedForm() {
        #expect(DisplaySpecError.badMode("800").description
                == "bad mode '800': expected WxH or WxH@HZ, e.g. 1920x1080 or 800x480@60")
        #expect(DisplaySpecError.unknownBackend("x11").description
                == "unknown display 'x11'; expected auto | fbdev[:PATH] | drm[:DEVICE][,connector=NAME][,mode=WxH[@HZ]]"
                + "[,planes=off][,atomic=off] | offscreen:DIR")
        #expect(DisplaySpecError.unknownOption("rotate=90").description.contains("'rotate=90'"))
    }

    @Test func openDisplayOpensTheOffscreenBackendAtTheGivenSize() throws {
        var template = Array("/tmp/kc-spec-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        let display = try openDisplay(.parse("offscreen:\(dir)/frames"), rotation: .none, swapRedBlue: false,
                                      offscreenSize: (width: 64, height: 48))
        #expect(display is OffscreenDisplay)
        #expect(display.width == 64 && display.height == 48)
    }

    @Test func openDisplayPassesTheNamedDeviceThrough() {
        #expect {
            try openDisplay(.parse("drm:card97"), rotation: .none, swapRedBlue: false,
                            offscreenSize: (width: 64, height: 48))
        } throws: { "\($0)" == "open /dev/dri/card97: No such file or directory (errno 2)" }
        #expect {
            try openDisplay(.parse("fbdev:/nonexistent/fb9"), rotation: .none, swapRedBlue: false,
                            offscreenSize: (width: 64, height: 48))
        } throws: { "\($0)".contains("/nonexistent/fb9") }
    }

    @Test(.enabled(if: noDisplayHardware, "needs a machine without /dev/dri/card* and /dev/fb0"))
    func autoWithoutDisplaysSaysWhatItTried() {
        #expect {
            try openDisplay(.auto, rotation: .none, swapRedBlue: false, offscreenSize: (width: 64, height: 48))
        } throws: { error in
            guard case .noDisplay(drm: .noCard(let directory), fbdev: .noFramebuffer(let fbdev))
                    = error as? DisplayError
            else { return false }
            return directory == "/dev/dri" && fbdev.path == "/dev/fb0" && fbdev.operation == "open"
                && "\(error)".hasPrefix("no display: DRM: no /dev/dri/card* device")
        }
    }
}
