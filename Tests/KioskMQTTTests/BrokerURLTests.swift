// SPDX-License-Identifier: Apache-2.0
import Testing
import KioskMQTT

@Test func brokerURLsOfBothSchemesWithTheirDefaultPorts() throws {
    #expect(try BrokerURL.parse("mqtt://broker.lan") == BrokerURL(tls: false, host: "broker.lan", port: 1883))
    #expect(try BrokerURL.parse("mqtts://broker.lan") == BrokerURL(tls: true, host: "broker.lan", port: 8883))
    #expect(try BrokerURL.parse("MQTT://10.0.0.5:1884/") == BrokerURL(tls: false, host: "10.0.0.5", port: 1884))
    #expect(try BrokerURL.parse("mqtts://[fd00::1]:8884") == BrokerURL(tls: true, host: "fd00::1", port: 8884))
    #expect(try BrokerURL.parse("mqtt://[::1]") == BrokerURL(tls: false, host: "::1", port: 1883))
    let login = try BrokerURL.parse("mqtts://kiosk:s%40cr%3At%2F@broker.lan:8883")
    #expect(login.user == "kiosk" && login.password == "s@cr:t/")
    let userOnly = try BrokerURL.parse("mqtt://kiosk@broker.lan")
    #expect(userOnly.user == "kiosk" && userOnly.password == nil)
    // An '@' in the password unencoded: the last '@' ends the login (as browsers read it).
    #expect(try BrokerURL.parse("mqtt://u:p@ss@host").password == "p@ss")
}

@Test func aBrokerURLIsLoggedWithoutItsPassword() throws {
    let url = try BrokerURL.parse("mqtts://kiosk:hunter2@broker.lan")
    #expect(url.description == "mqtts://kiosk:***@broker.lan:8883")
    #expect(try BrokerURL.parse("mqtt://[::1]:1").description == "mqtt://[::1]:1")
    // Fuzz findings (Tests/Fixtures/fuzz/mqtt): a password that is a ':', one whose text also
    // stands in the host and port.
    let colon = try BrokerURL.parse("mqtts://knl::@k3/")
    #expect(colon.password == ":" && colon.description == "mqtts://knl:***@k3:8883")
    let lookalike = try BrokerURL.parse("mqtts://kio1fea@0t@[fd::1]:888@[fd::1]:8883/")
    #expect(lookalike.user == "kio1fea@0t@[fd" && lookalike.password == ":1]:888")
    #expect(lookalike.description == "mqtts://kio1fea%400t%40%5Bfd:***@[fd::1]:8883")
    // A refused URL's message hides the password too.
    do {
        _ = try BrokerURL.parse("mqtt://kiosk:hunter2@broker.lan:99999")
        Issue.record("accepted")
    } catch {
        #expect(!error.description.contains("hunter2"), "\(error)")
        #expect(error.description.contains("99999"))
    }
}

@Test func badBrokerURLsSayWhatIsWrong() {
    let cases: [(String, String)] = [
        ("http://broker.lan", "not mqtt: or mqtts:"),
        ("broker.lan:1883", "expected mqtt://"),
        ("mqtt://", "no host"),
        ("mqtt://:1883", "no host"),
        ("mqtt://broker.lan:0", "1...65535"),
        ("mqtt://broker.lan:65536", "1...65535"),
        ("mqtt://broker.lan:+1", "1...65535"),
        ("mqtt://broker.lan:", "1...65535"),
        ("mqtt://broker.lan/topic", "no path"),
        ("mqtt://broker.lan?x=1", "no path"),
        ("mqtt://bro ker.lan", "space"),
        ("mqtt://bro%6Ber.lan", "a character a host name cannot"),
        ("mqtt://[fd00::1", "lacks its ']'"),
        ("mqtt://[nothex]:1", "not an IPv6 address"),
        ("mqtt://:pw@host", "user name before '@' is empty"),
        ("mqtt://u:%zz@host", "two hex digits"),
        ("mqtt://u:%00@host", "NUL"),
        ("mqtt://u:%ff@host", "not UTF-8"),
        ("mqtt://u:" + String(repeating: "x", count: 1025) + "@host", "longer than 1024"),
    ]
    for (text, expected) in cases {
        do {
            let url = try BrokerURL.parse(text)
            Issue.record("\(text) accepted as \(url)")
        } catch {
            #expect(error.description.contains(expected), "\(text): \(error)")
        }
    }
}
