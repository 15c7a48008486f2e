// SPDX-License-Identifier: Apache-2.0
import KioskCore
import KioskSystem

// The frame loop's side of the control socket (docs/control-socket.md) and of systemd's
// READY/STATUS (``SystemdNotifier``). Called from a few one-line hooks in FrameLoop.swift.

extension FrameLoop {
    /// Carries out the requests the control socket received (beside the signals, step 1 of
    /// the loop) and hands the replies back. Never blocks.
    func performControlRequests() {
        guard let control else { return }
        var requests = takeScreenshotsDone() + control.requests.take()  // FrameLoop+Screenshot.swift
        while !requests.isEmpty {
            let request = requests.removeFirst()
            if holdBehindScreenshot(request) { continue }
            switch request.parsed {
            case .success(.screenshot(let path)): startScreenshot(request, path: path)
            case .success(let command): control.answer(request, perform(command))
            case .failure(let failure): control.answer(request, .failure(failure))
            }
        }
    }

    /// One control command, now. `data` is nil for commands that only act.
    func perform(_ command: ControlCommand) -> Result<JSONValue?, ControlFailure> {
        let now = clock.now
        func fail(_ message: String) -> Result<JSONValue?, ControlFailure> { .failure(ControlFailure(id: nil, message: message)) }
        let held = "a finger is on the screen: the person at the screen wins, try again when it is lifted"
        switch command {
        case .next, .previous:
            guard !carousel.isHeld else { return fail(held) }
            handleControlActions(carousel.move(command == .next ? .forward : .backward, at: now))
            return .success(nil)
        case .pause:
            carousel.pause(at: now)
            // While the screen is off the show is paused anyway: this pause is what it comes
            // back to when the screen is on again.
            if !displayControl.powerOn { displayControl.wasPaused = true }
            return .success(nil)
        case .resume:
            // While the screen is off the show stays paused (nothing would be seen of it); it
            // resumes when the screen is on again.
            if !displayControl.powerOn { displayControl.wasPaused = false } else { carousel.resume(at: now) }
            return .success(nil)
        case .goto(let index):
            let count = controlPlaylistCount
            guard (0..<count).contains(index) else {
                return fail(count == 0 ? "goto: bad index \(index): the playlist is empty"
                                       : "goto: bad index \(index): the playlist has \(counted(count, "item")) (0...\(count - 1))")
            }
            guard !carousel.isHeld else { return fail(held) }
            if let rotation, !rotation.contains(index) {  // docs/schedules.md
                return fail("goto: item \(index) (\(Log.hidingPasswords(playlist[index].source))) is not in the rotation now (its schedule, or a fallback item while others are on)")
            }
            guard carousel.isInShow(item: index) else {
                // An item that failed (a download, a decode) left the show until its retry.
                let source = index < carousel.items.count ? " (\(Log.hidingPasswords(carousel.items[index].source)))" : ""
                return fail("goto: item \(index)\(source) is not in the show: it could not be loaded;"
                            + " tried again every \(retryInterval.wholeMilliseconds / 1000) s and on SIGHUP")
            }
            handleControlActions(carousel.goto(item: index, at: now))
            return .success(nil)
        case .status:
            return .success(statusData(at: now))
        case .display(let on):
            setDisplayPower(on: on, reason: "control socket")
            return .success(nil)
        case .screenshot:
            return fail("screenshot: written off the loop (startScreenshot), not here")
        case .brightness, .presenceTimeout:
            return performPowerCommand(command)  // FrameLoop+Power.swift
        }
    }

    /// `status`: what is on screen and how the show stands.
    func statusData(at now: Duration) -> JSONValue {
        var fields: [String: JSONValue] = [
            "index": .null, "src": .null,
            "paused": .bool(carousel.isPaused),
            "playlist_length": .int(Int64(controlPlaylistCount)),
            "active": .int(Int64(carousel.activeCount)),
            "touch_held": .bool(carousel.isHeld),
            "display": .string(isDisplayPowerOn ? "on" : "off"),
            "interval_ms": .int(carousel.config.interval.wholeMilliseconds),
            "frames": .int(Int64(framesPresented)),
            "t": .int(now.wholeMilliseconds),
            "version": .string(KioskVersion.string),
            "width": .int(Int64(renderer.width)), "height": .int(Int64(renderer.height)),
        ]
        if let item = carousel.currentItem {
            fields["index"] = .int(Int64(item))
            fields["src"] = .string(Log.hidingPasswords(carousel.items[item].source))
        }
        fields.merge(powerStatus(at: now)) { $1 }  // why on or off, presence, brightness, CEC (FrameLoop+Power.swift)
        return .object(fields)
    }

    /// An event line just written to stdout goes to the control socket's clients too; a `shown`
    /// image becomes systemd's STATUS line.
    func publishEvent(_ event: String, index: Int, source: String, time: Duration, point: (x: Int, y: Int)? = nil) {
        let line = events.line(event: event, index: index, source: source, time: time, point: point)
        control?.publish(eventLine: line)
        forwardToMQTT(eventLine: line)  // MQTTBridge.swift
        if event == "shown", let notifier {
            notifier.status("showing \(index + 1) of \(controlPlaylistCount): \(Log.hidingPasswords(source))")
        }
    }

    /// READY=1 once the screen shows what the show is about, so that the unit becomes active
    /// with its first photo on screen (docs/deployment.md): the first presented frame
    /// with no placeholder in it, the frame of the first `shown` event (`scene` nil: a `shown`
    /// event is being written); or, when there is nothing to show, the screen that says so (no
    /// images, or "Loading..." while the first manifest is awaited with nothing stored), since
    /// that may last. A placeholder for an image still being decoded or downloaded waits.
    func readyIfShowing(_ scene: Scene?, loading: Bool) {
        guard let notifier, !notifier.readySent else { return }
        let count = controlPlaylistCount
        if let scene {
            let layers = [scene.base, scene.overlay, scene.offset != 0 ? scene.neighbour : nil].compactMap { $0 }
            if loading {
                notifier.ready(status: "waiting for the manifest on \(display.summary); nothing stored yet")
                return
            }
            if layers.contains(.placeholder) { return }
            if scene.base == .noImages {
                notifier.ready(status: "no images to show on \(display.summary)")
                return
            }
        }
        notifier.ready(status: "first photo on \(display.summary); playlist of \(counted(count, "item"))")
    }

    /// The loop runs but must not draw (started inside a `--display-off` period, or on a VT that
    /// is switched away): READY=1 all the same, or systemd would kill a healthy show at its start
    /// timeout and restart it all night.
    func readyWithoutFrame() {
        guard let notifier, !notifier.readySent else { return }
        notifier.ready(status: "running with the screen \(isDisplayPowerOn ? "released (VT switched away)" : "off"); nothing drawn yet")
    }
}
