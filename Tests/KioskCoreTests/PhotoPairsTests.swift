// SPDX-License-Identifier: Apache-2.0
import KioskCore
import Testing

/// The pairing of a play sequence (`--pair-portraits`): which pictures share a frame.
@Suite struct PhotoPairsTests {
    func pair(_ shapes: [PhotoShape?], layout: PairLayout = .sideBySide,
              keep: (first: Int, second: Int)? = nil) -> (sequence: [Int], partners: [Int: Int]) {
        PhotoPairs.pair(Array(shapes.indices), layout: layout, shape: { shapes[$0] }, keep: keep)
    }

    @Test func portraitLandscapePortraitPlaysAsThePairThenTheLandscape() {
        let r = pair([.portrait, .landscape, .portrait])
        #expect(r.sequence == [0, 1])
        #expect(r.partners == [0: 2])
    }

    @Test func aPortraitWithNoPartnerWithinTheLookAheadIsAlone() {
        // Five landscapes between the two portraits: the second is 6 places on, past 4.
        let r = pair([.portrait, .landscape, .landscape, .landscape, .landscape, .landscape, .portrait])
        #expect(r.sequence == Array(0...6))
        #expect(r.partners.isEmpty)
        // Four places on is within it.
        let near = pair([.portrait, .landscape, .landscape, .landscape, .portrait])
        #expect(near.partners == [0: 4] && near.sequence == [0, 1, 2, 3])
    }

    @Test func onAPortraitScreenLandscapesPairAndPortraitsDoNot() {
        let r = pair([.landscape, .portrait, .landscape, .portrait, .square], layout: .stacked)
        #expect(r.partners == [0: 2])
        #expect(r.sequence == [0, 1, 3, 4])
    }

    @Test func unknownAndSquarePicturesAreNeverPairedAndFourPortraitsMakeTwoPairs() {
        #expect(pair([.portrait, nil, .square, .portrait, .portrait, .portrait]).partners == [0: 3, 4: 5])
        #expect(pair([nil, nil]).partners.isEmpty)
    }

    @Test func thePairOnScreenIsKeptWhenTheSequenceChanges() {
        // A new sequence puts 0 at the start and 2 at the end (a shuffle's new cycle): 0 keeps 2.
        let shapes: [PhotoShape] = [.portrait, .portrait, .portrait, .portrait]
        let r = PhotoPairs.pair([0, 1, 3, 2], layout: .sideBySide, shape: { shapes[$0] }, keep: (0, 2))
        #expect(r.partners == [0: 2, 1: 3])
        #expect(r.sequence == [0, 1])
    }

    @Test func halvesSplitOddSizesAndTapsFindTheirHalf() {
        let (a, b) = PairLayout.sideBySide.halves(width: 1921, height: 1080)
        #expect(a == PixelRect(x: 0, y: 0, width: 960, height: 1080))
        #expect(b == PixelRect(x: 960, y: 0, width: 961, height: 1080))
        let (t, u) = PairLayout.stacked.halves(width: 1080, height: 1920)
        #expect(t.height == 960 && u.y == 960 && u.height == 960)
        #expect(PairLayout(screenWidth: 1080, screenHeight: 1920) == .stacked)
        #expect(PairLayout(screenWidth: 1920, screenHeight: 1080) == .sideBySide)
        #expect(!PairLayout.sideBySide.inSecondHalf(x: 959.5, y: 0, width: 1920, height: 1080))
        #expect(PairLayout.sideBySide.inSecondHalf(x: 960, y: 0, width: 1920, height: 1080))
        #expect(PairLayout.stacked.inSecondHalf(x: 0, y: 960, width: 1080, height: 1920))
    }
}
