// SPDX-License-Identifier: Apache-2.0
import Dispatch
import KioskContent
import KioskCore
import KioskImaging
import KioskSystem

/// `--pair-portraits`: the shapes of the playlist's local pictures, read off the frame loop on a
/// utility queue (``ImageDecoder/uprightSize(path:options:)``: the header only, the EXIF
/// orientation applied), once per file version (path, size, mtime). A picture that cannot be
/// read, a download (an http(s) source) or a format whose size is not read this way has no
/// shape: it is never paired (docs/carousel.md "Pairs"). Owned by the frame loop's thread.
final class PairShapeReader: OffLoopWork {
    /// An answer: the shape of each path asked whose shape is known.
    struct Answer: Sendable {
        var question: Int
        var shapes: [String: PhotoShape]
    }

    /// The answers, readable when one is in.
    let answers: Mailbox<Answer>
    /// Questions asked and not taken yet (loop thread).
    private(set) var outstanding = 0
    private var questions = 0
    private let queue = DispatchQueue(label: "kiosk-carousel pair shapes", qos: .utility)
    /// The shapes by path with the file version they were read from (touched on `queue` only).
    private nonisolated(unsafe) var known: [String: (version: FileIdentity, shape: PhotoShape?)] = [:]
    /// The side and pixel limits the headers are checked against (`--max-pixels`).
    let options: DecodeOptions

    /// Throws ``SystemError`` when the answers' mailbox cannot be made (pipe2(2) fails).
    init(maxPixels: Int) throws(SystemError) {
        answers = try Mailbox()
        options = DecodeOptions(maxPixels: maxPixels)
    }

    /// Asks for the shapes of the local pictures among `paths`; returns the question's number.
    @discardableResult
    func ask(paths: [String]) -> Int {
        questions += 1
        outstanding += 1
        let question = questions
        // Every local file, by an absolute or a relative path (a SOURCE given as `photos`); no URL.
        let local = paths.filter { !ManifestItem.isRemote($0) }
        queue.async { [self] in
            var shapes: [String: PhotoShape] = [:]
            for path in local {
                guard let info = try? fileStatus(path) else { continue }
                let version = FileIdentity(info)
                let shape: PhotoShape?
                if let k = known[path], k.version == version {
                    shape = k.shape
                } else {
                    shape = (try? ImageDecoder.uprightSize(path: path, options: options))
                        .flatMap { $0 }.map { PhotoShape(width: $0.width, height: $0.height) }
                    known[path] = (version, shape)
                }
                if let shape { shapes[path] = shape }
            }
            answers.post(Answer(question: question, shapes: shapes))
        }
        return question
    }

    /// The answers in, merged (a later answer's shape wins), if any.
    func take() -> [String: PhotoShape]? {
        let taken = answers.take()
        outstanding -= taken.count
        guard !taken.isEmpty else { return nil }
        var merged: [String: PhotoShape] = [:]
        for answer in taken { merged.merge(answer.shapes) { $1 } }
        return merged
    }

    func waitForAnswers(interrupt: Int32) {
        while outstanding > 0 && answers.count == 0 {
            if answers.waitForValues(timeout: .seconds(1), interrupt: interrupt) != .timedOut { break }
        }
    }
}
