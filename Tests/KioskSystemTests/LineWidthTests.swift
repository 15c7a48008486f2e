// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskSystem
import Testing

/// The house width as a ratchet: the Swift lines wider than `.swift-format`'s `lineLength`
/// (120 columns) in Package.swift, Sources and Tests, counted as `Tests/style/line-width.sh`
/// counts them, may become fewer, never more (docs/building.md, "Line width").
@Suite struct LineWidthTests {
    /// The lines still wider than the house width. Lower it when you wrap some; never raise it.
    static let maximumWideLines = 239

    /// The checkout: this file is `Tests/KioskSystemTests/LineWidthTests.swift` in it.
    static let repository = String(#filePath.split(separator: "/", omittingEmptySubsequences: false)
        .dropLast(3).joined(separator: "/"))

    /// One line over the width: `path` relative to the checkout, `line` from 1, `columns` in
    /// Unicode scalars (a column is one Unicode character, as swift-format and the script count).
    struct WideLine: Equatable, CustomStringConvertible {
        var path: String
        var line: Int
        var columns: Int
        var description: String { "\(path):\(line): \(columns) columns" }
    }

    @Test func noMoreLinesAreWiderThanTheHouseWidthThanBefore() throws {
        let width = try Self.houseWidth(Self.repository)
        let wide = try Self.wideLines(in: Self.repository, width: width)
        let firstTen = wide.prefix(10).map { "  \($0)" }.joined(separator: "\n")
        let message = "\(wide.count) Swift lines are wider than \(width) columns, more than maximumWideLines "
            + "(\(Self.maximumWideLines)): the count only goes down. Wrap them to at most \(width) columns "
            + "(Tests/style/line-width.sh lists them all); the first ten:\n\(firstTen)"
        #expect(wide.count <= Self.maximumWideLines, Comment(rawValue: message))
        if wide.count < Self.maximumWideLines {
            print("LineWidthTests: \(wide.count) lines over \(width) columns are left: "
                  + "lower maximumWideLines (\(Self.maximumWideLines)) to \(wide.count)")
        }
    }

    /// The count is the script's: the same total over the checkout.
    @Test func theCountIsTheScripts() throws {
        let script = try Self.scriptTotal(Self.repository + "/Tests/style/line-width.sh")
        #expect(try Self.wideLines(in: Self.repository, width: Self.houseWidth(Self.repository)).count == script)
    }

    /// A tree made for the edge cases, counted by both: 120 columns is within, 121 over; `é`, `東`
    /// and an emoji are one column each; CRLF, CR, U+2028 and form feed end lines (Python's
    /// `str.splitlines`); only `.swift` files under Sources and Tests, and Package.swift, count.
    @Test func edgeCasesAreCountedAsTheScriptCountsThem() throws {
        let root = try Self.scratchTree([
            ".swift-format": #"{"lineLength": 120}"#,
            "Package.swift": String(repeating: "p", count: 121) + "\n",
            "Sources/A/a.swift": String(repeating: "a", count: 120) + "\n" + String(repeating: "\u{E9}", count: 121)
                + "\r\n" + String(repeating: "b", count: 10) + "\r" + String(repeating: "\u{6771}", count: 125) + "\n",
            "Sources/A/b.swift": "short\u{2028}" + String(repeating: "\u{1F600}", count: 121) + "\u{0C}x\n"
                + String(repeating: "c", count: 130),
            "Sources/A/notes.txt": String(repeating: "n", count: 200) + "\n",
            "Tests/.hidden/c.swift": String(repeating: "h", count: 122) + "\n",
            "Other/d.swift": String(repeating: "o", count: 200) + "\n",
        ])
        let swift = try Self.wideLines(in: root, width: Self.houseWidth(root))
        #expect(swift == [
            WideLine(path: "Package.swift", line: 1, columns: 121),
            WideLine(path: "Sources/A/a.swift", line: 2, columns: 121),
            WideLine(path: "Sources/A/a.swift", line: 4, columns: 125),
            WideLine(path: "Sources/A/b.swift", line: 2, columns: 121),
            WideLine(path: "Sources/A/b.swift", line: 4, columns: 130),
            WideLine(path: "Tests/.hidden/c.swift", line: 1, columns: 122),
        ])
        #expect(try Self.scriptTotal(root + "/Tests/style/line-width.sh") == swift.count)
        #expect(try Self.scriptLines(root + "/Tests/style/line-width.sh") == swift.map(\.description))
    }

    // MARK: the count

    /// `.swift-format`'s `lineLength`, as the script reads it.
    static func houseWidth(_ root: String) throws -> Int {
        let format = try JSONValue.parse(readRegularFile(root + "/.swift-format", limit: 1 << 20))
        guard case .object(let fields) = format, case .int(let width)? = fields["lineLength"] else {
            throw SystemError(operation: "no lineLength in .swift-format", path: root + "/.swift-format", errno: EINVAL)
        }
        return Int(width)
    }

    /// Every line wider than `width` in `root`'s Package.swift and the `.swift` files under
    /// Sources and Tests, in the script's order: Package.swift, then the others sorted by their
    /// path's components (Python's `sorted` of `pathlib` paths).
    static func wideLines(in root: String, width: Int) throws -> [WideLine] {
        var files: [[String]] = []
        for top in ["Sources", "Tests"] { try collectSwiftFiles(root, [top], into: &files) }
        // Component by component, each by its code points, as Python compares them.
        func precedes(_ a: String, _ b: String) -> Bool {
            a.unicodeScalars.map(\.value).lexicographicallyPrecedes(b.unicodeScalars.map(\.value))
        }
        files.sort { $0.lexicographicallyPrecedes($1, by: precedes) }
        var wide: [WideLine] = []
        for path in ["Package.swift"] + files.map({ $0.joined(separator: "/") }) {
            let text = String(decoding: try readRegularFile(root + "/" + path, limit: 64 << 20), as: UTF8.self)
            for (index, columns) in lineWidths(text).enumerated() where columns > width {
                wide.append(WideLine(path: path, line: index + 1, columns: columns))
            }
        }
        return wide
    }

    /// The `.swift` files under `root/relative`, as `pathlib`'s `rglob("*.swift")` finds them:
    /// hidden names too, symbolic links to folders not followed.
    private static func collectSwiftFiles(_ root: String, _ relative: [String], into files: inout [[String]]) throws {
        let directory = ([root] + relative).joined(separator: "/")
        for entry in try listDirectory(directory) {
            guard let name = entry.name else { continue }
            let info = try fileStatus(directory + "/" + name, followLinks: false)
            if info.st_mode & S_IFMT == S_IFDIR {
                try collectSwiftFiles(root, relative + [name], into: &files)
            } else if name.hasSuffix(".swift") {
                files.append(relative + [name])
            }
        }
    }

    /// The width of each line in Unicode scalars, lines ended as Python's `str.splitlines` ends
    /// them (LF, CR, CRLF, VT, FF, FS, GS, RS, NEL, U+2028, U+2029).
    static func lineWidths(_ text: String) -> [Int] {
        var widths: [Int] = []
        var width = 0, afterCR = false, open = false
        for scalar in text.unicodeScalars {
            if afterCR {
                afterCR = false
                if scalar == "\n" { continue }
            }
            switch scalar.value {
            case 0x0A, 0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029:
                widths.append(width); width = 0; open = false
            case 0x0D:
                widths.append(width); width = 0; open = false; afterCR = true
            default:
                width += 1; open = true
            }
        }
        if open { widths.append(width) }
        return widths
    }

    // MARK: the script, for comparison

    /// The script's output lines (each wide line, then the total).
    private static func scriptOutput(_ script: String) throws -> [String] {
        let out = scratchDirectory() + "/out"
        let child = try ChildProcess(arguments: ["/bin/sh", "-c", "/bin/bash \"$SCRIPT\" > \"$OUT\""],
                                     environment: ["SCRIPT": script, "OUT": out])
        var status: Int32?
        for _ in 0..<3000 where status == nil {
            status = child.poll()
            if status == nil { usleep(10_000) }
        }
        guard status == 0 else {
            throw SystemError(operation: "\(script) exited with \(status.map(String.init) ?? "no status in 30 s")",
                              path: script, errno: EIO)
        }
        let text = String(decoding: try readRegularFile(out, limit: 16 << 20), as: UTF8.self)
        return text.split(separator: "\n").map(String.init)
    }

    private static func scriptTotal(_ script: String) throws -> Int {
        let last = try scriptOutput(script).last ?? ""
        guard last.hasSuffix(" columns"), let total = Int(last.prefix { $0 != " " }) else {
            throw SystemError(operation: "no total in the script's last line '\(last)'", path: script, errno: EIO)
        }
        return total
    }

    private static func scriptLines(_ script: String) throws -> [String] {
        Array(try scriptOutput(script).dropLast())
    }

    private static func scratchDirectory() -> String {
        var template = Array("/tmp/kc-width-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    /// A scratch checkout holding `files` (relative path: text) and a copy of the script.
    private static func scratchTree(_ files: [String: String]) throws -> String {
        let root = scratchDirectory()
        let script = try readRegularFile(repository + "/Tests/style/line-width.sh", limit: 1 << 20)
        for (path, bytes) in files.map({ ($0.key, Array($0.value.utf8)) }) + [("Tests/style/line-width.sh", script)] {
            let parts = path.split(separator: "/").map(String.init)
            var directory = root
            for part in parts.dropLast() {
                directory += "/" + part
                if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                    throw SystemError(operation: "mkdir", path: directory, errno: errno)
                }
            }
            try AtomicFile.write(bytes, directory: directory, name: parts[parts.count - 1])
        }
        return root
    }
}
