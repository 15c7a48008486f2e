// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import KioskSystem
@testable import KioskDisplay

/// What can be checked without DRM hardware: card enumeration, and the errors for a missing
/// node, a node that is no KMS device, and permission denied. Real devices: Tests/kernel.
@Suite struct DRMDeviceTests {
    private func temporaryDirectory() -> String {
        var template = Array("/tmp/kc-drm-test-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        return dir
    }

    @Test func cardPathsAreTheCardNodesInNumericOrder() throws {
        let dir = temporaryDirectory()
        for name in ["card10", "card2", "renderD128", "card0", "cardX", "by-path"] {
            let fd = open("\(dir)/\(name)", O_CREAT | O_WRONLY, 0o600)
            #expect(fd >= 0); close(fd)
        }
        #expect(DRMDevice.cardPaths(directory: dir) == ["\(dir)/card0", "\(dir)/card2", "\(dir)/card10"])
        #expect(DRMDevice.cardPaths(directory: "\(dir)/missing").isEmpty)
    }

    @Test func openingAMissingNodeSaysSo() {
        #expect {
            try DRMDevice.open("/nonexistent/dri/card0")
        } throws: { "\($0)" == "open /nonexistent/dri/card0: No such file or directory (errno 2)" }
    }

    @Test func aNodeThatIsNotKMSIsRefusedWithTheCallThatFailed() {
        #expect {
            try DRMDevice.open("/dev/null")
        } throws: { error in
            guard case .notKMS(let device, let driver, let failed) = error as? DisplayError else { return false }
            // No driver answers on /dev/null: said so, never "driver unknown driver".
            return device == "/dev/null" && driver == nil && failed.operation == "drmModeGetResources"
                && failed.path == "/dev/null"
                && "\(error)".hasPrefix("/dev/null: not a KMS (modesetting) device: no DRM driver answers on it"
                                        + " (a display card is /dev/dri/cardN): drmModeGetResources /dev/null: ")
                && !"\(error)".contains("unknown driver")
        }
    }

    @Test func permissionDeniedNamesTheGroupThatOwnsTheNode() throws {
        let dir = temporaryDirectory()
        let path = "\(dir)/card0"
        let fd = open(path, O_CREAT | O_WRONLY, 0o660); close(fd)
        // As root the node gets Debian's owner of /dev/dri/card*, `video`; otherwise it keeps
        // the user's own group, which the message must name just the same.
        let video = try #require(getgrnam("video"), "Debian has a video group").pointee.gr_gid
        let group = chown(path, getuid(), video) == 0 ? "video" : String(cString: getgrgid(getegid())!.pointee.gr_name)
        let error = DRMDevice.openError(SystemError(operation: "open", path: path, errno: EACCES), path: path)
        #expect(error.description.hasPrefix(
            "open \(path): Permission denied (errno 13); the user needs to be in the '\(group)' group, "
                + "which owns \(path)"))
        #expect(DRMDevice.owningGroup(of: path) == group)
        #expect(DRMDevice.owningGroup(of: "\(dir)/missing") == nil)
    }

    @Test func modeMirrorsTheKernelStruct() {
        var raw = drmModeModeInfoForTest(width: 800, height: 480, refresh: 60, name: "800x480")
        raw.type = UInt32(DRMMode.typePreferred)
        let m = DRMDevice.mode(raw)
        #expect(m == DRMMode(width: 800, height: 480, refresh: 60, type: DRMMode.typePreferred, name: "800x480"))
        #expect(m.description == "800x480@60")
    }
}
