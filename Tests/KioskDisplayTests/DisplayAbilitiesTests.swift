// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import KioskCore
@testable import KioskDisplay

// What displays say they can do (Display.abilities and friends), and the card watcher that
// waits for a DRM card, on a real inotify in a temporary directory standing in for /dev/dri.

private func temporaryDirectory() -> String {
    var template = Array("/tmp/kc-abilities-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
}

private func touch(_ path: String) { close(open(path, O_CREAT | O_WRONLY, 0o600)) }

@Suite struct DisplayAbilitiesTests {
    @Test func offscreenFramesAreVirtualFilesWithoutConsoleOrPower() throws {
        let dir = temporaryDirectory()
        defer { rmdir(dir) }
        let display: any Display = try OffscreenDisplay(directory: dir, width: 4, height: 4)
        #expect(display.abilities == DisplayAbilities(isVirtual: true))
        #expect(display.reconnection == nil && display.powerState == nil)
        let files = try #require(display.frameFiles)
        #expect(files.directory == dir && files.framesWritten == 0)
        try display.present(Bitmap(width: 4, height: 4), showTime: 7)
        #expect(files.framesWritten == 1)
        #expect(files.removeOldFrames() == 1 && access("\(dir)/frame-00000007.png", F_OK) != 0)
    }

    @Test func aFramebufferIsAConsoleScreenWithPowerAndNoFrameFiles() throws {
        let geometry = FramebufferGeometry(xres: 8, yres: 4, format: .xrgb8888, lineLength: 32)
        let path = fakeFramebuffer(size: geometry.memoryLength)
        defer { unlink(path); rmdir(String(path.dropLast("/fb0".count))) }
        let display: any Display = try FramebufferDisplay.open(path: path, geometry: geometry, rotation: .none,
                                                               swapRedBlue: false, dither: false)
        #expect(display.abilities == DisplayAbilities(ownsConsole: true, switchesPower: true, planes: 1, outputs: 1))
        #expect(display.frameFiles == nil && display.reconnection == nil)
    }

    @Test func powerStatesAreDRMsDPMSLevels() {
        #expect([DisplayPowerState.on, .standby, .suspend, .off].map(\.rawValue) == [0, 1, 2, 3])
        #expect([DisplayPowerState.on, .standby, .suspend, .off].map(\.description)
                == ["On", "Standby", "Suspend", "Off"])
    }
}

@Suite struct DRMCardWatchTests {
    /// A node created, one removed, the directory removed (then watched for in its parent) and
    /// made again: each is reported once, by the next take().
    @Test func nodesAndTheDirectoryComingAndGoingAreReported() throws {
        let parent = temporaryDirectory()
        let cards = parent + "/dri"
        #expect(mkdir(cards, 0o755) == 0)
        let watch = DRMCardWatch(cardDirectory: cards, parentDirectory: parent)
        #expect(watch.descriptor != nil)
        // The first look: the directory was just watched (a card may be there already).
        var changes = watch.take()
        #expect(changes.worthALook && changes.removed.isEmpty && !changes.directoryRemoved)
        #expect(watch.take() == DRMCardWatch.Changes(), "nothing happened since")

        touch(cards + "/card0")
        changes = watch.take()
        #expect(changes.worthALook && changes.removed.isEmpty)
        #expect(chmod(cards + "/card0", 0o660) == 0)  // udev giving the node its group and mode
        #expect(watch.take().worthALook)

        #expect(unlink(cards + "/card0") == 0)
        changes = watch.take()
        #expect(changes.removed == [cards + "/card0"] && !changes.directoryRemoved)

        #expect(rmdir(cards) == 0)
        changes = watch.take()
        #expect(changes.directoryRemoved && changes.worthALook)
        #expect(!watch.take().worthALook, "the parent is watched now; nothing there changed")

        #expect(mkdir(cards, 0o755) == 0)
        changes = watch.take()
        #expect(changes.worthALook && !changes.directoryRemoved, "the directory came back and is watched again")
        touch(cards + "/card1")
        #expect(watch.take().worthALook)
        unlink(cards + "/card1"); rmdir(cards); rmdir(parent)
    }

    /// The wait at start: a node appearing wakes it at once (not after the minute it would
    /// otherwise wait); it ends when a display opens, or when the stop check says so.
    @Test func waitingForACardTriesAtOnceWhenANodeAppearsAndStopsWhenAsked() throws {
        let parent = temporaryDirectory()
        let cards = parent + "/dri"
        #expect(mkdir(cards, 0o755) == 0)
        let opened = try OffscreenDisplay(directory: parent + "/frames", width: 2, height: 2)
        defer { rmdir(parent + "/frames"); rmdir(parent) }
        var tries = 0, statuses = 0
        let started = MonotonicSeconds.now
        let watch = DRMCardWatch(cardDirectory: cards, parentDirectory: parent)
        _ = watch.take()
        touch(cards + "/card0")  // appears before the first wait: it wakes at once
        let found = waitForDRMCard(retryEvery: .seconds(60), cards: watch, status: { statuses += 1 }, stop: { false }) {
            tries += 1
            if tries == 1 { touch(cards + "/card1") }  // appears during the second wait
            return tries == 2 ? opened : nil
        }
        #expect(found === opened && tries == 2 && statuses == 2)
        #expect(MonotonicSeconds.now - started < 30, "woken by the nodes, not by the 60 s timer")
        tries = 0
        let stopped = waitForDRMCard(retryEvery: .milliseconds(1), status: {}, stop: { tries == 2 }) {
            tries += 1
            return nil
        }
        #expect(stopped == nil)
        #expect(tries == 2)
        unlink(cards + "/card0"); unlink(cards + "/card1"); rmdir(cards)
    }
}

private enum MonotonicSeconds {
    static var now: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
