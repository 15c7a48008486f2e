// SPDX-License-Identifier: Apache-2.0
import Foundation
import KioskCore
import KioskImaging
import KioskText
import KioskSystem
import Testing
@testable import KioskApp

/// `--pair-portraits` end to end on virtual time: the real frame loop, the real libjpeg-turbo and
/// libpng decodes of files in Tests/Fixtures (exif-orientation: test_1.jpg is a 50x100 portrait,
/// test_6.jpg a portrait stored 100x50 with Orientation 6; libjpeg-turbo-testimages/testorig.jpg
/// a 227x149 landscape; pngsuite: cdfn2c08.png 8x32 portrait, cdhn2c08.png 32x8 landscape).
@Suite struct PairPortraitsTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path
    static let portrait = fixtures + "/exif-orientation/test_1.jpg"
    static let turnedPortrait = fixtures + "/exif-orientation/test_6.jpg"
    static let landscape = fixtures + "/libjpeg-turbo-testimages/testorig.jpg"
    static let portraitPNG = fixtures + "/pngsuite/cdfn2c08.png"
    static let landscapePNG = fixtures + "/pngsuite/cdhn2c08.png"

    func frame(_ r: SlotPreparer.Result) -> Bitmap? {
        if case .frame(let f) = r.outcome { return f } else { return nil }
    }

    /// The picture at `path` fitted alone (as the preparer fits it, `fit`, grey letterbox) into
    /// a `width` x `height` frame, with `caption` under `captions`.
    func alone(_ path: String, width: Int, height: Int, fit: FitMode = .fit, caption: String? = nil,
               captions: CaptionPainter? = nil) throws -> Bitmap {
        let preparer = try SlotPreparer(width: width, height: height, fit: fit, background: RGBColor(xrgb: 0x30_3030),
                                        maxPixels: 1 << 22, memoryCacheBytes: 0)
        preparer.captions = captions
        return try #require(frame(preparer.prepare(.init(slot: 0, ticket: 1, item: 0, path: path, caption: caption))))
    }

    /// Whether `part` equals the `rect` of `whole`, pixel for pixel; the first difference otherwise.
    func difference(_ whole: Bitmap, _ rect: PixelRect, _ part: Bitmap) -> String? {
        guard part.width == rect.width, part.height == rect.height else { return "size \(part.width)x\(part.height)" }
        for y in 0..<rect.height {
            for x in 0..<rect.width where whole[rect.x + x, rect.y + y] != part[x, y] {
                return "at \(x),\(y): \(String(whole[rect.x + x, rect.y + y], radix: 16)) "
                    + "vs \(String(part[x, y], radix: 16))"
            }
        }
        return nil
    }

    @Test func headersGiveTheUprightShapeAfterTheEXIFOrientation() throws {
        func shape(_ path: String) throws -> PhotoShape? {
            try ImageDecoder.uprightSize(path: path).map { PhotoShape(width: $0.width, height: $0.height) }
        }
        #expect(try shape(Self.portrait) == .portrait)
        #expect(try ImageDecoder.uprightSize(path: Self.turnedPortrait)! == (50, 100))  // stored 100x50
        #expect(try shape(Self.landscape) == .landscape)
        #expect(try shape(Self.portraitPNG) == .portrait)
        #expect(try shape(Self.landscapePNG) == .landscape)
        #expect(try ImageDecoder.uprightSize(path: Self.fixtures + "/animations/"
            + (FileManager.default.contentsOfDirectory(atPath: Self.fixtures + "/animations")
               .first { $0.hasSuffix(".gif") } ?? "none.gif")) == nil)
    }

    @Test func eachHalfOfAPairEqualsItsPhotoFittedAloneIntoAHalfSizedBox() throws {
        for (width, height) in [(200, 120), (201, 120)] {
            let preparer = try SlotPreparer(width: width, height: height, fit: .fit,
                                            background: RGBColor(xrgb: 0x30_3030), maxPixels: 1 << 22)
            var job = SlotPreparer.Job(slot: 0, ticket: 1, item: 0, path: Self.turnedPortrait)
            job.partner = .init(item: 2, path: Self.portraitPNG, layout: .sideBySide)
            let result = preparer.prepare(job)
            #expect(result.partner == 2)
            let pair = try #require(frame(result))
            let (left, right) = PairLayout.sideBySide.halves(width: width, height: height)
            let l = try alone(Self.turnedPortrait, width: left.width, height: height)
            let r = try alone(Self.portraitPNG, width: right.width, height: height)
            #expect(difference(pair, left, l) == nil, "\(width)x\(height) left")
            #expect(difference(pair, right, r) == nil, "\(width)x\(height) right")
            // Not the same as fitting the whole screen: a portrait in its half is the half's height.
            #expect(difference(pair, left, try alone(Self.turnedPortrait, width: width, height: height)) != nil)
            // The letterbox between them is the background.
            #expect(pair[5, 60] == 0xFF30_3030 && pair[left.width + 5, 60] == 0xFF30_3030)
        }
    }

    @Test func onAPortraitScreenTwoLandscapesAreStacked() throws {
        let preparer = try SlotPreparer(width: 120, height: 201, fit: .fill, background: .black, maxPixels: 1 << 22)
        var job = SlotPreparer.Job(slot: 0, ticket: 1, item: 0, path: Self.landscape)
        job.partner = .init(item: 1, path: Self.landscapePNG, layout: .stacked)
        let pair = try #require(frame(preparer.prepare(job)))
        let (top, bottom) = PairLayout.stacked.halves(width: 120, height: 201)
        #expect(top.height == 100 && bottom.height == 101)
        #expect(difference(pair, top, try alone(Self.landscape, width: 120, height: 100, fit: .fill)) == nil)
        #expect(difference(pair, bottom, try alone(Self.landscapePNG, width: 120, height: 101, fit: .fill)) == nil)
    }

    @Test func bothHalvesHaveTheirOwnCaption() throws {
        let captions = CaptionPainter(renderer: try TextRenderer(library: try FontLibrary()))
        let preparer = try SlotPreparer(width: 640, height: 360, fit: .fit, background: RGBColor(xrgb: 0x30_3030),
                                        maxPixels: 1 << 22)
        preparer.captions = captions
        var job = SlotPreparer.Job(slot: 0, ticket: 1, item: 0, path: Self.portrait, caption: "Left pier")
        job.partner = .init(item: 1, path: Self.turnedPortrait, caption: "Right quay", layout: .sideBySide)
        let pair = try #require(frame(preparer.prepare(job)))
        let (left, right) = PairLayout.sideBySide.halves(width: 640, height: 360)
        let l = try alone(Self.portrait, width: 320, height: 360, caption: "Left pier", captions: captions)
        let r = try alone(Self.turnedPortrait, width: 320, height: 360, caption: "Right quay", captions: captions)
        #expect(difference(pair, left, l) == nil)
        #expect(difference(pair, right, r) == nil)
        // The captions are there (white words in each half's bottom strip) and differ.
        for rect in [left, right] {
            let columns = rect.x..<rect.x + rect.width
            let words = (300..<360).contains { y in columns.contains { pair[$0, y] == 0xFFFF_FFFF } }
            #expect(words)
        }
        #expect(difference(pair, right, try alone(Self.turnedPortrait, width: 320, height: 360,
                                                  caption: "Left pier", captions: captions)) != nil)
    }

    @Test func aPartnerThatDoesNotDecodeLeavesItsFirstAlone() throws {
        let preparer = try SlotPreparer(width: 200, height: 120, fit: .fit, background: .black, maxPixels: 1 << 22)
        var job = SlotPreparer.Job(slot: 0, ticket: 1, item: 0, path: Self.portrait)
        job.partner = .init(item: 1, path: Self.fixtures + "/no-such-file.jpg", layout: .sideBySide)
        let result = preparer.prepare(job)
        #expect(result.partner == nil)
        #expect(result.warnings.contains { $0.contains("shown alone") && $0.contains("no-such-file.jpg") })
        let f = try #require(frame(result))
        let whole = try SlotPreparer(width: 200, height: 120, fit: .fit, background: .black, maxPixels: 1 << 22)
        let expected = try #require(frame(whole.prepare(.init(slot: 0, ticket: 1, item: 0, path: Self.portrait))))
        #expect(difference(f, PixelRect(x: 0, y: 0, width: 200, height: 120), expected) == nil)
    }

    /// A picture named by a path relative to the working directory (a SOURCE given as `photos`)
    /// has its shape read, as one named by an absolute path; a URL has none.
    @Test func shapesAreReadForRelativePaths() throws {
        let cwd = FileManager.default.currentDirectoryPath
        try #require(Self.portrait.hasPrefix(cwd + "/"), "the fixtures lie below the working directory")
        let relative = String(Self.portrait.dropFirst(cwd.count + 1))
        let reader = try PairShapeReader(maxPixels: 1 << 22)
        reader.ask(paths: [relative, "http://127.0.0.1:1/p.jpg"])
        reader.waitForAnswers(interrupt: -1)
        let shapes = try #require(reader.take())
        #expect(shapes[relative] != nil && shapes.count == 1, "\(shapes)")
    }

    // MARK: The show

    /// A show of `paths` with `--pair-portraits` at `width` x `height` (fit `fill`), `interval`
    /// 1 s, no fade, for `seconds`; touches of `script`.
    func show(_ paths: [String], width: Int = 200, height: Int = 120, seconds: Double,
              script: [TouchFeedEvent] = [], at: [(Duration, (FrameLoop) -> Void)] = [])
        throws -> (events: [[String: Any]], frames: [(ms: Int, bitmap: Bitmap)]) {
        let show = try VirtualShow(paths: paths, seconds: seconds)
        if !script.isEmpty { show.touch(script) }
        show.configuration.pairShapes = try PairShapeReader(maxPixels: 1 << 22)
        try show.makeLoop(width: width, height: height, interval: .seconds(1))
        for (time, action) in at { show.at(time, action) }
        let events = try show.run()
        return (events, try show.frames())
    }

    func shown(_ events: [[String: Any]]) -> [String] {
        events.filter { $0["event"] as? String == "shown" }.map { "\($0["index"]!)@\(eventTime($0))" }
    }

    @Test func portraitLandscapePortraitPlaysAsThePairThenTheLandscapeEachForOneInterval() throws {
        let run = try show([Self.portrait, Self.landscape, Self.turnedPortrait], seconds: 3.5)
        // The pair (0 with 2) for its interval, the landscape for its own, the pair again.
        #expect(shown(run.events) == ["0@0", "2@0", "1@1000", "0@2000", "2@2000", "1@3000"])
        // The first frame: each half is its photo fitted (fill) alone into a 100x120 box.
        let first = try #require(run.frames.first { $0.ms == 0 }?.bitmap)
        let (left, right) = PairLayout.sideBySide.halves(width: 200, height: 120)
        #expect(difference(first, left, try alone(Self.portrait, width: 100, height: 120, fit: .fill)) == nil)
        #expect(difference(first, right, try alone(Self.turnedPortrait, width: 100, height: 120, fit: .fill)) == nil)
        let second = try #require(run.frames.first { $0.ms == 1000 }?.bitmap)
        #expect(difference(second, PixelRect(x: 0, y: 0, width: 200, height: 120),
                           try alone(Self.landscape, width: 200, height: 120, fit: .fill)) == nil)
    }

    @Test func aLonePortraitWithNoPartnerInTheLookAheadIsShownAlone() throws {
        let paths = [Self.portrait] + Array(repeating: Self.landscape, count: 5) + [Self.portraitPNG]
        let run = try show(paths, seconds: 0.5)
        #expect(shown(run.events) == ["0@0"])
        let first = try #require(run.frames.first { $0.ms == 0 }?.bitmap)
        #expect(difference(first, PixelRect(x: 0, y: 0, width: 200, height: 120),
                           try alone(Self.portrait, width: 200, height: 120, fit: .fill)) == nil)
    }

    @Test func onAPortraitScreenTwoLandscapesShareTheFrameStacked() throws {
        let run = try show([Self.landscape, Self.portrait, Self.landscapePNG], width: 120, height: 200, seconds: 1.5)
        #expect(shown(run.events) == ["0@0", "2@0", "1@1000"])
        let first = try #require(run.frames.first { $0.ms == 0 }?.bitmap)
        let (top, bottom) = PairLayout.stacked.halves(width: 120, height: 200)
        #expect(difference(first, top, try alone(Self.landscape, width: 120, height: 100, fit: .fill)) == nil)
        #expect(difference(first, bottom, try alone(Self.landscapePNG, width: 120, height: 100, fit: .fill)) == nil)
    }

    @Test func aTapReportsThePhotoOfTheHalfItHit() throws {
        let script: [TouchFeedEvent] = [
            .sample(TouchSample(.down, x: 40, y: 60, time: ms(300))),
            .sample(TouchSample(.up, x: 41, y: 60, time: ms(350))),
            .sample(TouchSample(.down, x: 150, y: 60, time: ms(600))),
            .sample(TouchSample(.up, x: 151, y: 61, time: ms(650))),
        ]
        let run = try show([Self.portrait, Self.landscape, Self.portraitPNG], seconds: 0.9, script: script)
        let taps = run.events.filter { $0["event"] as? String == "tap" }
        #expect(taps.map { $0["index"] as? Int } == [0, 2])
        #expect(taps.map { $0["half"] as? String } == ["left", "right"])
        #expect((taps.last?["src"] as? String)?.hasSuffix("cdfn2c08.png") == true)
    }

    @Test func statusNamesThePartnerAndGotoThePartnerShowsItsPair() throws {
        var status: [String: JSONValue] = [:]
        var gotoAnswer: String?
        let run = try show([Self.portrait, Self.landscape, Self.portraitPNG], seconds: 1.8, at: [
            (ms(1500), { loop in
                switch loop.perform(.goto(2)) {
                case .success: gotoAnswer = "done"
                case .failure(let f): gotoAnswer = f.message
                }
            }),
            (ms(1700), { loop in
                if case .object(let s) = loop.statusData(at: ms(1700)) { status = s }
            }),
        ])
        // 1 @1000, then goto 2 (the partner) shows the pair under its first's index.
        #expect(gotoAnswer == "done")
        #expect(shown(run.events) == ["0@0", "2@0", "1@1000", "0@1500", "2@1500"])
        #expect(status["index"] == .int(0) && status["partner_index"] == .int(2))
    }
    /// Counted as photos: `status`'s `active` counts a pair's two photos (three photos, one
    /// pair: 3), and a show of two portraits that pair says so when `next` has nowhere to go.
    @Test func aPairCountsAsItsTwoPhotos() throws {
        var status: [String: JSONValue] = [:]
        _ = try show([Self.portrait, Self.landscape, Self.portraitPNG], seconds: 0.5, at: [
            (ms(300), { loop in if case .object(let s) = loop.statusData(at: ms(300)) { status = s } }),
        ])
        #expect(status["active"] == .int(3) && status["partner_index"] == .int(2), "\(status)")
        var answer: String?
        var twoStatus: [String: JSONValue] = [:]
        let run = try show([Self.portrait, Self.portraitPNG], seconds: 0.5, at: [
            (ms(300), { loop in
                if case .failure(let f) = loop.perform(.next) { answer = f.message }
                if case .object(let s) = loop.statusData(at: ms(300)) { twoStatus = s }
            }),
        ])
        #expect(shown(run.events) == ["0@0", "1@0"])
        #expect(twoStatus["active"] == .int(2), "\(twoStatus)")
        #expect(answer == "next: nothing to move to: the show has one pair of photos (2 items in the playlist)",
                "\(answer ?? "nil")")
    }
    @Test func aShuffleRoundPairsAlongItsOrderAndShowsEveryPhotoOnce() throws {
        // Four portraits (EXIF orientations 1, 2, 5 and 6) and two landscapes, each its own file.
        let names = ["exif-orientation/test_1.jpg", "exif-orientation/test_2.jpg", "exif-orientation/test_5.jpg",
                     "exif-orientation/test_6.jpg", "libjpeg-turbo-testimages/testorig.jpg",
                     "libjpeg-turbo-testimages/testimgari.jpg"]
        let show = try VirtualShow(paths: names.map { Self.fixtures + "/" + $0 }, seconds: 12.5)
        show.configuration.pairShapes = try PairShapeReader(maxPixels: 1 << 22)
        show.configuration.order = try PlayOrder(order: .shuffle, recentDays: nil, stateDirectory: nil, seed: 7)
        try show.makeLoop(width: 200, height: 120, interval: .seconds(1))
        let events = try show.run().filter { $0["event"] as? String == "shown" }
        var byTime: [Int: [Int]] = [:]
        for e in events { byTime[eventTime(e), default: []].append(e["index"] as! Int) }
        let groups = byTime.keys.sorted().map { byTime[$0]! }
        // Each place on screen is one photo or a pair of portraits, a second apart.
        #expect(byTime.keys.sorted() == Array(0...12).map { $0 * 1000 })
        #expect(groups.allSatisfy { $0.count == 1 || ($0.count == 2 && $0.allSatisfy { $0 < 4 }) }, "\(groups)")
        #expect(groups.contains { $0.count == 2 }, "\(groups)")
        // The first round: every photo once before any comes again.
        var seen: [Int] = []
        for index in groups.joined() {
            if seen.count == 6 { break }
            #expect(!seen.contains(index), "\(groups)")
            seen.append(index)
        }
        #expect(Set(seen) == Set(0..<6), "\(groups)")
    }
    /// Five portraits in shuffle rounds: a pair never takes its partner from past the round's
    /// end (the shuffle hands the carousel a cycle that runs on into the places already shown,
    /// and a pair there showed a photo twice in a round). Cut into rounds of five, every round
    /// shows each photo once.
    @Test(arguments: [7, 11, 23] as [UInt64])
    func aShuffledPairNeverReachesPastTheRoundsEnd(seed: UInt64) throws {
        let names = (1...5).map { "exif-orientation/test_\($0).jpg" }
        let show = try VirtualShow(paths: names.map { Self.fixtures + "/" + $0 }, seconds: 30.5)
        show.configuration.pairShapes = try PairShapeReader(maxPixels: 1 << 22)
        show.configuration.order = try PlayOrder(order: .shuffle, recentDays: nil, stateDirectory: nil, seed: seed)
        try show.makeLoop(width: 200, height: 120, interval: .seconds(1))
        let events = try show.run().filter { $0["event"] as? String == "shown" }
        let shownInOrder = events.map { $0["index"] as! Int }
        #expect(Set(events.map(eventTime)).count < shownInOrder.count, "no pair was shown: \(shownInOrder)")
        let rounds = stride(from: 0, to: shownInOrder.count - 4, by: 5).map { Array(shownInOrder[$0..<($0 + 5)]) }
        #expect(rounds.count >= 4, "\(shownInOrder)")
        for round in rounds { #expect(Set(round) == Set(0..<5), "\(rounds)") }
    }
    /// Three portraits in a shuffle: each round is a pair and a photo alone, and the show goes
    /// on at every interval to the end. On virtual time the show stood still after a round or
    /// two: the round's end paired the three again and asked for a slot's frame after the
    /// turn's last look at the decodes, and the clock jumped to the end of `--run-for`.
    @Test(arguments: [1, 2, 3, 7, 11, 23] as [UInt64])
    func threePortraitsInAShuffleKeepAdvancing(seed: UInt64) throws {
        let names = (1...3).map { "exif-orientation/test_\($0).jpg" }
        let show = try VirtualShow(paths: names.map { Self.fixtures + "/" + $0 }, seconds: 30.5)
        show.configuration.pairShapes = try PairShapeReader(maxPixels: 1 << 22)
        show.configuration.order = try PlayOrder(order: .shuffle, recentDays: nil, stateDirectory: nil, seed: seed)
        try show.makeLoop(width: 200, height: 120, interval: .seconds(1))
        let events = try show.run().filter { $0["event"] as? String == "shown" }
        let times = Set(events.map(eventTime)).sorted()
        #expect(times.count >= 28, "\(times.count) screens: \(times)")
        #expect((times.last ?? 0) >= 29000, "the last screen at \(times.last ?? 0) ms")
        let shownInOrder = events.map { $0["index"] as! Int }
        let rounds = stride(from: 0, to: shownInOrder.count - 2, by: 3).map { Array(shownInOrder[$0..<($0 + 3)]) }
        for round in rounds { #expect(Set(round) == Set(0..<3), "\(rounds)") }
    }
    /// `previous` in a shuffle steps back through the pairs as they were shown: the screen before
    /// comes back whole (its first and its partner), then `next` goes on to the first shown after
    /// it (its partner is paired again along the sequence: it may be another). A partner's
    /// `shown` went into the history as a step of its own, and `next` went elsewhere.
    @Test(arguments: [7, 11] as [UInt64])
    func previousInAShuffleStepsBackThroughThePairs(seed: UInt64) throws {
        let names = (1...5).map { "exif-orientation/test_\($0).jpg" } + ["libjpeg-turbo-testimages/testorig.jpg"]
        let show = try VirtualShow(paths: names.map { Self.fixtures + "/" + $0 }, seconds: 4.5)
        show.configuration.pairShapes = try PairShapeReader(maxPixels: 1 << 22)
        show.configuration.order = try PlayOrder(order: .shuffle, recentDays: nil, stateDirectory: nil, seed: seed)
        try show.makeLoop(width: 200, height: 120, interval: .seconds(1))
        var answers: [String] = []
        for t in [2200, 3200] {
            show.at(ms(t)) { loop in
                let command: ControlCommand = t == 2200 ? .previous : .next
                switch loop.perform(command) {
                case .success: answers.append("ok")
                case .failure(let f): answers.append(f.message)
                }
            }
        }
        let events = try show.run().filter { $0["event"] as? String == "shown" }
        var byTime: [Int: [Int]] = [:]
        for e in events { byTime[eventTime(e), default: []].append(e["index"] as! Int) }
        let times = byTime.keys.sorted()
        let groups = times.map { byTime[$0]! }
        #expect(answers == ["ok", "ok"])
        // 0, 1000, 2000 by the clock; previous at 2200 shows again what 1000 showed (its fade
        // lands at 2200 + fade); next at 3200 goes on to what 2000 showed.
        #expect(times.count >= 5 && times[0...2] == [0, 1000, 2000], "\(times) \(groups)")
        guard times.count >= 5 else { return }
        #expect(groups.contains { $0.count == 2 }, "no pair in \(groups)")
        #expect(groups[3] == groups[1], "previous: \(groups)")
        #expect(groups[4].first == groups[2].first, "next after previous: \(groups)")
    }
    @Test func theOptionAndTheConfigurationKeyTurnPairsOn() throws {
        #expect(try CommandLineParser.parse(["/photos"]).pairPortraits == false)
        #expect(try CommandLineParser.parse(["--pair-portraits", "/photos"]).pairPortraits)
        let path = NSTemporaryDirectory() + "kc-pairs-\(getpid()).conf"
        defer { unlink(path) }
        try "pair-portraits\nsource /photos\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try CommandLineParser.parse(["--config", path]).pairPortraits)
    }
}
