// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskContent
import KioskCore
import Testing

@Test func itemsCarryTheirCaptions() throws {
    let origin = ManifestOrigin.remote(URL(string: "http://kiosk.example/show.json")!)
    let m = try Manifest.parse(Array("""
        {"items": [{"src": "a.jpg", "caption": "Evening glow — 港口 — مرحبا"}, {"src": "b.jpg"}]}
        """.utf8), origin: origin)
    #expect(m.items.map(\.caption) == ["Evening glow — 港口 — مرحبا", nil])
    #expect(throws: ContentError.self) {
        try Manifest.parse(Array(#"{"items": [{"src": "a.jpg", "caption": 7}]}"#.utf8), origin: origin)
    }
}
