// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
@testable import KioskContent
import KioskCore
import Testing

/// A local playlist's items become the playlist with their fit, duration and sha256 on each
/// item, and its show-wide settings; files and a missing SOURCE around it keep their places.
@Test func aLocalPlaylistGivesItemsWithTheirChecksumsAndItsSettings() throws {
    let dir = makeTempDirectory("content-service")
    let sha = String(repeating: "ab", count: 32)
    try writeFile(dir + "/show.json", Array("""
        {"interval": 7, "fade": 500, "fit": "fill",
         "items": [{"src": "a.jpg", "duration": 3, "sha256": "\(sha.uppercased())"},
                   {"src": "b.png", "fit": "stretch"}]}
        """.utf8))
    try writeFile(dir + "/c.jpg", jpegBytes(100))
    let service = try ContentService(configuration: .init(
        sources: [dir + "/c.jpg", dir + "/missing.jpg", dir + "/show.json"],
        cacheDirectory: dir + "/cache", stateDirectory: dir + "/state"))
    defer { service.stop() }
    #expect(service.images == nil, "no remote source: no disk cache, no fetcher")
    #expect(service.items == [
        PlaylistItem(source: dir + "/c.jpg"),
        PlaylistItem(source: dir + "/a.jpg", duration: .seconds(3), fit: .fill, sha256: sha),
        PlaylistItem(source: dir + "/b.png", fit: .stretch),
    ])
    #expect(service.showSettings == .init(interval: .seconds(7), fade: .milliseconds(500), fit: .fill))
    #expect(!service.awaitingFirstAnswer)
}

/// A remote manifest never had (its server refuses, nothing stored) leaves the show waiting
/// for it, so the empty screen says so; once one was fetched it is stored, and a start while
/// the server is down shows that one: no longer waiting.
@Test func aManifestNeverHadLeavesTheShowWaitingAndAStoredOneEndsIt() throws {
    let dir = makeTempDirectory("content-waiting")
    let closed = try #require(URL(string: "http://127.0.0.1:\(freePort())/show.json"))
    let offline = try ContentService(configuration: .init(manifest: closed, cacheDirectory: dir + "/cache",
                                                          stateDirectory: dir + "/state"))
    offline.start()
    offline.waitForFirstAnswer(timeout: .seconds(20))
    #expect(!offline.awaitingFirstAnswer, "the refused poll is an answer")
    #expect(offline.waitingForManifest)
    #expect(offline.items.isEmpty)
    offline.stop()

    let nginx = try Nginx()
    try nginx.put("/show.json", Array(#"{"items": [{"src": "a.jpg"}]}"#.utf8))
    try nginx.put("/a.jpg", jpegBytes(200))
    let url = try #require(URL(string: nginx.base + "/show.json"))
    let online = try ContentService(configuration: .init(manifest: url, cacheDirectory: dir + "/cache",
                                                         stateDirectory: dir + "/state"))
    #expect(online.waitingForManifest, "nothing stored yet")
    online.start()
    online.waitForFirstAnswer(timeout: .seconds(20))
    #expect(!online.waitingForManifest)
    #expect(online.items.count == 1)
    online.stop()
    nginx.stop()

    let restarted = try ContentService(configuration: .init(manifest: url, cacheDirectory: dir + "/cache",
                                                            stateDirectory: dir + "/state"))
    defer { restarted.stop() }
    #expect(!restarted.waitingForManifest, "the stored manifest is the show")
    #expect(restarted.items.count == 1)
}

/// A local `.json` playlist that names an http URL gets downloads set up (a playlist has the
/// manifest's format), with no other remote source: the image comes from nginx and is shown.
@Test func aLocalPlaylistNamingAURLDownloadsIt() throws {
    let nginx = try Nginx()
    defer { nginx.stop() }
    try publish(nginx, "img/a.png", solidPNG(Swatch.red))
    let dir = makeTempDirectory("content-playlist-url")
    try writeFile(dir + "/show.json", Array(#"{"items": [{"src": "\#(nginx.base)/img/a.png"}]}"#.utf8))
    let show = try KioskShow(["--size", "320x200", "--cache-dir", dir + "/cache", "--state-dir", dir + "/state",
                              "--interval", "1", "--fade", "100", dir + "/show.json"])
    #expect(show.waitForExit(timeout: 30) == 0, "\(show.transcript)")
    #expect(show.shown.first?.src == nginx.base + "/img/a.png", "\(show.transcript)")
    #expect(show.logLines(containing: "image skipped").isEmpty, "\(show.transcript)")
}

/// A SOURCE folder that does not exist is listed as missing (with its errno) and watched: a
/// `mkdir` of it and of the folder above it hands the playlist again (same, empty: the empty
/// screen's words change), and a photo copied in then becomes the playlist. A folder deleted
/// under its watch is missing again. An image file's name is told from a folder's.
@Test func aMissingFolderIsWatchedUntilItAppearsWithAPhoto() throws {
    let dir = makeTempDirectory("content-missing")
    let folder = dir + "/photos/today"
    let service = try ContentService(configuration: .init(sources: [folder, dir + "/gone.jpg"],
                                                          cacheDirectory: dir + "/cache",
                                                          stateDirectory: dir + "/state"))
    defer { service.stop() }
    #expect(service.items.isEmpty)
    #expect(service.missingSources == [.init(path: folder, errno: ENOENT, isImageFile: false),
                                       .init(path: dir + "/gone.jpg", errno: ENOENT, isImageFile: true)])
    /// Polls takeUpdate until it hands a playlist (the frame loop's turn), at most `seconds`.
    func update(within seconds: Double) -> [PlaylistItem]? {
        let end = monotonicSeconds() + seconds
        while monotonicSeconds() < end {
            if let items = service.takeUpdate() { return items }
            usleep(20_000)
        }
        return nil
    }
    #expect(mkdir(dir + "/photos", 0o755) == 0 && mkdir(folder, 0o755) == 0)
    let appeared = update(within: 10)
    #expect(appeared == [], "the empty folder taken up: the same empty playlist, handed again")
    #expect(service.missingSources.map(\.path) == [dir + "/gone.jpg"])
    try writeFile(folder + "/a.jpg", jpegBytes(100))
    #expect(update(within: 10) == [PlaylistItem(source: folder + "/a.jpg")])

    // The folder deleted: its watch ends, and it is missing (and watched) again.
    #expect(unlink(folder + "/a.jpg") == 0 && rmdir(folder) == 0)
    #expect(update(within: 10) == [])
    #expect(service.missingSources.map(\.path) == [folder, dir + "/gone.jpg"])
    #expect(mkdir(folder, 0o755) == 0)
    try writeFile(folder + "/b.jpg", jpegBytes(100))
    var items = update(within: 10)
    if items == [] { items = update(within: 10) }  // the folder taken up before its photo was listed
    #expect(items == [PlaylistItem(source: folder + "/b.jpg")])
}

/// A SOURCE folder replaced by a file for a while (taken up as a file then) and made a folder
/// again: SIGHUP looks at it again and lists the folder.
@Test func aFolderThatWasBrieflyAFileIsAFolderAgainAfterAReload() throws {
    let dir = makeTempDirectory("content-file-folder")
    let path = dir + "/later"
    try writeFile(path, Array("x\n".utf8))
    let service = try ContentService(configuration: .init(sources: [path], cacheDirectory: dir + "/cache",
                                                          stateDirectory: dir + "/state"))
    defer { service.stop() }
    #expect(service.items == [PlaylistItem(source: path)], "a file SOURCE")
    #expect(unlink(path) == 0 && mkdir(path, 0o755) == 0)
    try writeFile(path + "/c.jpg", jpegBytes(100))
    service.reload()
    var items: [PlaylistItem]? = nil
    let end = monotonicSeconds() + 10
    while items == nil, monotonicSeconds() < end {
        items = service.takeUpdate()
        usleep(20_000)
    }
    #expect(items == [PlaylistItem(source: path + "/c.jpg")])
}

/// A burst of SIGHUPs reads a folder once more, not once per signal: each read holds an inotify
/// instance (128 per user) until the frame loop takes it, so a thousand of them ran out and the
/// folder was left unwatched; after the burst a new photo is still taken up.
@Test func aBurstOfReloadsLeavesTheFolderWatched() throws {
    let dir = makeTempDirectory("content-reload-burst")
    let folder = dir + "/photos"
    #expect(mkdir(folder, 0o755) == 0)
    try writeFile(folder + "/a.jpg", jpegBytes(100))
    let service = try ContentService(configuration: .init(sources: [folder], cacheDirectory: dir + "/cache",
                                                          stateDirectory: dir + "/state"))
    defer { service.stop() }
    for _ in 0..<1000 { service.reload() }
    service.waitForQueuedReloads()  // everything read, nothing taken yet: the worst case
    _ = service.takeUpdate()
    try writeFile(folder + "/b.jpg", jpegBytes(100))
    var items: [PlaylistItem]? = nil
    let end = monotonicSeconds() + 10
    while items?.count != 2, monotonicSeconds() < end {
        items = service.takeUpdate() ?? items
        usleep(20_000)
    }
    #expect(items == [PlaylistItem(source: folder + "/a.jpg"), PlaylistItem(source: folder + "/b.jpg")])
}

/// The temporary cache that stands in for an unusable one is private: made 0700, an own
/// folder narrowed to 0700, and never a symbolic link or another user's folder of that name.
@Test func theTemporaryCacheFolderIsNeverAnotherUsersOrALink() throws {
    let dir = makeTempDirectory("content-private-tmp")
    func mode(_ path: String) -> mode_t { var st = stat(); _ = lstat(path, &st); return st.st_mode & 0o777 }
    let made = ContentService.privateTemporaryDirectory("cache-a", in: dir)
    #expect(made == dir + "/cache-a" && mode(made) == 0o700)
    #expect(mkdir(dir + "/cache-b", 0o777) == 0 && chmod(dir + "/cache-b", 0o777) == 0)
    #expect(ContentService.privateTemporaryDirectory("cache-b", in: dir) == dir + "/cache-b"
            && mode(dir + "/cache-b") == 0o700)
    #expect(symlink(dir + "/cache-a", dir + "/cache-c") == 0)
    let besideLink = ContentService.privateTemporaryDirectory("cache-c", in: dir)
    #expect(besideLink.hasPrefix(dir + "/cache-c-") && mode(besideLink) == 0o700, "\(besideLink)")
    if getuid() == 0 {
        #expect(mkdir(dir + "/cache-d", 0o777) == 0 && chown(dir + "/cache-d", 65534, 65534) == 0)
        let besideOther = ContentService.privateTemporaryDirectory("cache-d", in: dir)
        #expect(besideOther.hasPrefix(dir + "/cache-d-") && mode(besideOther) == 0o700, "\(besideOther)")
    }
}

/// The folder the missing-source watch looks at: the nearest existing one above the path.
@Test func theNearestExistingFolderAboveAMissingPath() throws {
    let dir = makeTempDirectory("content-nearest")
    #expect(MissingSourceWatch.nearestExistingFolder(above: dir + "/a/b/c") == dir)
    #expect(mkdir(dir + "/a", 0o755) == 0)
    #expect(MissingSourceWatch.nearestExistingFolder(above: dir + "/a/b/c") == dir + "/a")
    #expect(MissingSourceWatch.nearestExistingFolder(above: "/no-such-folder-kc/x") == "/")
    #expect(MissingSourceWatch.nearestExistingFolder(above: "no-such-folder-kc/x") == ".")
}

/// The disk cache's line at start counts its files right for one and for two (the show's own
/// image is not among them, so the run leaves them alone).
@Test func theDiskCacheLineSaysOneFileAndTwoFiles() throws {
    let dir = makeTempDirectory("content-cache-count")
    let cache = try DiskCache(.init(directory: dir + "/cache"))
    _ = try cache.store(url: "http://127.0.0.1:9/a.jpg", bytes: jpegBytes(100))
    func cacheLine() throws -> String {
        let show = try KioskShow(["--size", "64x40", "--run-for", "1", "--cache-dir", dir + "/cache",
                                  "--state-dir", dir + "/state", "http://127.0.0.1:9/c.jpg"])  // not cached: refused
        _ = show.waitForExit(timeout: 60)
        return show.logLines(containing: "disk cache opened").first ?? show.transcript
    }
    let one = try cacheLine()
    #expect(one.contains(#"detail="1 file, 0 MB""#), "\(one)")
    _ = try cache.store(url: "http://127.0.0.1:9/b.jpg", bytes: jpegBytes(100))
    let two = try cacheLine()
    #expect(two.contains(#"detail="2 files, 0 MB""#), "\(two)")
}

/// Polls `service.takeUpdate()` (the frame loop's turn) until it hands a playlist that `done`
/// accepts, at most `seconds`; the last playlist handed, or nil.
private func playlist(of service: ContentService, within seconds: Double,
                      until done: ([PlaylistItem]) -> Bool) -> [PlaylistItem]? {
    var items: [PlaylistItem]?
    let end = monotonicSeconds() + seconds
    while monotonicSeconds() < end {
        if let new = service.takeUpdate() { items = new; if done(new) { break } }
        usleep(20_000)
    }
    return items
}

/// A folder SOURCE deleted and replaced by an image file of the same path before the show
/// looks: its watch ends and the path is read again as at the start, a file SOURCE now,
/// without SIGHUP.
@Test func aFolderReplacedByAFileIsShownAsTheFileWithoutAReload() throws {
    let dir = makeTempDirectory("content-folder-to-file")
    let path = dir + "/show.jpg"
    #expect(mkdir(path, 0o755) == 0)
    try writeFile(path + "/a.jpg", jpegBytes(100))
    let service = try ContentService(configuration: .init(sources: [path], cacheDirectory: dir + "/cache",
                                                          stateDirectory: dir + "/state"))
    defer { service.stop() }
    #expect(service.items == [PlaylistItem(source: path + "/a.jpg")])
    #expect(unlink(path + "/a.jpg") == 0 && rmdir(path) == 0)
    try writeFile(path, jpegBytes(100))
    let items = playlist(of: service, within: 10) { $0 == [PlaylistItem(source: path)] }
    #expect(items == [PlaylistItem(source: path)])
    #expect(service.missingSources.isEmpty)
}

/// A symbolic link SOURCE retargeted from a folder to an image file (renamed over: no event
/// reaches the folder's watch) is noticed by the watch's look at the path and read again.
@Test func aLinkRetargetedFromAFolderToAFileIsShownAsTheFile() throws {
    let dir = makeTempDirectory("content-link-retarget")
    #expect(mkdir(dir + "/photos", 0o755) == 0)
    try writeFile(dir + "/photos/a.jpg", jpegBytes(100))
    try writeFile(dir + "/one.jpg", jpegBytes(100))
    let link = dir + "/current"
    #expect(symlink(dir + "/photos", link) == 0)
    let service = try ContentService(configuration: .init(sources: [link], cacheDirectory: dir + "/cache",
                                                          stateDirectory: dir + "/state"))
    defer { service.stop() }
    #expect(service.items == [PlaylistItem(source: link + "/a.jpg")])
    #expect(symlink(dir + "/one.jpg", dir + "/next") == 0 && rename(dir + "/next", link) == 0)
    let items = playlist(of: service, within: 10) { $0 == [PlaylistItem(source: link)] }
    #expect(items == [PlaylistItem(source: link)])
}

/// A file SOURCE whose read failed because it is a folder now (the frame loop's `EISDIR`) is
/// read again off the loop: the folder's images join the show and it is watched (a photo
/// added later shows up too), without SIGHUP. Another path's failure changes nothing.
@Test func aFileSourceFoundToBeAFolderIsReadAgainAndWatched() throws {
    let dir = makeTempDirectory("content-file-to-folder")
    let path = dir + "/later.jpg"
    try writeFile(path, jpegBytes(100))
    let service = try ContentService(configuration: .init(sources: [path], cacheDirectory: dir + "/cache",
                                                          stateDirectory: dir + "/state"))
    defer { service.stop() }
    #expect(service.items == [PlaylistItem(source: path)])
    #expect(unlink(path) == 0 && mkdir(path, 0o755) == 0)
    try writeFile(path + "/c.jpg", jpegBytes(100))
    service.sourceIsFolderNow(dir + "/other.jpg")
    service.waitForQueuedReloads()
    #expect(service.takeUpdate() == nil, "another path: nothing read again")
    service.sourceIsFolderNow(path)
    var items = playlist(of: service, within: 10) { $0 == [PlaylistItem(source: path + "/c.jpg")] }
    #expect(items == [PlaylistItem(source: path + "/c.jpg")])
    try writeFile(path + "/d.jpg", jpegBytes(100))
    items = playlist(of: service, within: 10) { $0.count == 2 }
    #expect(items == [PlaylistItem(source: path + "/c.jpg"), PlaylistItem(source: path + "/d.jpg")])
}

/// A file SOURCE given as a symbolic link whose target is removed (the link dangles), with real
/// links and files: looked at again when the frame loop finds it gone, it keeps its item (the
/// show keeps the pictures it has) and is named as missing; the target put back is taken up
/// within the watch's 2 s look, not at the 60 s retry. A path that is still there changes nothing.
@Test func aDanglingLinkSourceKeepsItsItemAndIsTakenUpWhenItsTargetComesBack() throws {
    let dir = makeTempDirectory("content-dangling-link")
    #expect(mkdir(dir + "/t", 0o755) == 0)
    try writeFile(dir + "/t/menu.jpg", jpegBytes(100))
    let link = dir + "/current.jpg"
    #expect(symlink(dir + "/t/menu.jpg", link) == 0)
    let service = try ContentService(configuration: .init(sources: [link], cacheDirectory: dir + "/cache",
                                                          stateDirectory: dir + "/state"))
    defer { service.stop() }
    #expect(service.items == [PlaylistItem(source: link)])
    service.fileMayBeGone(link)   // there: nothing changes
    service.waitForQueuedReloads()
    #expect(service.takeUpdate() == nil)

    #expect(unlink(dir + "/t/menu.jpg") == 0)
    service.fileMayBeGone(dir + "/other.jpg")
    service.fileMayBeGone(link)
    let gone = playlist(of: service, within: 10) { _ in true }
    #expect(gone == [PlaylistItem(source: link)], "its item stays")
    #expect(service.missingSources == [.init(path: link, errno: ENOENT, isImageFile: true)])
    #expect(service.takeUpdate() == nil)
    for _ in 0..<5 { service.fileMayBeGone(link) }   // said once: the file check posts every second
    service.waitForQueuedReloads()
    #expect(service.takeUpdate() == nil)

    try writeFile(dir + "/t/menu.new", jpegBytes(120, seed: 1))
    #expect(rename(dir + "/t/menu.new", dir + "/t/menu.jpg") == 0)
    let back = monotonicSeconds()
    let again = playlist(of: service, within: 10) { _ in service.missingSources.isEmpty }
    #expect(again == [PlaylistItem(source: link)], "handed again: the frame loop tries it at once")
    #expect(service.missingSources.isEmpty)
    #expect(monotonicSeconds() - back < 3.5, "within the watch's 2 s look")
}
