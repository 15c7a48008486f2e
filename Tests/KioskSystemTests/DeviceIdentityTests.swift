// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import KioskSystem

private func tempFile(_ text: String) -> String {
    var template = Array("/tmp/kiosk-machine-id-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    _ = text.withCString { write(fd, $0, strlen($0)) }
    close(fd)
    return String(cString: template.map { CChar($0) })
}

@Test func theMachineIDIsThirtyTwoLowercaseHexDigitsOnItsFirstLine() throws {
    let good = tempFile("0123456789abcdef0123456789abcdef\n")
    defer { unlink(good) }
    #expect(try DeviceIdentity.machineID(path: good) == "0123456789abcdef0123456789abcdef")
    // A first boot's "uninitialized", upper case, a short or long line: refused with EINVAL.
    for text in [
        "uninitialized\n", "0123456789ABCDEF0123456789ABCDEF\n", "0123\n", "0123456789abcdef0123456789abcdef0\n", "",
    ] {
        let path = tempFile(text)
        defer { unlink(path) }
        #expect(throws: SystemError.self) { try DeviceIdentity.machineID(path: path) }
        do { _ = try DeviceIdentity.machineID(path: path) } catch {
            #expect(error.errno == EINVAL, "\(text): \(error)")
        }
    }
    do { _ = try DeviceIdentity.machineID(path: "/nonexistent/machine-id") } catch { #expect(error.errno == ENOENT) }
}

@Test func placeholdersAreFilledInAndAValueIsReadOnlyWhenItsPlaceholderOccurs() throws {
    var asked: [String] = []
    let expanded = try DeviceIdentity.expand("https://cdn.example/{hostname}/{machine-id}/{hostname}.json",
                                             hostname: { asked.append("host"); return "lobby" },
                                             machineID: { asked.append("id"); return "abc" })
    #expect(expanded == "https://cdn.example/lobby/abc/lobby.json")
    #expect(asked == ["host", "id"])
    asked = []
    let plain = try DeviceIdentity.expand(
        "https://cdn.example/show.json",
        hostname: {
            asked.append("host")
            return "x"
        },
        machineID: { () throws(SystemError) -> String in
            throw SystemError(operation: "open", path: "/etc/machine-id", errno: ENOENT)
        })
    #expect(plain == "https://cdn.example/show.json" && asked.isEmpty)
    #expect(throws: SystemError.self) {
        try DeviceIdentity.expand("https://cdn.example/{machine-id}.json", hostname: { "x" },
                                  machineID: { () throws(SystemError) -> String in
                                      throw SystemError(operation: "open", path: "/etc/machine-id", errno: ENOENT) })
    }
    #expect(DeviceIdentity.hostname()?.isEmpty == false)
}
