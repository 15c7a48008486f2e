// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskContent
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
