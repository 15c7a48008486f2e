// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
@testable import KioskApp

/// kiosk-carousel(1): the committed page is what its template and the option table give, it lists
/// exactly the options `--help` lists, and groff reads it without a warning. The page is written
/// by `swift run kiosk-man` (docs/building.md, "The manual page").
@Suite struct ManualPageTests {
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private static let template = repository.appendingPathComponent("deploy/kiosk-carousel.1.in")
    private static let page = repository.appendingPathComponent("deploy/kiosk-carousel.1")

    @Test func theCommittedPageIsWhatTheTemplateAndTheOptionTableGive() throws {
        let rendered = try ManualPage.render(template: String(contentsOf: Self.template, encoding: .utf8))
        let committed = try String(contentsOf: Self.page, encoding: .utf8)
        if rendered != committed {
            let a = rendered.split(separator: "\n", omittingEmptySubsequences: false)
            let b = committed.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            Issue.record("""
                deploy/kiosk-carousel.1 is stale: run 'swift run kiosk-man'. First difference at line \(first + 1):
                generated: \(first < a.count ? a[first] : "(end)")
                committed: \(first < b.count ? b[first] : "(end)")
                """)
        }
    }

    /// The options of the real executable's `--help`, in order, with their placeholders, against
    /// the committed page's OPTIONS section.
    @Test func thePageListsExactlyTheOptionsOfHelp() throws {
        let help = try runHelp()
        let fromHelp = help.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  --") else { return nil }
            // "  --size WxH            frame size…", or the head alone when it is 21 columns or more.
            let head = line.dropFirst(2)
            let end = head.range(of: "  ")?.lowerBound ?? head.endIndex
            return String(head[..<end])
        }
        let committed = try String(contentsOf: Self.page, encoding: .utf8)
        let fromPage = ManualPage.listedOptions(committed).map { option in
            option.value.map { "\(option.name) \($0)" } ?? option.name
        }
        #expect(fromHelp.count == CommandLineParser.options.count, "\(fromHelp)")
        #expect(fromPage == fromHelp)
    }

    @Test func groffReadsThePageWithoutAWarning() throws {
        let groff = "/usr/bin/groff"
        guard FileManager.default.isExecutableFile(atPath: groff) else {
            Issue.record("no groff: apt-get install -y groff-base")
            return
        }
        let out = try run(groff, ["-man", "-ww", "-z", "-K", "utf8", Self.page.path])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
    }

    // MARK: - The generator on a template of its own

    private static let options = [
        OptionSpec(name: "--alpha", value: "N", help: "the first one (default 1)") { _, _ throws(UsageError) in },
        OptionSpec(name: "--beta", value: nil, help: "a flag") { _, _ throws(UsageError) in },
    ]
    private static let small = """
        .\\"! a comment of the template only
        .TH T 1
        .SH OPTIONS
        @OPTIONS@
        .\\" @NOTE --beta
        More about beta.
        .\\" @END
        .SH CONFIGURATION FILE
        @REST_OF_LINE_OPTIONS@
        """

    @Test func everyOptionOfTheTableGetsAParagraphAndItsNote() throws {
        let page = try ManualPage.render(template: Self.small, options: Self.options, restOfLine: ["alpha"])
        #expect(page.hasPrefix(ManualPage.banner + "\n.TH T 1\n"))
        #expect(!page.contains("a comment of the template only"))
        #expect(page.contains(".TP\n.BI \\-\\-alpha \" N\"\nthe first one (default 1)\n"
                                  + ".TP\n.B \\-\\-beta\na flag\n.IP\nMore about beta.\n"))
        #expect(page.hasSuffix(".SH CONFIGURATION FILE\n\\fBalpha\\fP\n"))
        #expect(ManualPage.listedOptions(page).map(\.name) == ["--alpha", "--beta"])
        #expect(ManualPage.listedOptions(page).map(\.value) == ["N", nil])

        // An option added to the table is on the page with nothing else to do.
        let more = Self.options + [OptionSpec(name: "--gamma-ray", value: "HH:MM-HH:MM", help: "new") {
            _, _ throws(UsageError) in
        }]
        let grown = try ManualPage.render(template: Self.small, options: more, restOfLine: ["alpha", "gamma-ray"])
        #expect(ManualPage.listedOptions(grown).map(\.name) == ["--alpha", "--beta", "--gamma-ray"])
        #expect(ManualPage.listedOptions(grown).last?.value == "HH:MM-HH:MM")
        #expect(grown.contains("\\fBalpha\\fP and \\fBgamma\\-ray\\fP"))
    }

    @Test(arguments: [
        (".TH T 1\n.\\\" @NOTE --delta\nx\n.\\\" @END\n@OPTIONS@", 2,
         "a note for --delta, which the option table does not have"),
        (".TH T 1\n.\\\" @NOTE --beta\nx\n@OPTIONS@", 2, "the note for --beta has no @END"),
        (".TH T 1\n.\\\" @END\n@OPTIONS@", 2, "@END without @NOTE"),
        (".TH T 1\n.\\\" @NOTE --beta\n.\\\" @END\n@OPTIONS@", 3, "an empty note for --beta"),
        (".TH T 1\n@OPTIONS@\n@OPTIONS@", 3, "a second @OPTIONS@"),
        (".TH T 1\n.SH OPTIONS @OPTIONS@", 2, "a placeholder must stand alone on its line"),
        (".TH T 1\n.SH OPTIONS", 2, "no @OPTIONS@ line"),
    ])
    func aBadTemplateIsRefusedWithItsLine(template: String, line: Int, message: String) {
        #expect(throws: ManualPage.TemplateError(line: line, message: message)) {
            try ManualPage.render(template: template, options: Self.options, restOfLine: [])
        }
    }

    @Test func helpTextIsEscapedForRoff() {
        #expect(ManualPage.escape(#"a\b -x"#) == #"a\eb \-x"#)
        #expect(ManualPage.unescape(#"\-\-on\-tap"#) == "--on-tap")
        // A wrapped line that would start with "." or "'" would be a roff request.
        let lines = ManualPage.wrap("word .hidden 'quoted /dev/input/event3", width: 4)
        #expect(lines == ["word", "\\&.hidden", "\\&'quoted", "\\%/dev/input/event3"])
    }

    // MARK: - Helpers

    private func runHelp() throws -> String {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("kiosk-carousel").path),
              dir.path != "/" {
            dir.deleteLastPathComponent()
        }
        let out = try run(dir.appendingPathComponent("kiosk-carousel").path, ["--help"])
        #expect(out.status == 0, "\(out.stderr)")
        return out.stdout
    }

    private func run(_ program: String,
                     _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}
