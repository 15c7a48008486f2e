// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

/// The README and docs/: every relative link leads to a file of the repository (and an anchor to
/// one of its headings), and the README's test command is the chain `.ci/run` runs.
@Suite struct DocumentationTests {
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// README.md and every docs/*.md.
    private static func markdownFiles() throws -> [URL] {
        let docs = repository.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
            .sorted()
        return [repository.appendingPathComponent("README.md")] + names.map { docs.appendingPathComponent($0) }
    }

    @Test func everyRelativeLinkLeadsToAFileAndEveryAnchorToAHeading() throws {
        let files = try Self.markdownFiles()
        #expect(files.count > 10, "docs/ holds the documentation")
        var checked = 0
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for target in Self.links(in: text) where !target.contains("://") && !target.hasPrefix("mailto:") {
                checked += 1
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                    .map(String.init)
                let path = parts[0].isEmpty ? file : file.deletingLastPathComponent().appendingPathComponent(parts[0])
                let name = "\(file.lastPathComponent): (\(target))"
                guard FileManager.default.fileExists(atPath: path.standardizedFileURL.path) else {
                    Issue.record("\(name): no such file \(path.standardizedFileURL.path)")
                    continue
                }
                if parts.count == 2, path.pathExtension == "md" {
                    let anchors = Self.anchors(in: try String(contentsOf: path, encoding: .utf8))
                    #expect(anchors.contains(parts[1]),
                            "\(name): no heading with the anchor #\(parts[1]) in \(path.lastPathComponent)")
                }
            }
        }
        #expect(checked > 50)
    }

    @Test func theReadmesTestCommandIsTheChainCIRuns() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let ci = try String(contentsOf: Self.repository.appendingPathComponent(".ci/run"), encoding: .utf8)
        let chain = { (text: String) in
            text.split(separator: "\n").filter { $0.hasPrefix("deploy/apt-deps.sh --tests && ") }
        }
        #expect(chain(ci).count == 1, ".ci/run runs one chain")
        #expect(chain(readme) == chain(ci), "README.md's test command must be .ci/run's line, as it is")
    }

    @Test func theLinkAndAnchorReadersWork() {
        let text = "# Top\n\nSee [a](docs/a.md#the-b), ![p](x.png) and `[not](code)`.\n\n## The --fit blur, too\n"
            + "```\n[no](inside-code)\n# not a heading\n```\n"
        #expect(Self.links(in: text) == ["docs/a.md#the-b", "x.png"])
        #expect(Self.anchors(in: text) == ["top", "the---fit-blur-too"])
    }

    /// The targets of `[text](target)` and `![alt](target)` outside code blocks and code spans.
    static func links(in text: String) -> [String] {
        var targets: [String] = []
        for line in prose(text) {
            var rest = Substring(line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " "))
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                targets.append(String(after[..<close]))
                rest = after[after.index(after: close)...]
            }
        }
        return targets
    }

    /// The anchors of the headings, as GitHub makes them: lower case, spaces as hyphens, other
    /// punctuation but `-` and `_` left out.
    static func anchors(in text: String) -> Set<String> {
        var anchors = Set<String>()
        for line in prose(text) where line.hasPrefix("#") {
            let title = line.drop(while: { $0 == "#" }).drop(while: { $0 == " " })
            var anchor = ""
            for c in title.lowercased() {
                if c.isLetter || c.isNumber || c == "-" || c == "_" {
                    anchor.append(c)
                } else if c == " " { anchor.append("-") }
            }
            anchors.insert(anchor)
        }
        return anchors
    }

    /// The lines outside fenced code blocks.
    private static func prose(_ text: String) -> [String] {
        var inCode = false
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") { inCode.toggle(); continue }
            if !inCode { lines.append(String(line)) }
        }
        return lines
    }
}
