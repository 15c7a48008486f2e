// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskDisplay

/// Mode lists shaped like what connectors report (the kernel sorts them largest first).
private let preferred = DRMMode.typePreferred
private let monitor: [DRMMode] = [
    DRMMode(width: 1920, height: 1080, refresh: 60, type: preferred),
    DRMMode(width: 1920, height: 1080, refresh: 50),
    DRMMode(width: 1920, height: 1080, refresh: 75),
    DRMMode(width: 1920, height: 1080, refresh: 60, flags: DRMMode.flagInterlace),
    DRMMode(width: 1280, height: 720, refresh: 60),
    DRMMode(width: 1280, height: 720, refresh: 50),
    DRMMode(width: 800, height: 480, refresh: 60),
]

@Suite struct DRMModeChoiceTests {
    @Test func noRequestTakesThePreferredMode() throws {
        var modes = monitor
        modes.swapAt(0, 4)   // the preferred mode need not be first
        let i = try DRMModeChoice.choose(nil, from: modes, connector: "HDMI-A-1")
        #expect(modes[i].width == 1920 && modes[i].refresh == 60 && modes[i].isPreferred)
    }

    @Test func noRequestAndNoPreferredTakesTheLargestThenFastestProgressive() throws {
        let modes = monitor.map { m -> DRMMode in var m = m; m.type = 0; return m }
        let i = try DRMModeChoice.choose(nil, from: modes, connector: "HDMI-A-1")
        #expect(modes[i] == DRMMode(width: 1920, height: 1080, refresh: 75))
    }

    @Test func sizeOnlyTakesTheHighestRefreshAtThatSize() throws {
        let i = try DRMModeChoice.choose(ModeRequest(width: 1920, height: 1080), from: monitor, connector: "HDMI-A-1")
        #expect(i == 2)
        let j = try DRMModeChoice.choose(ModeRequest(width: 1280, height: 720), from: monitor, connector: "HDMI-A-1")
        #expect(j == 4)
    }

    @Test func sizeAndRefreshTakesThatExactMode() throws {
        let i = try DRMModeChoice.choose(ModeRequest(width: 1920, height: 1080, refresh: 50), from: monitor,
                                         connector: "X")
        #expect(i == 1)
        let j = try DRMModeChoice.choose(ModeRequest(width: 800, height: 480, refresh: 60), from: monitor,
                                         connector: "X")
        #expect(j == 6)
    }

    @Test func progressiveBeatsInterlacedAtTheSameRefresh() throws {
        let modes = [DRMMode(width: 1920, height: 1080, refresh: 60, flags: DRMMode.flagInterlace),
                     DRMMode(width: 1920, height: 1080, refresh: 60)]
        #expect(try DRMModeChoice.choose(ModeRequest(width: 1920, height: 1080), from: modes, connector: "X") == 1)
    }

    @Test func onEqualModesThePreferredThenTheFirstWins() throws {
        let twins = [DRMMode(width: 1024, height: 768, refresh: 60, name: "a"),
                     DRMMode(width: 1024, height: 768, refresh: 60, type: preferred, name: "b"),
                     DRMMode(width: 1024, height: 768, refresh: 60, name: "c")]
        #expect(try DRMModeChoice.choose(ModeRequest(width: 1024, height: 768), from: twins, connector: "X") == 1)
        let plain = twins.map { m -> DRMMode in var m = m; m.type = 0; return m }
        #expect(try DRMModeChoice.choose(ModeRequest(width: 1024, height: 768), from: plain, connector: "X") == 0)
    }

    @Test func unavailableSizeListsTheAvailableModes() {
        #expect {
            try DRMModeChoice.choose(ModeRequest(width: 1024, height: 768), from: monitor,
                                     connector: "/dev/dri/card0 HDMI-A-1")
        } throws: { error in
            guard case .modeNotAvailable(let connector, let requested, let available) = error as? DisplayError,
                  connector == "/dev/dri/card0 HDMI-A-1", requested == ModeRequest(width: 1024, height: 768),
                  available == monitor else { return false }
            let text = "\(error)"
            return text.hasPrefix("/dev/dri/card0 HDMI-A-1: mode 1024x768 is not available; available: ")
                && text.contains("1920x1080@60 (preferred), 1920x1080@50, 1920x1080@75, 1920x1080i@60, 1280x720@60, "
                                 + "1280x720@50, 800x480@60")
        }
    }

    @Test func unavailableRefreshIsAnErrorNotAnotherRefresh() {
        #expect {
            try DRMModeChoice.choose(ModeRequest(width: 1280, height: 720, refresh: 75), from: monitor, connector: "X")
        } throws: { "\($0)".contains("mode 1280x720@75 is not available") }
    }

    @Test func noModesIsAnError() {
        #expect {
            try DRMModeChoice.choose(nil, from: [], connector: "Virtual-1")
        } throws: { "\($0)" == "Virtual-1: the connector reports no modes" }
    }

    @Test func availableListDropsDuplicates() {
        let modes = [DRMMode(width: 800, height: 600, refresh: 60, type: preferred),
                     DRMMode(width: 800, height: 600, refresh: 60),
                     DRMMode(width: 640, height: 480, refresh: 60)]
        #expect(DRMModeChoice.availableList(modes) == "800x600@60 (preferred), 640x480@60")
    }

    @Test func onReturnTheRequestWhenOfferedElseThePreferredMode() throws {
        // The monitor that came back offers the mode asked for: that one, as at start.
        let asked = ModeRequest(width: 1280, height: 720)
        var i = try DRMModeChoice.chooseOnReturn(asked, from: monitor, connector: "HDMI-A-1")
        #expect(monitor[i].width == 1280 && monitor[i].refresh == 60)
        // Another monitor without it: its preferred mode, not an error (at start it is one).
        let other = [DRMMode(width: 1024, height: 768, refresh: 60, type: preferred),
                     DRMMode(width: 800, height: 600, refresh: 60)]
        #expect(throws: DisplayError.self) { try DRMModeChoice.choose(asked, from: other, connector: "HDMI-A-1") }
        i = try DRMModeChoice.chooseOnReturn(asked, from: other, connector: "HDMI-A-1")
        #expect(other[i].width == 1024 && other[i].height == 768)
        i = try DRMModeChoice.chooseOnReturn(nil, from: other, connector: "HDMI-A-1")
        #expect(other[i].width == 1024)
        #expect(throws: DisplayError.self) { try DRMModeChoice.chooseOnReturn(asked, from: [], connector: "HDMI-A-1") }
    }
}
