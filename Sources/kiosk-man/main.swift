// SPDX-License-Identifier: Apache-2.0
// kiosk-man (not installed): writes the manual page kiosk-carousel(1) from its hand-written
// template and the option table (KioskApp's ManualPage; docs/building.md, "The manual page").
//
//   swift run kiosk-man            # from the repository's top folder: writes deploy/kiosk-carousel.1
//   swift run kiosk-man --check    # exits 1, writing nothing, when deploy/kiosk-carousel.1 is stale
//   kiosk-man [--check] TEMPLATE PAGE
import Glibc
import KioskApp
import KioskSystem

var arguments = Array(CommandLine.arguments.dropFirst())
let check = arguments.first == "--check"
if check { arguments.removeFirst() }
guard arguments.isEmpty || arguments.count == 2, arguments.allSatisfy({ !$0.hasPrefix("-") }) else {
    fputs("usage: kiosk-man [--check] [TEMPLATE PAGE]   (default deploy/kiosk-carousel.1.in deploy/kiosk-carousel.1)\n",
          stderr)
    exit(64)
}
let templatePath = arguments.first ?? "deploy/kiosk-carousel.1.in"
let pagePath = arguments.last ?? "deploy/kiosk-carousel.1"

func fail(_ message: String) -> Never {
    fputs("kiosk-man: \(message)\n", stderr)
    exit(1)
}

let template: String
do {
    template = String(decoding: try readRegularFile(templatePath, limit: 1 << 20), as: UTF8.self)
} catch {
    fail("\(error.description) (run it from the repository's top folder, or name TEMPLATE and PAGE)")
}
let page: String
do {
    page = try ManualPage.render(template: template)
} catch {
    fail("\(templatePath):\(error.description)")
}
let current = (try? readRegularFile(pagePath, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) }
if check {
    guard current == page else {
        fail("\(pagePath) is not what \(templatePath) and the option table give: run 'swift run kiosk-man'")
    }
    print("\(pagePath) is up to date")
    exit(0)
}
if current == page {
    print("\(pagePath) is up to date")
    exit(0)
}
// Written beside the page and renamed over it (AtomicFile), so a reader never sees half a page.
let slash = pagePath.lastIndex(of: "/")
let pageDirectory = slash.map { $0 == pagePath.startIndex ? "/" : String(pagePath[..<$0]) } ?? "."
let pageName = slash.map { String(pagePath[pagePath.index(after: $0)...]) } ?? pagePath
do throws(SystemError) {
    try AtomicFile.write(Array(page.utf8), directory: pageDirectory, name: pageName)
} catch {
    fail(error.description)
}
print("wrote \(pagePath)")
