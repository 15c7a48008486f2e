// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import KioskContent
import Testing

private func names(_ paths: [String]) -> [String] { paths.map { String($0.split(separator: "/").last!) } }

/// Waits for the next published list (the newest if several came).
private func nextList(_ watch: DirectoryWatch, timeout: Duration = .seconds(3)) -> [String]? {
    watch.changes.wait(timeout: timeout).last.map(names)
}

@Test func addRemoveAndRenameShowUp() throws {
    let dir = makeTempDirectory("watch")
    try writeFile(dir + "/b.jpg", jpegBytes(10))
    try writeFile(dir + "/notes.txt", [1])
    let watch = try DirectoryWatch(path: dir, debounce: .milliseconds(100))
    defer { watch.stop() }
    #expect(names(watch.initialFiles) == ["b.jpg"])
    try writeFile(dir + "/a.PNG", jpegBytes(10))
    #expect(nextList(watch) == ["a.PNG", "b.jpg"])
    rename(dir + "/b.jpg", dir + "/c.jpeg")
    #expect(nextList(watch) == ["a.PNG", "c.jpeg"])
    unlink(dir + "/a.PNG")
    #expect(nextList(watch) == ["c.jpeg"])
    // A file renamed in from elsewhere is complete at once; hidden files and other names are not images.
    let outside = makeTempDirectory("watch-src")
    try writeFile(outside + "/d.jpg", jpegBytes(10))
    rename(outside + "/d.jpg", dir + "/d.jpg")
    try writeFile(dir + "/.hidden.jpg", jpegBytes(10))
    mkdir(dir + "/folder.jpg", 0o755)
    #expect(nextList(watch) == ["c.jpeg", "d.jpg"])
    #expect(watch.changes.wait(timeout: .milliseconds(400)).isEmpty, "nothing more")
}

@Test func aBurstOfChangesIsOneUpdate() throws {
    let dir = makeTempDirectory("watch")
    let watch = try DirectoryWatch(path: dir, debounce: .milliseconds(150))
    defer { watch.stop() }
    for i in 0..<20 { try writeFile(dir + "/img\(i).jpg", jpegBytes(10)) }
    usleep(500_000)
    let lists = watch.changes.take()
    #expect(lists.count == 1)
    #expect(lists.first?.count == 20)
}

@Test func aFileCopiedInSlowlyIsListedOnlyWhenComplete() throws {
    let dir = makeTempDirectory("watch")
    try writeFile(dir + "/a.jpg", jpegBytes(10))
    let watch = try DirectoryWatch(path: dir, debounce: .milliseconds(100))
    defer { watch.stop() }
    // O_CLOEXEC: other tests spawn processes meanwhile; a child that inherited this descriptor
    // would hold the file open for writing, and IN_CLOSE_WRITE comes only with the last close.
    let fd = open(dir + "/slow.jpg", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    #expect(fd >= 0)
    let body = jpegBytes(100_000)
    for chunk in 0..<5 {
        _ = body[(chunk * 10_000)..<((chunk + 1) * 10_000)].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        usleep(100_000)
    }
    // Half written, for longer than the debounce: not listed.
    #expect(watch.changes.wait(timeout: .milliseconds(300)).isEmpty)
    _ = body[50_000...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    #expect(nextList(watch) == ["a.jpg", "slow.jpg"])
    // Rewritten in place: held back while open for writing, back when closed.
    let again = open(dir + "/a.jpg", O_WRONLY | O_TRUNC | O_CLOEXEC)
    _ = body.withUnsafeBytes { write(again, $0.baseAddress, 100) }
    #expect(nextList(watch) == ["slow.jpg"])
    close(again)
    #expect(nextList(watch) == ["a.jpg", "slow.jpg"])
}

/// The directory's only image rewritten in place stays listed while the write lasts (a show
/// of one image keeps its picture on screen), where any other image is held back.
@Test func theOnlyImageRewrittenInPlaceStaysListed() throws {
    let dir = makeTempDirectory("watch-one")
    try writeFile(dir + "/menu.jpg", jpegBytes(10))
    let watch = try DirectoryWatch(path: dir, debounce: .milliseconds(100))
    defer { watch.stop() }
    let fd = open(dir + "/menu.jpg", O_WRONLY | O_TRUNC | O_CLOEXEC)
    #expect(fd >= 0)
    let body = jpegBytes(100_000)
    _ = body.withUnsafeBytes { write(fd, $0.baseAddress, 100) }
    // Open for writing, for longer than the debounce: no list without it is published.
    #expect(watch.changes.wait(timeout: .milliseconds(400)).isEmpty)
    _ = body.withUnsafeBytes { write(fd, $0.baseAddress! + 100, $0.count - 100) }
    close(fd)
    #expect(watch.changes.wait(timeout: .milliseconds(400)).isEmpty, "the same list: nothing to publish")
}

@Test func aMissingDirectoryIsATypedError() {
    #expect(throws: ContentError.self) { try DirectoryWatch(path: "/nonexistent/kiosk") }
}

/// Every image format's names are listed, in any case (docs/images.md): the magic bytes
/// decide the format later, so the contents here do not matter.
@Test func theNamesOfEveryFormatAreListedInAnyCase() throws {
    let dir = makeTempDirectory("names")
    let images = ["a.webp", "b.HEIC", "c.heif", "d.Avif", "e.GIF", "f.jpe", "g.Png"]
    for name in images + ["h.bmp", "i.tiff", "j.jxl", ".k.webp", "webp"] { try writeFile(dir + "/" + name, [1]) }
    let listed = try DirectoryWatch.imagePaths(in: dir)
    #expect(names(listed.paths) == images.sorted())
    #expect(listed.notUTF8.isEmpty)
}
