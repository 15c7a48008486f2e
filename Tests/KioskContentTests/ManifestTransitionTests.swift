// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskContent
import KioskCore
import Testing

@Test func aManifestGivesTransitionsShowWideAndPerItem() throws {
    let origin = ManifestOrigin.remote(URL(string: "http://kiosk.example/show.json")!)
    let m = try Manifest.parse(Array("""
        {"transition": "slide", "items": [{"src": "a.jpg", "transition": "cut"}, {"src": "b.jpg"}]}
        """.utf8), origin: origin)
    #expect(m.transition == .slide)
    #expect(m.items.map(\.transition) == [.cut, nil])
    do {
        _ = try Manifest.parse(Array(#"{"items": [{"src": "a.jpg", "transition": "wipe"}]}"#.utf8), origin: origin)
        Issue.record("an unknown transition was taken")
    } catch {
        #expect(error.description.contains("items[0].transition") && error.description.contains("fade, slide, cut"),
                "\(error.description)")
    }
}
