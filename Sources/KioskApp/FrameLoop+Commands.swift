// SPDX-License-Identifier: Apache-2.0
import Glibc
import KioskContent
import KioskCore
import KioskDisplay
import KioskSystem

// What the show does when asked (the control socket's commands, docs/control-socket.md) and
// what it says of its policy (ShowPolicy's notes, docs/events-and-logs.md): where the
// carousel, the policy and the display supervision meet, so they live with the loop.

extension FrameLoop {
    /// One control command, now. `data` is nil for commands that only act. `origin` names who
    /// asked in the log lines the command causes: `control socket` or `MQTT`.
    func perform(_ command: ControlCommand,
                 from origin: String = "control socket") -> Result<JSONValue?, ControlFailure> {
        let now = clock.now
        func fail(_ message: String) -> Result<JSONValue?, ControlFailure> {
            .failure(ControlFailure(id: nil, message: message))
        }
        let held = "a finger is on the screen: the person at the screen wins, try again when it is lifted"
        switch command {
        case .next, .previous:
            guard !carousel.isHeld else { return fail(held) }
            guard carousel.canMoveNow else {
                // Said rather than answered with a success that does nothing.
                let count = carousel.activeCount, photos = policy.photosInShow(carousel)
                let what = count == 0 ? "no image" : photos == 2 ? "one pair of photos" : "one image"
                return fail("\(command == .next ? "next" : "previous"): nothing to move to: the show has "
                            + what + " (\(counted(policy.playlist.count, "item")) in the playlist)")
            }
            handle(carousel.move(command == .next ? .forward : .backward, at: now))
            return .success(nil)
        case .pause:
            supervisor.pauseAsked(carousel: &carousel)
            return .success(nil)
        case .resume:
            supervisor.resumeAsked(carousel: &carousel)
            return .success(nil)
        case .goto(var index):
            let count = policy.playlist.count
            guard (0..<count).contains(index) else {
                let has = count == 0 ? "the playlist is empty"
                    : "the playlist has \(counted(count, "item")) (0...\(count - 1))"
                return fail("goto: bad index \(index): " + has)
            }
            guard !carousel.isHeld else { return fail(held) }
            guard policy.inRotation(index) else {  // docs/schedules.md
                let source = Log.hidingPasswords(policy.playlist[index].source)
                return fail("goto: item \(index) (\(source)) is not in the rotation now"
                            + " (its schedule, or a fallback item while others are on)")
            }
            // The partner of a pair is shown with its first, under the first's index.
            if let first = policy.first(ofPartner: index) { index = first }
            guard carousel.isInShow(item: index) else {
                // An item that failed (a download, a decode) left the show until its retry.
                let source = index < carousel.items.count
                    ? " (\(Log.hidingPasswords(carousel.items[index].source)))" : ""
                return fail("goto: item \(index)\(source) is not in the show: it could not be loaded;"
                            + " tried again every \(policy.retryInterval.wholeMilliseconds / 1000) s and on SIGHUP")
            }
            handle(carousel.goto(item: index, at: now))
            return .success(nil)
        case .status:
            return .success(statusData(at: now))
        case .display(let on):
            setDisplayPower(on: on, reason: origin)
            return .success(nil)
        case .screenshot:
            return fail("screenshot: written off the loop (ControlPort), not here")
        case .brightness(let percent):  // DisplaySupervisor+Power.swift
            apply(supervisor.setBrightness(percent: percent, origin: origin))
            return .success(nil)
        case .presenceTimeout(let seconds):
            apply(supervisor.setPresenceTimeout(seconds: seconds, origin: origin))
            return .success(nil)
        }
    }

    /// Switches the screen off or on by hand (`display on|off`; see
    /// ``DisplaySupervisor/setPower(on:reason:carousel:)``).
    public func setDisplayPower(on: Bool, reason: String) {
        apply(supervisor.setPower(on: on, reason: reason, carousel: &carousel))
    }

    /// `status`: what is on screen and how the show stands.
    func statusData(at now: Duration) -> JSONValue {
        var fields: [String: JSONValue] = [
            "index": .null, "src": .null,
            "paused": .bool(carousel.isPaused),
            "playlist_length": .int(Int64(policy.playlist.count)),
            "active": .int(Int64(policy.photosInShow(carousel))),
            "touch_held": .bool(carousel.isHeld),
            "display": .string(supervisor.powerOn ? "on" : "off"),
            "interval_ms": .int(carousel.config.interval.wholeMilliseconds),
            "frames": .int(Int64(frames.framesPresented)),
            "t": .int(now.wholeMilliseconds),
            "version": .string(KioskVersion.string),
            "width": .int(Int64(frames.width)), "height": .int(Int64(frames.height)),
        ]
        if let item = carousel.currentItem {
            fields["index"] = .int(Int64(item))
            fields["src"] = .string(Log.hidingPasswords(carousel.items[item].source))
            if let p = partnerOnScreen(of: item), p.item < carousel.items.count {  // a pair (--pair-portraits)
                fields["partner_index"] = .int(Int64(p.item))
                fields["partner_src"] = .string(Log.hidingPasswords(carousel.items[p.item].source))
            }
        }
        // Why on or off, presence, brightness, CEC (DisplaySupervisor+Power.swift).
        fields.merge(supervisor.powerStatus(at: now)) { $1 }
        if let outputs = statusOutputs() { fields["outputs"] = outputs }
        return .object(fields)
    }

    /// `status`'s `outputs` with a display of several (docs/displays.md "Several outputs"): each
    /// output's name, logical size and whether it shows now; nil with one output.
    func statusOutputs() -> JSONValue? {
        guard let set = display as? MirroredDisplay, set.outputs.count > 1 else { return nil }
        return .array(set.outputs.map { output in
            .object(["name": .string(MirroredDisplay.name(of: output)), "width": .int(Int64(output.width)),
                     "height": .int(Int64(output.height)), "showing": .bool(!MirroredDisplay.lost(output))])
        })
    }

    /// One of the policy's notes: its log line, or the empty screen's words.
    func take(_ note: ShowPolicy.Note) {
        let retry = "tried again every \(policy.retryInterval.wholeMilliseconds / 1000) s"
        switch note {
        case .rotationChanged(let showing, let of, let fallbackOnly):
            Log.info("rotation changed", detail: "\(showing) of \(counted(of, "item")) by their schedules"
                     + (fallbackOnly ? " (the fallback items: nothing else is scheduled now)" : ""))
        case .nothingScheduled(let of):
            Log.info("nothing scheduled",
                     detail: "no item of \(of) is in its schedule now and none is a fallback; the empty screen shows")
        case .fallbackStandingIn(let scheduled, let standby):
            let which = scheduled == 1 ? "the one scheduled item cannot be shown; "
                                       : "none of the \(scheduled) scheduled items can be shown; "
            Log.info("fallback standing in", detail: which + "\(counted(standby, "fallback item"))"
                     + " \(standby == 1 ? "stands" : "stand") in until a scheduled one loads")
        case .fallbackFailedToo(let scheduled, let standby):
            let which = scheduled == 1 ? "the one scheduled item cannot be shown"
                : "none of the \(scheduled) scheduled items can be shown"
            let fallback = standby == 1 ? "the fallback item" : "any of the \(standby) fallback items"
            Log.warning("fallback failed too", reason: which + ", nor " + fallback
                        + "; the screen says none could be shown until one loads (\(retry))")
        case .fallbackStoodDown:
            Log.info("rotation changed", detail: "a scheduled item loaded: the fallback items stand down")
        case .roundDone(let shown, let items, let inRotation, let failed):
            let total = counted(items, "item") + (inRotation ? " in the rotation" : "")
            Log.info("playlist round done", detail: "\(shown) of \(total) shown"
                     + (failed == 0 ? "" : ", \(failed) could not be loaded (\(retry))"))
        case .imageSkipped(let source, let reason, let unavailable):
            Log.warning("image skipped", path: source, reason: unavailable ? reason + "; \(retry)" : reason)
        case .imageBack(let source):
            Log.info("image back in the show", path: source)
        case .emptyScreen(let screen):
            switch screen {
            case .noneShown: frames.setNoImagesMessage(SceneRenderer.noneShownText)
            case .nothingScheduled: frames.setNoImagesMessage(SceneRenderer.nothingScheduledText)
            case .emptyPlaylist: frames.setNoImagesMessage(emptyPlaylistText)
            }
        }
    }

    /// The empty screen's words for a SOURCE that cannot be had: not found (ENOENT), not readable
    /// for a permission (EACCES, EPERM), a symbolic link loop (ELOOP), else not readable with
    /// `stat`'s reason; the path, and the errno's words unless plain ENOENT.
    public static func missingSourceText(_ missing: ContentService.MissingSource) -> String {
        let what = missing.isImageFile ? "Image file" : "Folder"
        let heading: String?
        switch missing.errno {
        case ENOENT: heading = nil
        case EACCES, EPERM: heading = what + " not readable: permission denied"
        case ELOOP: heading = what + " path is a symbolic link loop"
        default: heading = what + " not readable"
        }
        let reason = missing.errno == ENOENT ? nil : SystemError.reason(errno: missing.errno)
        return SceneRenderer.missingSourceText(path: missing.path, folder: !missing.isImageFile, reason: reason,
                                               heading: heading)
    }

    /// The empty screen's words for an empty playlist: a SOURCE that does not exist (named, with
    /// `stat`'s reason unless it is plain ENOENT), else a manifest never had, else no images.
    private var emptyPlaylistText: String {
        if let missing = content?.missingSources.first { return Self.missingSourceText(missing) }
        return content?.waitingForManifest == true ? SceneRenderer.waitingForManifestText : SceneRenderer.noImagesText
    }
}
