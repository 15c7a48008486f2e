// SPDX-License-Identifier: Apache-2.0
import KioskInput

/// The frame loop's ``TouchFeed`` from the evdev reader (``TouchInput``, its own thread).
final class EvdevTouchFeed: TouchFeed {
    let input: TouchInput
    init(_ input: TouchInput) { self.input = input }

    var wakeDescriptor: Int32 { input.events.wakeDescriptor }

    func setPanelSize(width: Int, height: Int) { input.setPanelSize(width: width, height: height) }

    func take() -> [TouchFeedEvent] {
        input.events.take().map { event in
            switch event {
            case .sample(let s): return .sample(s)
            case .attached(let info):
                return .attached(name: info.name, path: info.path, pixelsPerMillimetre: info.pixelsPerMillimetre,
                                 detail: "\(info.touchProtocol), x \(info.xAxis), y \(info.yAxis)"
                                     + (info.grabbed ? "" : ", not grabbed: the console sees touches too"))
            case .lost(let path, let reason): return .lost(path: path, reason: reason)
            case .problem(let p):
                return input.configuration.devicePath == nil ? .note(p.what, path: p.path, reason: p.reason)
                    : .warning(p.what, path: p.path, reason: p.reason)
            case .remapped(let ppmm): return .remapped(pixelsPerMillimetre: ppmm)
            }
        }
    }
}
