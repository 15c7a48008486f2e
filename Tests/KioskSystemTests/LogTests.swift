// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskSystem

@Test func aLogLineIsOneLineWhateverTheFileNameHolds() {
    let line = Log.line(.warning, "image skipped", path: "/photos/a\r\u{1B}[2Kb\tc\nd.jpg", reason: "bad \"data\"")
    #expect(!line.contains("\n") && !line.contains("\r") && !line.contains("\u{1B}") && !line.contains("\t"))
    #expect(line == #"kiosk-carousel: warning image skipped path="/photos/a\r\x1b[2Kb\tc\nd.jpg" reason="bad \"data\"""#)
}

@Test func aPlainPathIsNotQuoted() {
    #expect(Log.line(.info, "display opened", path: "/dev/fb0") == "kiosk-carousel: info display opened path=/dev/fb0")
}
