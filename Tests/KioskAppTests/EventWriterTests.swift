import FoundationEssentials
import Testing
@testable import KioskApp

@Test func shownEventIsOneJSONLineWithTheFieldsInOrder() throws {
    let line = EventWriter().line(event: "shown", index: 3, source: "/photos/a \"b\".jpg", time: .milliseconds(1234))
    #expect(line == #"{"event":"shown","index":3,"src":"/photos/a \"b\".jpg","t":1234}"#)
    #expect(!line.contains("\n"))
    // A JSON parser reads it back to the same values.
    struct Event: Decodable { var event: String; var index: Int; var src: String; var t: Int }
    let e = try JSONDecoder().decode(Event.self, from: Data(line.utf8))
    #expect(e.event == "shown" && e.index == 3 && e.src == "/photos/a \"b\".jpg" && e.t == 1234)
}
