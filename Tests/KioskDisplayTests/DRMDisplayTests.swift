// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import CLibDRM
@testable import KioskDisplay
import KioskSystem

/// A kernel mode record as drmModeGetConnector returns it.
func drmModeModeInfoForTest(width: Int, height: Int, refresh: Int, name: String) -> drmModeModeInfo {
    var m = drmModeModeInfo()
    m.hdisplay = UInt16(width); m.vdisplay = UInt16(height); m.vrefresh = UInt32(refresh)
    withUnsafeMutableBytes(of: &m.name) { raw in
        for (i, b) in name.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
    }
    return m
}

/// Opening fails with messages a person can act on. Presenting on real devices (bochs,
/// virtio-gpu) is proven in QEMU by Tests/kernel/run.sh.
@Suite struct DRMDisplayTests {
    @Test func noCardNodesIsNoDisplay() throws {
        var template = Array("/tmp/kc-drm-empty-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        #expect {
            try DRMDisplay.findOutput(device: nil, connector: nil, cardDirectory: dir)
        } throws: { error in
            guard case .noCard(let directory) = error as? DisplayError else { return false }
            return directory == dir && "\(error)".hasPrefix("no \(dir)/card* device")
        }
    }

    @Test func everyCardThatFailsIsReported() throws {
        var template = Array("/tmp/kc-drm-fake-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        for n in 0..<2 { let fd = open("\(dir)/card\(n)", O_CREAT | O_RDWR, 0o600); close(fd) }
        #expect {
            try DRMDisplay.findOutput(device: nil, connector: nil, cardDirectory: dir)
        } throws: { error in
            guard case .noUsableCard(let failures) = error as? DisplayError, failures.count == 2,
                  case .notKMS(let first, _, _) = failures[0], case .notKMS(let second, _, _) = failures[1] else {
                return false
            }
            return first == "\(dir)/card0" && second == "\(dir)/card1"
                && "\(error)".hasPrefix("no usable DRM device: \(dir)/card0: not a KMS")
        }
    }

    /// What makes the show wait for another card instead of ending: the KMS calls of an
    /// unplugged device answer ENODEV (drm_ioctl), a vanished one ENXIO; a lost DRM master
    /// (EACCES) or a refused mode is not a lost card.
    @Test func onlyAGoneCardCountsAsLost() {
        let gone = DisplayError.system(SystemError(operation: "drmModePageFlip", path: "/dev/dri/card0", errno: ENODEV))
        let vanished = DisplayError.system(SystemError(operation: "drmModeDirtyFB", path: "/dev/dri/card0",
                                                       errno: ENXIO))
        let notMaster = DisplayError.system(SystemError(operation: "drmModeSetCrtc", path: "/dev/dri/card0",
                                                        errno: EACCES))
        #expect(ReopeningDRMDisplay.meansGone(gone) && ReopeningDRMDisplay.meansGone(vanished))
        #expect(!ReopeningDRMDisplay.meansGone(notMaster))
        #expect(!ReopeningDRMDisplay.meansGone(.modeNotAvailable(connector: "/dev/dri/card0 HDMI-A-1",
                                                                   requested: ModeRequest(width: 800, height: 480),
                                                                   available: [])))
    }

    @Test func aNamedDeviceThatDoesNotExistSaysWhich() {
        #expect {
            try DRMDisplay.open(device: "/dev/dri/card99", connector: nil, mode: nil, rotation: .none)
        } throws: { "\($0)" == "open /dev/dri/card99: No such file or directory (errno 2)" }
    }
}
