// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// The release: one version (the top-level VERSION file) in `--version` and in the .deb,
/// changelog.Debian.gz made from CHANGELOG.md and readable by dpkg, the maintainer a marked
/// placeholder. (Reproducibility of the whole .deb is Tests/release/reproducible.sh: it needs
/// two release builds, too long for this suite.)
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The first line of the repository's VERSION file.
func releaseVersionFile() -> String {
    let text = (try? String(contentsOf: repository.appendingPathComponent("VERSION"), encoding: .utf8)) ?? ""
    return text.split(separator: "\n").first.map(String.init) ?? ""
}

private func runProgram(_ path: String, _ arguments: [String],
                        environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

@Test func versionPrintsTheVersionFileAndTheLibraries() throws {
    let version = releaseVersionFile()
    #expect(version.split(separator: ".").count == 3 && version.allSatisfy { $0.isNumber || $0 == "." },
            "VERSION: '\(version)'")
    let out = try runProgram(kioskExecutable(), ["--version"])
    #expect(out.status == 0, "\(out.stderr)")
    let lines = out.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "kiosk-carousel \(version)", "\(out.stdout)")
    // libpng reports the version of the library that is loaded; it is Debian's 1.6.
    let png = lines.first { $0.hasPrefix("libpng ") } ?? ""
    #expect(png.contains("running 1.6."), "\(png)")
    #expect(png.contains("loaded from /") && png.contains("libpng16.so.16"), "\(png)")
    let jpeg = lines.first { $0.hasPrefix("libjpeg-turbo ") } ?? ""
    #expect(jpeg.contains("built with 2.") && jpeg.contains("libjpeg.so.62"), "\(jpeg)")
    // libcurl reports the version of the library that is loaded; Debian 12's is 7.88.
    let curl = lines.first { $0.hasPrefix("libcurl ") } ?? ""
    #expect(curl.contains("running 7.") || curl.contains("running 8."), "\(curl)")
    let jansson = lines.first { $0.hasPrefix("libjansson ") } ?? ""
    #expect(jansson.contains("running 2.") && jansson.contains("built with 2."), "\(jansson)")
    for name in ["libdrm", "libevdev", "libcurl", "libjansson"] {
        let line = lines.first { $0.hasPrefix(name + " ") } ?? ""
        #expect(line.contains("loaded from /") && line.contains(name), "\(name): '\(line)'")
    }
    // --version wins over everything else, as --help does, and needs no SOURCE.
    let withOthers = try runProgram(kioskExecutable(), ["--interval", "bad", "--version"])
    #expect(withOthers.status == 0 && withOthers.stdout.hasPrefix("kiosk-carousel \(version)\n"))
}

/// Every library the program uses is listed with a version string, those it opens with dlopen
/// on first use too (--version opens them to ask); one that cannot be loaded (here a file that
/// is no ELF object named libheif.so.1, found first on LD_LIBRARY_PATH) is "not installed" with
/// the loader's reason, and the others are listed as before.
@Test func versionListsEveryLibraryWithItsVersion() throws {
    let names = ["libjpeg-turbo", "libpng", "libwebp", "libwebpdemux", "giflib", "libheif", "libde265", "libcurl",
                 "libcrypto", "libjansson", "FreeType", "HarfBuzz", "fontconfig", "FriBidi", "libmosquitto"]
    func line(_ name: String, in text: String) -> String {
        text.split(separator: "\n").map(String.init).first { $0.hasPrefix(name + " ") } ?? ""
    }
    let out = try runProgram(kioskExecutable(), ["--version"])
    #expect(out.status == 0, "\(out.stderr)")
    // One line per library, in this order: the codecs', the display's, the touchscreen's, the
    // downloads', JSON's, the text's, MQTT's (each module reports its own).
    let listed = out.stdout.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != " " }) }
    #expect(listed == ["libjpeg-turbo", "libpng", "libwebp", "libwebpdemux", "giflib", "libheif", "libde265",
                       "libdrm", "libevdev", "libcurl", "libcrypto", "libjansson", "FreeType", "HarfBuzz", "fontconfig",
                       "FriBidi", "libmosquitto"], "\(out.stdout)")
    for name in names {
        let l = line(name, in: out.stdout)
        #expect(l.contains(#/(running|built with) [0-9]+\.[0-9]+/#), "\(name): '\(l)'")
        #expect(!l.contains("not installed"), "\(name): '\(l)'")
    }
    for name in ["libheif", "libcurl", "libcrypto", "FreeType", "HarfBuzz", "fontconfig", "FriBidi"] {
        let l = line(name, in: out.stdout)
        #expect(l.contains(#/running [0-9]+\.[0-9]+/#) && l.contains("loaded from /"), "\(name): '\(l)'")
    }

    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kc-version-noheif-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    try Data("not a shared object\n".utf8).write(to: dir.appendingPathComponent("libheif.so.1"))
    let without = try runProgram(kioskExecutable(), ["--version"], environment: ["LD_LIBRARY_PATH": dir.path])
    #expect(without.status == 0, "\(without.stderr)")
    let heif = line("libheif", in: without.stdout)
    #expect(heif.contains("not installed (") && heif.contains("libheif.so.1") && !heif.contains("running"), "'\(heif)'")
    for name in names where name != "libheif" {
        #expect(line(name, in: without.stdout).contains(#/(running|built with) [0-9]+\.[0-9]+/#),
                "\(name) without libheif")
    }
}

@Test func versionIsRefusedInAConfigurationFile() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kc-version-conf-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let conf = dir.appendingPathComponent("kiosk.conf")
    try Data("version\n".utf8).write(to: conf)
    let out = try runProgram(kioskExecutable(), ["--config", conf.path, "deploy/samples"])
    #expect(out.status == 64)
    #expect(out.stderr.contains("kiosk.conf:1: --version is not allowed in a configuration file"), "\(out.stderr)")
}

/// build-deb.sh with the VERSION file's version: the package's version and file name come
/// from it, and changelog.Debian.gz parses with dpkg-parsechangelog, newest entry first,
/// one entry per version of CHANGELOG.md. Its files' time is the last commit's, which
/// build-deb.sh reads with git; where git cannot read the checkout (Debian 13's root of
/// Tests/swiftlang has no git), it refuses and says so, and the package is built with a time given.
@Test func theDebTakesTheVersionFileAndItsChangelogParses() throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-deb"),
          FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-parsechangelog") else {
        Issue.record("dpkg-deb and dpkg-parsechangelog needed: apt-get install -y dpkg-dev")
        return
    }
    let version = releaseVersionFile()
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kc-release-deb-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let stub = dir.appendingPathComponent("kiosk-carousel")
    try Data("#!/bin/sh\necho stand-in\n".utf8).write(to: stub)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stub.path)
    func buildDeb(epoch: String) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProgram("/bin/sh", [repository.appendingPathComponent("deploy/build-deb.sh").path],
                       environment: ["BINARY": stub.path, "OUTDIR": dir.path, "VERSION": "",
                                     "SOURCE_DATE_EPOCH": epoch])
    }
    let git = FileManager.default.isExecutableFile(atPath: "/usr/bin/git")
        ? try runProgram("/usr/bin/git", ["-C", repository.path, "log", "-1", "--format=%ct"]) : nil
    var epoch = git.map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
    var built = try buildDeb(epoch: "")
    if git?.status != 0 || epoch.isEmpty {
        #expect(built.status == 1 && built.stderr.contains("SOURCE_DATE_EPOCH unset"), "\(built.stderr)")
        epoch = "1800000000"  // 2027, after CHANGELOG.md's dates
        built = try buildDeb(epoch: epoch)
    }
    #expect(built.status == 0, "\(built.stderr)")
    let deb = dir.appendingPathComponent("kiosk-carousel_\(version)-1_amd64.deb")
    #expect(built.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == deb.path)
    #expect(try runProgram("/usr/bin/dpkg-deb", ["-f", deb.path, "Version"]).stdout == "\(version)-1\n")
    // Every member is dated at that time (dpkg-deb -c lists them to the minute, in TZ's time).
    let minute = try runProgram("/bin/date", ["-u", "-d", "@" + epoch, "+%Y-%m-%d %H:%M"]).stdout
        .trimmingCharacters(in: .whitespacesAndNewlines)
    let members = try runProgram("/usr/bin/dpkg-deb", ["-c", deb.path], environment: ["TZ": "UTC"]).stdout
        .split(separator: "\n")
    #expect(!members.isEmpty && members.allSatisfy { $0.contains(" \(minute) ./") }, "\(minute): \(members.prefix(3))")

    let unpacked = dir.appendingPathComponent("unpacked")
    #expect(try runProgram("/usr/bin/dpkg-deb", ["-x", deb.path, unpacked.path]).status == 0)
    let doc = unpacked.appendingPathComponent("usr/share/doc/kiosk-carousel")
    let changelog = dir.appendingPathComponent("changelog.Debian")
    let gunzip = try runProgram("/bin/gzip", ["-dc", doc.appendingPathComponent("changelog.Debian.gz").path])
    #expect(gunzip.status == 0)
    try Data(gunzip.stdout.utf8).write(to: changelog)
    let parsed = try runProgram("/usr/bin/dpkg-parsechangelog", ["-l", changelog.path, "--format", "rfc822", "--all"])
    #expect(parsed.status == 0, "\(parsed.stderr)")
    let markdown = try String(contentsOf: repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
    let released = markdown.split(separator: "\n").filter { $0.hasPrefix("## ") }.map {
        String($0.dropFirst(3).split(separator: " ")[0]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")) + "-1"
    }
    #expect(released.first == "\(version)-1", "CHANGELOG.md's newest entry is VERSION's")
    let versions = parsed.stdout.split(separator: "\n").filter { $0.hasPrefix("Version: ") }
        .map { String($0.dropFirst(9)) }
    #expect(versions == released, "\(parsed.stdout)")
    let newest = try runProgram("/usr/bin/dpkg-parsechangelog", ["-l", changelog.path, "-S", "Maintainer"])
    #expect(newest.stdout == "kiosk-carousel developers <maintainers@kiosk-carousel.invalid>\n")
    // changelog.gz is CHANGELOG.md itself; copyright names Apache-2.0 for the project's files.
    #expect(try runProgram("/bin/gzip", ["-dc", doc.appendingPathComponent("changelog.gz").path]).stdout == markdown)
    let copyright = try String(contentsOf: doc.appendingPathComponent("copyright"), encoding: .utf8)
    #expect(copyright.contains("Files: *\nCopyright: 2026 kiosk-carousel developers\nLicense: Apache-2.0\n"))
}

/// A `--ca-file` that cannot be read is named at start (the show goes on from what is cached;
/// https to that CA's servers fails until it is fixed), and a readable one is not.
@Test func anUnreadableCAFileIsNamedAtStart() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kc-ca-\(getpid())").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../deploy/samples").standardized.path
    func run(_ ca: String) throws -> (status: Int32, stdout: String, stderr: String) {
        try runProgram(kioskExecutable(), ["--display", "offscreen:" + dir + "/frames", "--size", "64x40",
                                          "--control", "none",
                                          "--run-for", "0.1", "--ca-file", ca, samples])
    }
    let missing = try run(dir + "/nope.pem")
    #expect(missing.status == 0, "\(missing.stderr)")
    #expect(missing.stderr.contains("--ca-file unusable") && missing.stderr.contains("No such file or directory"),
            "\(missing.stderr)")
    let directory = try run(dir)
    #expect(directory.stderr.contains("--ca-file unusable") && directory.stderr.contains("not a regular file"),
            "\(directory.stderr)")
    #expect(FileManager.default.createFile(atPath: dir + "/ca.pem",
                                           contents: Data("-----BEGIN CERTIFICATE-----\n".utf8)))
    let readable = try run(dir + "/ca.pem")
    #expect(!readable.stderr.contains("--ca-file"), "\(readable.stderr)")
}

/// Every Swift and C source of the project (and its scripts) says its licence in its first
/// lines, as SPDX has it: `SPDX-License-Identifier: Apache-2.0` (README, "Licence"); the one
/// exceptions, Tests/kernel/vkms/ and Tests/kernel/gpio-sim/ (test-only kernel module builds,
/// GPL-2.0 like the kernel, their READMEs say so), say `GPL-2.0-only` instead.
@Test func everySourceFileNamesItsLicence() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized.path
    var missing: [String] = []
    var checked = 0
    func walk(_ directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names.sorted() where !name.hasPrefix(".") || name == ".ci" {
            let path = directory + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue { walk(path); continue }
            let ext = (name as NSString).pathExtension
            guard ["swift", "c", "h", "py", "sh"].contains(ext) || directory.hasSuffix("/.ci") else { continue }
            checked += 1
            let head = (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n", maxSplits: 3)
                .prefix(3) ?? []
            let kernelModule = directory.hasSuffix("/Tests/kernel/vkms")
                || directory.hasSuffix("/Tests/kernel/gpio-sim")
            let licence = kernelModule ? "GPL-2.0-only" : "Apache-2.0"
            if !head.contains(where: { $0.contains("SPDX-License-Identifier: " + licence) }) {
                missing.append(String(path.dropFirst(root.count + 1)))
            }
        }
    }
    walk(root)  // Package.swift, Sources, Tests, deploy (and .ci, the one hidden folder walked)
    #expect(checked > 200)
    #expect(missing.isEmpty, "no SPDX line: \(missing)")
}

/// No source under Sources/ converts a closure with `withoutActuallyEscaping`: swiftc puts the
/// unmapped length of the file's path into that conversion's escape check, which `-file-prefix-map`
/// does not reach, so the release binary would differ between clones at different paths
/// (docs/building.md, reproducible builds; `Tests/release/reproducible.sh` shows it as one byte of
/// .text).
@Test func noSourceUsesWithoutActuallyEscaping() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardized.path
    let sources = root + "/Sources"
    var offenders: [String] = []
    var checked = 0
    let walker = FileManager.default.enumerator(atPath: sources)
    while let relative = walker?.nextObject() as? String {
        guard relative.hasSuffix(".swift") else { continue }
        checked += 1
        let text = try String(contentsOfFile: sources + "/" + relative, encoding: .utf8)
        if text.contains("withoutActuallyEscaping(") { offenders.append("Sources/" + relative) }
    }
    #expect(checked > 100)
    #expect(offenders.isEmpty, "withoutActuallyEscaping makes the build depend on its path: \(offenders)")
}
