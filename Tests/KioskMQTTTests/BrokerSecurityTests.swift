// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing

// Logging in (a password from the URL, a file or the environment, never logged) and TLS
// (verified by default against the system's CAs and --ca-file, the host name checked, client
// certificates), against a real mosquitto.

private func run(_ path: String, _ arguments: [String]) throws {
    let child = try Child(path, arguments)
    let status = child.wait()
    child.stdout?.waitForEnd()
    guard status == 0 else {
        throw Failure("\(path) \(arguments.joined(separator: " ")): \(child.stderr?.all.joined(separator: "\n") ?? "")")
    }
}

@Test(.timeLimit(.minutes(10)))
func thePasswordComesFromTheURLAFileOrTheEnvironmentAndIsNeverLogged() throws {
    let secret = "Sup3r-s3cret!pw"
    let dir = makeTempDirectory("mqtt-login")
    chmod(dir, 0o755)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try run("/usr/bin/mosquitto_passwd", ["-b", "-c", dir + "/passwd", "kiosk", secret])
    chmod(dir + "/passwd", 0o644)
    let broker = try Broker(configuration: "allow_anonymous false\npassword_file \(dir)/passwd\n")
    try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: dir + "/password"))
    let encoded = secret.replacingOccurrences(of: "!", with: "%21")
    let cases: [(String, [String], [String: String], Bool)] = [
        ("url", ["--mqtt", "mqtt://kiosk:\(encoded)@127.0.0.1:\(broker.port)"], [:], true),
        (
            "file", ["--mqtt", "mqtt://kiosk@127.0.0.1:\(broker.port)", "--mqtt-password-file", dir + "/password"], [:],
            true
        ),
        ("environment", ["--mqtt", "mqtt://kiosk@127.0.0.1:\(broker.port)"], ["KIOSK_MQTT_PASSWORD": secret], true),
        ("wrong", ["--mqtt", "mqtt://kiosk:\(secret)x@127.0.0.1:\(broker.port)"], [:], false),
    ]
    for (name, arguments, environment, good) in cases {
        let state = makeTempDirectory("mqtt-state")
        let kiosk = try Kiosk(
            ["--interval", "60", "--run-for", "30", "--mqtt-id", "login-\(name)", "--state-dir", state] + arguments,
            environment: environment)
        let outcome = good ? "mqtt connected" : "the broker refused the connection: Not authorized"
        #expect(waitFor(15) { kiosk.logText.contains(outcome) }, "\(name): \(kiosk.logText)")
        kiosk.stop()
        let everything = kiosk.logText + kiosk.events.all.joined()
        #expect(
            !everything.contains(secret) && !everything.contains(encoded),
            "\(name): the password was written:\n\(everything)")
        if name == "url" { #expect(kiosk.logText.contains("mqtt://kiosk:***@127.0.0.1")) }
        try? FileManager.default.removeItem(atPath: state)
    }
}

/// A CA, a server certificate for `localhost` (not 127.0.0.1) and a client certificate, made
/// with the openssl command (deploy/apt-deps.sh --tests).
private func makeCertificates(_ dir: String) throws {
    let openssl = "/usr/bin/openssl"
    try run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=kiosk test CA",
                      "-keyout", dir + "/ca.key", "-out", dir + "/ca.pem"])
    for (name, subject, extensions) in [("server", "/CN=localhost", "subjectAltName=DNS:localhost"),
                                        ("client", "/CN=lobby", "extendedKeyUsage=clientAuth")] {
        try run(openssl, ["req", "-newkey", "rsa:2048", "-nodes", "-subj", subject, "-keyout", "\(dir)/\(name).key",
                          "-out", "\(dir)/\(name).csr"])
        try Data(extensions.utf8).write(to: URL(fileURLWithPath: "\(dir)/\(name).ext"))
        try run(
            openssl,
            [
                "x509", "-req", "-in", "\(dir)/\(name).csr", "-CA", dir + "/ca.pem", "-CAkey", dir + "/ca.key",
                "-CAcreateserial", "-days", "2", "-extfile", "\(dir)/\(name).ext", "-out", "\(dir)/\(name).pem",
            ])
    }
    for file in ["ca.pem", "server.pem", "server.key"] { chmod("\(dir)/\(file)", 0o644) }
}

@Test(.timeLimit(.minutes(10)))
func tlsIsVerifiedByDefaultWithTheCAFileTheHostNameAndClientCertificates() throws {
    let dir = makeTempDirectory("mqtt-tls")
    chmod(dir, 0o755)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try makeCertificates(dir)
    let tls = "cafile \(dir)/ca.pem\ncertfile \(dir)/server.pem\nkeyfile \(dir)/server.key\nallow_anonymous true\n"
    let broker = try Broker(configuration: tls)
    let strict = try Broker(configuration: tls + "require_certificate true\n")
    let cases: [(String, [String], String)] = [
        ("ca-file", ["--mqtt", "mqtts://localhost:\(broker.port)", "--ca-file", dir + "/ca.pem"], "mqtt connected"),
        ("system CAs only", ["--mqtt", "mqtts://localhost:\(broker.port)"], "certificate verify failed"),
        (
            "host name", ["--mqtt", "mqtts://127.0.0.1:\(broker.port)", "--ca-file", dir + "/ca.pem"],
            "mqtt connection failed"
        ),
        (
            "client certificate",
            [
                "--mqtt", "mqtts://localhost:\(strict.port)", "--ca-file", dir + "/ca.pem",
                "--mqtt-cert", dir + "/client.pem", "--mqtt-key", dir + "/client.key",
            ], "mqtt connected"
        ),
        (
            "no client certificate", ["--mqtt", "mqtts://localhost:\(strict.port)", "--ca-file", dir + "/ca.pem"],
            "mqtt connection failed"
        ),
    ]
    var kiosks: [(String, Kiosk, String)] = []
    for (name, arguments, outcome) in cases {
        let state = makeTempDirectory("mqtt-state")
        let kiosk = try Kiosk(["--interval", "60", "--run-for", "30", "--mqtt-id", "tls", "--state-dir", state]
                              + arguments)
        kiosks.append((name, kiosk, outcome))
    }
    for (name, kiosk, outcome) in kiosks {
        #expect(waitFor(15) { kiosk.logText.contains(outcome) && kiosk.shown == [0] }, "\(name): \(kiosk.logText)")
        if outcome != "mqtt connected" {
            #expect(!kiosk.logText.contains("mqtt connected"), "\(name): \(kiosk.logText)")
        }
        kiosk.stop()
        print("mqtt tls \(name): \(kiosk.log.all.first { $0.contains("mqtt conn") } ?? "")")
    }
}

@Test func libmosquittoIsLoadedOnlyForAShowWithMQTT() throws {
    func libraries(_ arguments: [String]) throws -> Set<String> {
        let frames = makeTempDirectory("kiosk-ld")
        defer { try? FileManager.default.removeItem(atPath: frames) }
        let child = try Child(
            builtExecutable("kiosk-carousel"),
            ["--display", "offscreen:" + frames, "--size", "32x20", "--run-for", "1", "--state-dir", frames]
                + arguments + [samples + "/grey-1920x1200.jpg"], environment: ["LD_DEBUG": "files"])
        child.wait()
        child.stderr?.waitForEnd()
        return Set(child.stderr!.all.compactMap { line in
            line.range(of: "file=").map { String(line[$0.upperBound...].prefix { $0 != " " }) }
        })
    }
    let plain = try libraries([])
    #expect(
        plain.contains("libjpeg.so.62") && !plain.contains("libmosquitto.so.1") && !plain.contains("libssl.so.3"),
        "\(plain.sorted())")
    let mqtt = try libraries(["--mqtt", "mqtt://127.0.0.1:\(freePort())", "--mqtt-id", "ld"])
    #expect(mqtt.contains("libmosquitto.so.1"), "\(mqtt.sorted())")
}

@Test(.timeLimit(.minutes(10)))
func theACLOfTheDocsConfinesEachKioskToItsOwnTopics() throws {
    let dir = makeTempDirectory("mqtt-acl")
    chmod(dir, 0o755)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // docs/mqtt.md "Security", plus a reader of every kiosk's events for the test.
    let acl = "pattern readwrite kiosk-carousel/%c/#\npattern write homeassistant/+/%c/+/config\n"
        + "topic read homeassistant/status\n"
        + "topic read kiosk-carousel/+/events\ntopic read homeassistant/#\n"
    try Data(acl.utf8).write(to: URL(fileURLWithPath: dir + "/acl"))
    chmod(dir + "/acl", 0o644)
    let broker = try Broker(configuration: "allow_anonymous true\nacl_file \(dir)/acl\n")
    let reader = try Subscriber(broker, topics: ["kiosk-carousel/+/events", "homeassistant/#"])
    let own = try Kiosk(["--interval", "0.5", "--run-for", "30", "--mqtt", broker.url, "--mqtt-id", "acl-a",
                         "--state-dir", makeTempDirectory("mqtt-state")])
    // A kiosk writing under another device's prefix: the broker refuses its events (MQTT 5
    // PUBACK "Not authorized"), and its discovery configs never reach a reader.
    let other = try Kiosk([
        "--interval", "0.5", "--run-for", "30", "--mqtt", broker.url, "--mqtt-id", "acl-b",
        "--mqtt-prefix", "kiosk-carousel/acl-a", "--mqtt-discovery", "elsewhere",
        "--state-dir", makeTempDirectory("mqtt-state"),
    ])
    #expect(
        waitFor(15) { reader.messages.filter { $0.topic == "kiosk-carousel/acl-a/events" }.count >= 3 },
        "\(own.logText)")
    #expect(waitFor(15) { other.logText.contains("mqtt event refused by the broker") }, "\(other.logText)")
    #expect(other.logText.contains("Not authorized"))
    // The device's own command topic works under the ACL.
    try publish(broker, "kiosk-carousel/acl-a/command/pause", "PRESS")
    #expect(waitFor(3) { own.logText.contains("mqtt connected") })
    own.stop()
    other.stop()
    let configs = reader.messages.filter { $0.topic.hasSuffix("/config") }.map(\.topic)
    #expect(
        configs.count == 7 && configs.allSatisfy { $0.hasPrefix("homeassistant/") && $0.contains("/acl-a/") },
        "\(configs)")
    // Only acl-a's events reached the reader (both kiosks count from seq 1: the other's would
    // repeat numbers), every one of them.
    let events = reader.messages.filter { $0.topic.hasSuffix("/events") }.compactMap { seq(of: $0.payload) }
    #expect(Set(events).count == events.count && events.count >= own.events.all.count, "\(events)")
}
