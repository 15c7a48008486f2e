// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import KioskContent
import KioskCore
import Testing

/// The manifest's `order` (docs/manifest.md): one of `--order`'s values, anything else refused
/// with its place.
@Test func theManifestMaySetTheOrder() throws {
    let origin = ManifestOrigin.remote(URL(string: "https://signs.example/show.json")!)
    for order in PlaylistOrder.allCases {
        let body = Array(#"{"order":"\#(order.rawValue)","items":[{"src":"a.jpg"}]}"#.utf8)
        #expect(try Manifest.parse(body, origin: origin).order == order)
    }
    #expect(try Manifest.parse(Array(#"{"items":[{"src":"a.jpg"}]}"#.utf8), origin: origin).order == nil)
    do {
        _ = try Manifest.parse(Array(#"{"order":"random","items":[{"src":"a.jpg"}]}"#.utf8), origin: origin)
        Issue.record("an unknown order was accepted")
    } catch {
        #expect(error.description.contains("order") && error.description.contains("\"random\""), "\(error)")
    }
}
