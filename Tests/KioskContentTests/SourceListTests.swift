// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
@testable import KioskContent

private func makeTempDirectory() -> String {
    var template = Array("/tmp/kiosk-sources-XXXXXX".utf8CString)
    return String(cString: mkdtemp(&template)!)
}

private func touch(_ path: String) {
    let fd = open(path, O_CREAT | O_WRONLY, 0o644)
    close(fd)
}

@Test func aDirectoryGivesItsImagesInNameOrder() {
    let dir = makeTempDirectory()
    for name in ["b.png", "a.JPG", "c.jpeg", "img10.jpg", "img2.jpg", "notes.txt", ".hidden.jpg", "noext"] {
        touch(dir + "/" + name)
    }
    mkdir(dir + "/sub.jpg", 0o755)  // a directory named like an image is not an image
    let items = SourceList.items(from: [dir])
    let names = items.map { String($0.source.split(separator: "/").last!) }
    #expect(names == ["a.JPG", "b.png", "c.jpeg", "img10.jpg", "img2.jpg"])
    #expect(items.allSatisfy { $0.source.hasPrefix(dir + "/") })
}

@Test func filesAreTakenAsGivenAndMissingSourcesAreLeftOut() {
    let dir = makeTempDirectory()
    touch(dir + "/photo.dat")
    let items = SourceList.items(from: [dir + "/photo.dat", dir + "/missing.jpg", dir])
    #expect(items.map(\.source) == [dir + "/photo.dat"])
}
