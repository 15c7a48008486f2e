// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskDisplay

@Suite struct ModeRequestTests {
    @Test(arguments: [
        ("1920x1080", ModeRequest(width: 1920, height: 1080)),
        ("800X480", ModeRequest(width: 800, height: 480)),
        ("800x480@60", ModeRequest(width: 800, height: 480, refresh: 60)),
        ("3840x2160@144", ModeRequest(width: 3840, height: 2160, refresh: 144)),
    ])
    func parses(text: String, expected: ModeRequest) {
        #expect(ModeRequest(parsing: text) == expected)
        #expect(ModeRequest(parsing: expected.description) == expected)
    }

    @Test(arguments: ["", "1920", "1920x", "x1080", "1920x1080@", "1920x1080@0", "0x480", "-800x480",
                      "800x480x2", "800 x480", "800x480@60@60", "１９２０x1080", "9999999x1"])
    func rejects(text: String) {
        #expect(ModeRequest(parsing: text) == nil)
    }
}
