// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// deploy/: the systemd unit (systemd-analyze verify and security), install.sh into a scratch
/// root (DESTDIR), and the .deb that build-deb.sh makes (contents, control fields, conffiles,
/// maintainer scripts, lintian). None of them needs a release build: a small stand-in
/// executable plays the binary. Tools that are missing make the test fail with the apt-get
/// command that installs them (deploy/apt-deps.sh --tests installs them all).
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
private let deploy = repository.appendingPathComponent("deploy")

private struct Output {
    var status: Int32
    var stdout: String
    var stderr: String
}

private struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Runs `program` with `arguments` (looked up on PATH when it has no slash) and waits.
private func run(_ program: String, _ arguments: [String], environment: [String: String] = [:],
                 directory: URL? = nil) throws -> Output {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program.contains("/") ? program : (try which(program) ?? program))
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    process.environment = env
    if let directory { process.currentDirectoryURL = directory }
    let outFile = FileManager.default.temporaryDirectory.appendingPathComponent("deploy-out-\(UUID().uuidString)")
    let errFile = FileManager.default.temporaryDirectory.appendingPathComponent("deploy-err-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: outFile); try? FileManager.default.removeItem(at: errFile) }
    process.standardOutput = try FileHandle(forWritingTo: outFile)
    process.standardError = try FileHandle(forWritingTo: errFile)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return Output(status: process.terminationStatus,
                  stdout: (try? String(contentsOf: outFile, encoding: .utf8)) ?? "",
                  stderr: (try? String(contentsOf: errFile, encoding: .utf8)) ?? "")
}

private func which(_ program: String) throws -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for dir in path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] {
        let candidate = "\(dir)/\(program)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}

/// The tool, or a recorded failure saying which package to install.
private func requireTool(_ program: String, package: String) throws -> Bool {
    if try which(program) != nil { return true }
    Issue.record("\(program) is missing: apt-get install -y \(package) (or deploy/apt-deps.sh --tests)")
    return false
}

private func scratchDirectory(_ name: String) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-deploy-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

/// A stand-in for the release binary: a shell script (the layout does not care what it runs).
private func stubBinary(in dir: URL) throws -> URL {
    let url = dir.appendingPathComponent("kiosk-carousel")
    try Data("#!/bin/sh\necho \"kiosk-carousel stand-in $*\"\n".utf8).write(to: url)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
    return url
}

/// `systemd-analyze verify` checks that ExecStart's program exists and is executable, so the
/// unit is verified as a copy whose ExecStart (`binaryPath`) points at a stand-in executable.
/// Any output is a finding (unknown settings, bad values, missing commands), not only a
/// non-zero status.
private func verifyUnit(_ unitText: String, binaryPath: String) throws {
    let dir = try scratchDirectory("verify")
    defer { try? FileManager.default.removeItem(at: dir) }
    let stub = try stubBinary(in: dir)
    #expect(unitText.contains("ExecStart=\(binaryPath) "))
    let unit = dir.appendingPathComponent("kiosk-carousel.service")
    try Data(unitText.replacingOccurrences(of: binaryPath, with: stub.path).utf8).write(to: unit)
    let out = try run("systemd-analyze", ["verify", "--man=no", unit.path])
    #expect(out.status == 0, "systemd-analyze verify: \(out.stderr)")
    #expect(out.stderr.isEmpty && out.stdout.isEmpty, "systemd-analyze verify said: \(out.stdout)\(out.stderr)")
}

private func unitText() throws -> String {
    try String(contentsOf: deploy.appendingPathComponent("kiosk-carousel.service"), encoding: .utf8)
}

// MARK: - The unit

@Test func theUnitVerifies() throws {
    guard try requireTool("systemd-analyze", package: "systemd") else { return }
    try verifyUnit(try unitText(), binaryPath: "/usr/bin/kiosk-carousel")
}

@Test func theUnitHasTheSettingsTheDocsDescribe() throws {
    let settings = Set(try unitText().split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") })
    for line in [
        "Type=notify", "WatchdogSec=30", "Restart=always", "User=kiosk", "PrivateUsers=yes", "StateDirectoryMode=0750",
        "IPAddressDeny=169.254.0.0/16 fe80::/10 100.100.100.200/32 192.0.0.192/32 fd00:ec2::254/128",
        "NoExecPaths=/ /var/lib/kiosk-carousel /var/cache/kiosk-carousel /run/kiosk-carousel /tmp /var/tmp /dev/shm",
        "ExecPaths=/usr -/bin -/sbin -/lib -/lib64",
        "TTYPath=/dev/tty1", "Conflicts=getty@tty1.service", "StateDirectory=kiosk-carousel",
        "CacheDirectory=kiosk-carousel", "RuntimeDirectory=kiosk-carousel",
        "ExecStart=/usr/bin/kiosk-carousel --config /etc/kiosk-carousel/kiosk-carousel.conf",
        "NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
        "ProtectKernelTunables=yes", "ProtectKernelModules=yes", "ProtectKernelLogs=yes", "ProtectControlGroups=yes",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "DevicePolicy=closed", "DeviceAllow=char-drm rw",
        "DeviceAllow=char-fb rw", "DeviceAllow=char-input r", "DeviceAllow=/dev/tty1 rw",
        "SystemCallFilter=@system-service", "SystemCallArchitectures=native", "CapabilityBoundingSet=",
        "WantedBy=multi-user.target",
    ] {
        #expect(settings.contains(line), "missing: \(line)")
    }
    #expect(!settings.contains { $0.hasPrefix("PrivateNetwork=yes") }, "it fetches manifests")
    // Its groups come from the user database (video, render, kiosk-touch); never input or tty.
    #expect(!settings.contains { $0.hasPrefix("SupplementaryGroups=") && ($0.contains("input") || $0.contains("tty")) })
}

/// The rating must stay "OK" or better (systemd's words, worst to best: UNSAFE, EXPOSED,
/// MEDIUM, OK, SAFE, PERFECT; OK is an exposure under 5.0), and docs/deployment.md and
/// docs/security.md state the score.
@Test func theUnitIsRatedOKOrBetterAndTheDocsSaySo() throws {
    guard try requireTool("systemd-analyze", package: "systemd") else { return }
    let out = try run("systemd-analyze", ["security", "--offline=yes", "--threshold=49", "--no-pager",
                                          deploy.appendingPathComponent("kiosk-carousel.service").path])
    #expect(out.status == 0, "exposure over 4.9: \(out.stdout.suffix(400)) \(out.stderr)")
    let summary = out.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") }.map(String.init) ?? ""
    let words = summary.split(separator: " ")
    guard let scoreIndex = words.firstIndex(where: { Double($0) != nil }), scoreIndex + 1 < words.count else {
        Issue.record("no overall exposure line in: \(out.stdout.suffix(300))")
        return
    }
    let score = String(words[scoreIndex]), rating = String(words[scoreIndex + 1])
    #expect(["OK", "SAFE", "PERFECT"].contains(rating), "\(summary)")
    for page in ["docs/deployment.md", "docs/security.md"] {
        let text = try String(contentsOf: repository.appendingPathComponent(page), encoding: .utf8)
        #expect(text.contains("\(score) \(rating)"), "\(page) should state the exposure '\(score) \(rating)'")
    }
}

// MARK: - install.sh

@Test func installShLaysTheFilesOutUnderDestdir() throws {
    let dir = try scratchDirectory("install")
    defer { try? FileManager.default.removeItem(at: dir) }
    let stub = try stubBinary(in: dir)
    let root = dir.appendingPathComponent("root")
    let first = try run("/bin/sh", [deploy.appendingPathComponent("install.sh").path],
                        environment: ["DESTDIR": root.path, "BINARY": stub.path])
    #expect(first.status == 0, "install.sh: \(first.stderr)")
    #expect(first.stdout.contains("DESTDIR mode"))

    let fm = FileManager.default
    func path(_ p: String) -> String { root.path + p }
    func mode(_ p: String) -> Int { ((try? fm.attributesOfItem(atPath: path(p)))?[.posixPermissions] as? Int) ?? -1 }
    #expect(fm.contentsEqual(atPath: path("/usr/local/bin/kiosk-carousel"), andPath: stub.path))
    #expect(mode("/usr/local/bin/kiosk-carousel") == 0o755)
    #expect(fm.contentsEqual(atPath: path("/etc/udev/rules.d/70-kiosk-carousel-touch.rules"),
                             andPath: deploy.appendingPathComponent("70-kiosk-carousel-touch.rules").path))
    #expect(mode("/etc/systemd/system/kiosk-carousel.service") == 0o644)
    #expect(fm.contentsEqual(atPath: path("/etc/kiosk-carousel/kiosk-carousel.conf"),
                             andPath: deploy.appendingPathComponent("kiosk-carousel.conf").path))
    #expect(mode("/etc/kiosk-carousel/kiosk-carousel.conf") == 0o644)
    let link = try fm.destinationOfSymbolicLink(atPath: path("/etc/systemd/system/multi-user.target.wants/kiosk-carousel.service"))
    #expect(link == "/etc/systemd/system/kiosk-carousel.service")
    let samples = try fm.contentsOfDirectory(atPath: deploy.appendingPathComponent("samples").path).filter { $0.hasSuffix(".jpg") }
    #expect(samples.count == 5)
    for sample in samples {
        #expect(fm.fileExists(atPath: path("/usr/local/share/kiosk-carousel/samples/\(sample)")))
        #expect(fm.fileExists(atPath: path("/var/lib/kiosk-carousel/images/\(sample)")))
    }
    #expect(fm.fileExists(atPath: path("/usr/local/share/doc/kiosk-carousel/copyright")))
    #expect(fm.fileExists(atPath: path("/usr/local/share/doc/kiosk-carousel/README.md.gz")))
    #expect(fm.fileExists(atPath: path("/usr/local/share/man/man1/kiosk-carousel.1.gz")))
    // Nothing outside the expected top-level folders (no user database, no /lib).
    #expect(Set(try fm.contentsOfDirectory(atPath: root.path)) == ["etc", "usr", "var"])
    #expect(Set(try fm.contentsOfDirectory(atPath: path("/etc"))) == ["kiosk-carousel", "systemd", "udev"])

    // The installed unit runs the binary from /usr/local and still verifies.
    let unit = try String(contentsOfFile: path("/etc/systemd/system/kiosk-carousel.service"), encoding: .utf8)
    #expect(unit.contains("ExecStart=/usr/local/bin/kiosk-carousel --config /etc/kiosk-carousel/kiosk-carousel.conf\n"))
    #expect(unit.contains("Documentation=man:kiosk-carousel(1) file:///usr/local/share/doc/kiosk-carousel/README.md.gz"))
    if try requireTool("systemd-analyze", package: "systemd") {
        try verifyUnit(unit, binaryPath: "/usr/local/bin/kiosk-carousel")
    }

    // Again, over an edited configuration and a changed images folder: both are kept.
    try Data("interval 9\nsource /srv/photos\n".utf8).write(to: URL(fileURLWithPath: path("/etc/kiosk-carousel/kiosk-carousel.conf")))
    try fm.removeItem(atPath: path("/var/lib/kiosk-carousel/images/grey-1920x1200.jpg"))
    let second = try run("/bin/sh", [deploy.appendingPathComponent("install.sh").path],
                         environment: ["DESTDIR": root.path, "BINARY": stub.path])
    #expect(second.status == 0, "install.sh again: \(second.stderr)")
    #expect(try String(contentsOfFile: path("/etc/kiosk-carousel/kiosk-carousel.conf"), encoding: .utf8) == "interval 9\nsource /srv/photos\n")
    #expect(fm.contentsEqual(atPath: path("/etc/kiosk-carousel/kiosk-carousel.conf.dist"),
                             andPath: deploy.appendingPathComponent("kiosk-carousel.conf").path))
    #expect(second.stdout.contains("kept your /etc/kiosk-carousel/kiosk-carousel.conf"))
    #expect(!fm.fileExists(atPath: path("/var/lib/kiosk-carousel/images/grey-1920x1200.jpg")))
}

@Test func installShWithoutDestdirWantsRoot() throws {
    guard getuid() != 0 else { return }  // as root it would really install: not in a test
    let out = try run("/bin/sh", [deploy.appendingPathComponent("install.sh").path], environment: ["BINARY": "/bin/true"])
    #expect(out.status != 0 && out.stderr.contains("run as root"))
}

@Test func installShRefusesABinaryThatIsNotThere() throws {
    let dir = try scratchDirectory("install-missing")
    defer { try? FileManager.default.removeItem(at: dir) }
    let out = try run("/bin/sh", [deploy.appendingPathComponent("install.sh").path],
                      environment: ["DESTDIR": dir.appendingPathComponent("root").path, "BINARY": dir.appendingPathComponent("nope").path])
    #expect(out.status != 0 && out.stderr.contains("is not an executable file"), "\(out.stderr)")
}

// MARK: - The .deb

private func buildDeb(binary: URL, in dir: URL, version: String = "1.2.3") throws -> (Output, URL) {
    let out = try run("/bin/sh", [deploy.appendingPathComponent("build-deb.sh").path],
                      environment: ["BINARY": binary.path, "VERSION": version, "OUTDIR": dir.path,
                                    "SOURCE_DATE_EPOCH": "1800000000"])  // 2027, after CHANGELOG.md's dates
    return (out, dir.appendingPathComponent("kiosk-carousel_\(version)-1_amd64.deb"))
}

/// Where build-deb.sh puts the unit: /lib/systemd/system on Debian 12, /usr/lib/systemd/system
/// on later releases (their /lib is an alias of /usr/lib), by /etc/os-release as build-deb.sh reads it.
func unitDirectory() -> String {
    let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
    return release.split(separator: "\n").contains("VERSION_CODENAME=bookworm") ? "lib/systemd/system" : "usr/lib/systemd/system"
}

@Test func theDebHasTheFilesTheFieldsAndTheScripts() throws {
    guard try requireTool("dpkg-deb", package: "dpkg") else { return }
    let dir = try scratchDirectory("deb")
    defer { try? FileManager.default.removeItem(at: dir) }
    let stub = try stubBinary(in: dir)
    let (built, deb) = try buildDeb(binary: stub, in: dir)
    #expect(built.status == 0, "build-deb.sh: \(built.stderr)")
    #expect(built.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == deb.path)
    #expect(built.stderr.contains("not an ELF file"))  // the stand-in gets the fixed Depends

    // Contents: path -> (mode string, owner).
    let listing = try run("dpkg-deb", ["-c", deb.path])
    #expect(listing.status == 0)
    var entries: [String: (mode: String, owner: String)] = [:]
    for line in listing.stdout.split(separator: "\n") {
        let f = line.split(separator: " ", omittingEmptySubsequences: true)
        guard f.count >= 6 else { continue }
        var name = String(f[5])
        if name.hasPrefix("./") { name.removeFirst() }
        entries[name.hasSuffix("/") && name != "/" ? String(name.dropLast()) : name] = (String(f[0]), String(f[1]))
    }
    let samples = try FileManager.default.contentsOfDirectory(atPath: deploy.appendingPathComponent("samples").path).filter { $0.hasSuffix(".jpg") }
    var expected: [String: String] = [
        "/usr/bin/kiosk-carousel": "-rwxr-xr-x",
        "/\(unitDirectory())/kiosk-carousel.service": "-rw-r--r--",
        "/\(unitDirectory().replacingOccurrences(of: "systemd/system", with: "udev/rules.d"))/70-kiosk-carousel-touch.rules":
            "-rw-r--r--",
        "/etc/kiosk-carousel/kiosk-carousel.conf": "-rw-r--r--",
        "/usr/share/doc/kiosk-carousel/copyright": "-rw-r--r--",
        "/usr/share/doc/kiosk-carousel/changelog.gz": "-rw-r--r--",
        "/usr/share/doc/kiosk-carousel/changelog.Debian.gz": "-rw-r--r--",
        "/usr/share/doc/kiosk-carousel/README.md.gz": "-rw-r--r--",
        "/usr/share/kiosk-carousel/samples/README.md": "-rw-r--r--",
        "/usr/share/man/man1/kiosk-carousel.1.gz": "-rw-r--r--",
    ]
    for sample in samples { expected["/usr/share/kiosk-carousel/samples/\(sample)"] = "-rw-r--r--" }
    for (path, mode) in expected {
        #expect(entries[path]?.mode == mode, "\(path): \(entries[path].map { "\($0)" } ?? "missing")")
    }
    #expect(entries.values.allSatisfy { $0.owner == "root/root" }, "every file owned by root")
    #expect(entries.keys.filter { !$0.hasSuffix("/") && entries[$0]!.mode.hasPrefix("-") }.count == expected.count,
            "unexpected files: \(Set(entries.keys).subtracting(expected.keys).filter { entries[$0]!.mode.hasPrefix("-") })")

    // Control fields.
    func field(_ name: String) throws -> String {
        try run("dpkg-deb", ["-f", deb.path, name]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    #expect(try field("Package") == "kiosk-carousel")
    #expect(try field("Version") == "1.2.3-1")
    #expect(try field("Maintainer") == "kiosk-carousel developers <maintainers@kiosk-carousel.invalid>")
    #expect(try field("Architecture") == "amd64")
    // Package names without their version constraints ("libcurl4 (>= 7.88.1)" -> "libcurl4").
    let depends = Set(try field("Depends").split(separator: ",").map {
        String($0.trimmingCharacters(in: .whitespaces).prefix { $0 != " " })
    })
    for package in ["adduser", "ca-certificates", "libc6", "libjpeg62-turbo", "libpng16-16", "libwebp7",
                    "libwebpdemux2", "libgif7", "libheif1",
                    "liblcms2-2", "libdrm2", "libevdev2",
                    "libcurl4", "libssl3", "libjansson4", "zlib1g", "libstdc++6", "libgcc-s1",
                    "libfreetype6", "libharfbuzz0b", "libfontconfig1", "libfribidi0", "fonts-dejavu-core", "libmosquitto1"] {
        // Debian 13 renamed some for its 64-bit time_t (libcurl4t64, libssl3t64, libpng16-16t64).
        #expect(depends.contains(package) || depends.contains(package + "t64"), "Depends lacks \(package): \(depends)")
    }
    // libgpiod is opened with dlopen: libgpiod3 (its 2.x API) on Debian 13, libgpiod2 (1.6) on Debian 12.
    let v2 = FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libgpiod.so.3")
    let gpiod = v2 ? "libgpiod3" : "libgpiod2"
    #expect(depends.contains(gpiod), "Depends lacks \(gpiod): \(depends)")
    #expect(Int(try field("Installed-Size")) ?? 0 > 1000)

    // The control archive: conffiles, md5sums, maintainer scripts executable and valid sh.
    let control = dir.appendingPathComponent("control")
    #expect(try run("dpkg-deb", ["-e", deb.path, control.path]).status == 0)
    #expect(try String(contentsOf: control.appendingPathComponent("conffiles"), encoding: .utf8)
            == "/etc/kiosk-carousel/kiosk-carousel.conf\n")
    let md5sums = try String(contentsOf: control.appendingPathComponent("md5sums"), encoding: .utf8)
    #expect(md5sums.contains("  usr/bin/kiosk-carousel\n") && !md5sums.contains("etc/kiosk-carousel"))
    for script in ["postinst", "prerm", "postrm"] {
        let path = control.appendingPathComponent(script).path
        #expect(FileManager.default.isExecutableFile(atPath: path), "\(script) not executable")
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        #expect(text.hasPrefix("#!/bin/sh\nset -e\n"), "\(script)")
        let syntax = try run("/bin/sh", ["-n", path])
        #expect(syntax.status == 0, "sh -n \(script): \(syntax.stderr)")
        if try which("dash") != nil {
            #expect(try run("dash", ["-n", path]).status == 0)
        }
    }
    let postinst = try String(contentsOf: control.appendingPathComponent("postinst"), encoding: .utf8)
    #expect(postinst.contains("adduser --system --group"))
    #expect(postinst.contains("usermod -a -G video,render,kiosk-touch kiosk"))
    #expect(postinst.contains("addgroup --system --quiet kiosk-touch") && postinst.contains("gpasswd -d kiosk \"$group\""))
    #expect(postinst.contains("udevadm trigger --action=change --subsystem-match=input"))
    #expect(postinst.contains("deb-systemd-helper enable \"$unit\""))
    let prerm = try String(contentsOf: control.appendingPathComponent("prerm"), encoding: .utf8)
    #expect(prerm.contains("deb-systemd-invoke stop kiosk-carousel.service"))
    let postrm = try String(contentsOf: control.appendingPathComponent("postrm"), encoding: .utf8)
    #expect(postrm.contains("rm -rf /var/cache/kiosk-carousel"))

    // The packaged unit is the repository's, and verifies.
    let unpacked = dir.appendingPathComponent("unpacked")
    #expect(try run("dpkg-deb", ["-x", deb.path, unpacked.path]).status == 0)
    #expect(FileManager.default.contentsEqual(atPath: unpacked.appendingPathComponent("\(unitDirectory())/kiosk-carousel.service").path,
                                              andPath: deploy.appendingPathComponent("kiosk-carousel.service").path))
    #expect(FileManager.default.contentsEqual(atPath: unpacked.appendingPathComponent("usr/bin/kiosk-carousel").path, andPath: stub.path))
}

/// A real ELF stand-in (a tiny C program linked with libdrm): Depends comes from
/// dpkg-shlibdeps, with versions, and the binary is stripped.
@Test func anELFBinaryGetsDependsFromItsLibraries() throws {
    guard try requireTool("dpkg-deb", package: "dpkg"), try requireTool("dpkg-shlibdeps", package: "dpkg-dev"),
          try requireTool("gcc", package: "gcc libc6-dev") else { return }
    let dir = try scratchDirectory("deb-elf")
    defer { try? FileManager.default.removeItem(at: dir) }
    let source = dir.appendingPathComponent("main.c")
    try Data("#include <xf86drm.h>\nint main(void) { return drmAvailable() ? 0 : 1; }\n".utf8).write(to: source)
    let binary = dir.appendingPathComponent("kiosk-carousel")
    let cc = try run("gcc", ["-g", "-o", binary.path, source.path, "-I/usr/include/libdrm", "-ldrm"])
    guard cc.status == 0 else {
        Issue.record("gcc failed (apt-get install -y gcc libc6-dev libdrm-dev): \(cc.stderr)")
        return
    }
    let (built, deb) = try buildDeb(binary: binary, in: dir)
    #expect(built.status == 0, "build-deb.sh: \(built.stderr)")
    #expect(!built.stderr.contains("not an ELF file"))
    let depends = try run("dpkg-deb", ["-f", deb.path, "Depends"]).stdout
    #expect(depends.contains("libdrm2 (>= "), "\(depends)")
    #expect(depends.contains("libc6 (>= "), "\(depends)")
    #expect(depends.hasPrefix("adduser, ca-certificates, "), "\(depends)")
    #expect(!depends.contains("libjpeg"), "only what the binary links: \(depends)")
    // and, by name, the libraries the program opens with dlopen (dpkg-shlibdeps cannot see them).
    for package in ["libcurl4", "libheif1", "libfreetype6", "libharfbuzz0b", "libfontconfig1", "libfribidi0",
                    "libssl3", "libmosquitto1"] {
        #expect(depends.contains(package + " (>= ") || depends.contains(package + "t64 (>= "), "\(depends)")
    }
    // libgpiod by the API the build system has: 2.x (libgpiod3) or 1.6 (libgpiod2).
    let v2 = FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libgpiod.so.3")
    #expect(depends.contains(v2 ? "libgpiod3 (>= 2.0)" : "libgpiod2 (>= 1.6)"), "\(depends)")
    // libavif by the ABI the build system has: 16 (libavif 1.x, Debian 13) or 15 (0.11, Debian 12).
    let avif16 = FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libavif.so.16")
    #expect(depends.contains(avif16 ? "libavif16 (>= 1.0.0)" : "libavif15 (>= 0.11.1)"), "\(depends)")
    let unpacked = dir.appendingPathComponent("unpacked")
    #expect(try run("dpkg-deb", ["-x", deb.path, unpacked.path]).status == 0)
    let file = try run("file", ["-b", unpacked.appendingPathComponent("usr/bin/kiosk-carousel").path]).stdout
    #expect(file.contains("stripped") && !file.contains("not stripped"), "\(file)")
}

/// A binary that needs a library no Debian package provides (a Swift build without
/// --static-swift-stdlib links /opt/swift's libswiftCore.so) is refused with the reason.
@Test func aBinaryWithUnpackagedLibrariesIsRefused() throws {
    guard try requireTool("dpkg-shlibdeps", package: "dpkg-dev"), try requireTool("gcc", package: "gcc libc6-dev") else { return }
    let dir = try scratchDirectory("deb-unpackaged")
    defer { try? FileManager.default.removeItem(at: dir) }
    let lib = dir.appendingPathComponent("libkioskfake.so")
    try Data("int kiosk_fake(void) { return 1; }\n".utf8).write(to: dir.appendingPathComponent("fake.c"))
    try Data("int kiosk_fake(void);\nint main(void) { return kiosk_fake(); }\n".utf8).write(to: dir.appendingPathComponent("main.c"))
    #expect(try run("gcc", ["-shared", "-fPIC", "-o", lib.path, dir.appendingPathComponent("fake.c").path]).status == 0)
    let binary = dir.appendingPathComponent("kiosk-carousel")
    #expect(try run("gcc", ["-o", binary.path, dir.appendingPathComponent("main.c").path, "-L\(dir.path)", "-lkioskfake",
                            "-Wl,-rpath,\(dir.path)"]).status == 0)
    let (built, deb) = try buildDeb(binary: binary, in: dir)
    #expect(built.status != 0)
    #expect(built.stderr.contains("comes from no Debian package"), "\(built.stderr)")
    #expect(!FileManager.default.fileExists(atPath: deb.path))
}

/// lintian: no errors.
@Test func theDebIsCleanOfLintianErrors() throws {
    guard try requireTool("dpkg-deb", package: "dpkg"), try requireTool("lintian", package: "lintian") else { return }
    let dir = try scratchDirectory("lintian")
    defer { try? FileManager.default.removeItem(at: dir) }
    let (built, deb) = try buildDeb(binary: try stubBinary(in: dir), in: dir)
    #expect(built.status == 0, "build-deb.sh: \(built.stderr)")
    let out = try run("lintian", ["--fail-on", "error", "--no-tag-display-limit", deb.path])
    #expect(out.status == 0, "lintian: \(out.stdout)\(out.stderr)")
    #expect(!out.stdout.split(separator: "\n").contains { $0.hasPrefix("E:") }, "\(out.stdout)")
}
