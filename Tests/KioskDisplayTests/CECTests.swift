// SPDX-License-Identifier: Apache-2.0
import Testing
import Glibc
import KioskSystem
@testable import KioskDisplay

// The messages byte by byte, and the client where no CEC adapter is (the host has none; the
// kernel suite's cec-vivid case runs it against vivid's emulated bus and a TV on it).

@Suite struct CECMessageTests {
    @Test func theThreeMessagesAsOnTheBus() {
        // cec-ctl --image-view-on / --active-source phys-addr=1.0.0.0 / --standby, from
        // Playback Device 1 (logical address 4), as <linux/cec-funcs.h> builds them.
        #expect(CECMessage.imageViewOn(from: 4).bytes == [0x40, 0x04])
        #expect(CECMessage.activeSource(from: 4, physicalAddress: 0x1000).bytes == [0x4F, 0x82, 0x10, 0x00])
        #expect(CECMessage.standby(from: 4).bytes == [0x40, 0x36])
        #expect(CECMessage.standby(from: 8, to: CECMessage.broadcast).bytes == [0x8F, 0x36])
        #expect(
            CECMessage.activeSource(from: 4, physicalAddress: 0x2130).description
                == "Active Source (0x82) 21:30 4 -> all")
        #expect(CECMessage.imageViewOn(from: 4).description == "Image View On (0x04) 4 -> 0")
        #expect(CECMessage(bytes: [0x40]).description == "Poll 4 -> 0")
        #expect(
            CECMessage.physicalAddressText(0x1000) == "1.0.0.0" && CECMessage.physicalAddressText(0xFFFF) == "f.f.f.f")
    }
}

/// Log lines the client writes, collected.
private final class Lines: @unchecked Sendable {
    let lines = Locked<[String]>([])
    func add(_ level: Log.Level, _ what: String, _ text: String?) {
        lines.withLock { $0.append("\(level) \(what): \(text ?? "")") }
    }
    var all: [String] { lines.withLock { $0 } }
}

@Suite struct CECClientTests {
    @Test func noAdapterIsUnavailableWithTheReasonLoggedOnce() throws {
        let client = try CECClient(device: "/dev/cec-none-\(getpid())")
        let lines = Lines()
        client.log = { lines.add($0, $1, $2) }
        try client.start()
        defer { client.stop() }
        #expect(client.status.state == .starting)
        client.screen(on: true)
        #expect(client.waitUntilIdle(timeout: .seconds(5)))
        client.screen(on: false)
        #expect(client.waitUntilIdle(timeout: .seconds(5)))
        let s = client.status
        #expect(s.state == .unavailable && s.screenOn == false)
        #expect(s.reason == CECClient.goneReason && s.adapter == nil)
        #expect(lines.all.count == 1, "\(lines.all)")
        #expect(lines.all.first?.hasPrefix("warning CEC unavailable: /dev/cec-none-") == true)
        #expect(lines.all.first?.hasSuffix("the screen is switched by DPMS alone") == true)
    }

    @Test func aDeviceThatIsNoCECAdapterSaysSo() throws {
        let client = try CECClient(device: "/dev/null")
        client.log = { _, _, _ in }
        try client.start()
        defer { client.stop() }
        client.screen(on: false)
        #expect(client.waitUntilIdle(timeout: .seconds(5)))
        #expect(client.status.reason == "/dev/null is not a CEC adapter (CEC_ADAP_G_CAPS: ENOTTY)")
    }

    @Test func autoTakesTheOnlyAdapterAndNoneWhenThereIsNone() throws {
        var template = Array("/tmp/kc-cec-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        let display = try OffscreenDisplay(directory: dir + "/frames", width: 16, height: 16)
        #expect(CECClient.choose(for: display, directory: dir) == (nil, "no CEC adapter (\(dir)/cec*)"))
        // A node that answers no CEC ioctl (a regular file here) is tied to no connector.
        close(open(dir + "/cec0", O_CREAT | O_WRONLY, 0o644))
        close(open(dir + "/cecX", O_CREAT | O_WRONLY, 0o644))
        #expect(CECClient.choose(for: display, directory: dir) == (dir + "/cec0", "the only CEC adapter"))
        close(open(dir + "/cec1", O_CREAT | O_WRONLY, 0o644))
        let two = CECClient.choose(for: display, directory: dir)
        #expect(
            two.path == nil
                && two.why == "2 CEC adapters (cec0, cec1), none tied to this display; --cec /dev/cecN names one")
    }
}
